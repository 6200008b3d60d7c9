#!/usr/bin/env python3
"""Writes tests/fixtures/babilong/: synthetic BABILong data in the layout of the Hugging Face dataset
RMT-team/babilong-1k-samples as the hub cache holds it (hub/datasets--RMT-team--babilong-1k-samples/
snapshots/{commit}/{length}/{qaN}-00000-of-00001.parquet, columns input, question, target), and
golden.json, made by lm-evaluation-harness 0.4.13 itself on that data:

  requests  for each length, task and document: the generate_until request lm-eval builds
            (Instance.arguments: the context string and the generation kwargs), loading the task
            with TaskManager(metadata={"max_seq_lengths": length}) as `lm_eval --metadata` does;
            datasets.load_dataset is pointed at the fixture's parquet files (no network)
  scores    process_results(doc, [prediction])["acc"] of common_utils.py for given predictions

The documents are made up here (no BABILong text), and stress what the prompt and the score must
get right: whitespace to strip (Unicode spaces, newlines), control characters, case folding beyond
ASCII (Python's str.lower), quotes and backslashes.

Usage: /opt/babilong-venv/bin/python tests/tools/babilong_golden.py   (see make_babilong_tasks.py)
"""
import json
import os
import random

import datasets
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "babilong")
COMMIT = "fedcba9876543210fedcba9876543210fedcba98"
SNAP = os.path.join(OUT, "hub", "datasets--RMT-team--babilong-1k-samples", "snapshots", COMMIT)
LAYOUT = {"0k": [f"qa{i}" for i in range(1, 21)], "2k": [f"qa{i}" for i in range(1, 6)]}

NAMES = ["Mary", "John", "Daniel", "Sandra", "Zo\u00eb", "\u0130lker"]
PLACES = ["garden", "kitchen", "hallway", "bathroom", "caf\u00e9", "office"]
FILLER = ["The sky was grey.", "He said \"hello\" twice.", "A back\\slash \u00e9t\u00e9 here.", "\u65e5\u672c.",
          "Nothing happened\u2003at all.", "\tTabs\tand  spaces. "]
EDGES = ["", " ", "\n", "  \n", "\u00a0", "\u2003\n", "\r\n", "\x0b"]


def doc(rng, length, i):
    n = 4 if length == "0k" else 30
    parts = []
    for _ in range(n):
        if rng.random() < 0.5:
            parts.append(f"{rng.choice(NAMES)} went to the {rng.choice(PLACES)}.")
        else:
            parts.append(rng.choice(FILLER))
    sep = rng.choice([" ", "\n", "  "])
    who, where = rng.choice(NAMES), rng.choice(PLACES)
    return {"input": rng.choice(EDGES) + sep.join(parts) + rng.choice(EDGES),
            "question": rng.choice(EDGES) + f"Where is {who}?" + rng.choice(EDGES),
            "target": where if i % 2 == 0 else f" {where.capitalize()}\n"}


def write_data(rng):
    os.makedirs(os.path.join(OUT, "hub", "datasets--RMT-team--babilong-1k-samples", "refs"), exist_ok=True)
    with open(os.path.join(OUT, "hub", "datasets--RMT-team--babilong-1k-samples", "refs", "main"), "w") as f:
        f.write(COMMIT)
    files = {}
    for length, tasks in LAYOUT.items():
        os.makedirs(os.path.join(SNAP, length), exist_ok=True)
        for qa in tasks:
            rows = [doc(rng, length, i) for i in range(3)]
            path = os.path.join(SNAP, length, f"{qa}-00000-of-00001.parquet")
            # The dataset's column order (its dataset_info: question, target, input).
            pq.write_table(pa.table({k: [r[k] for r in rows] for k in ["question", "target", "input"]}), path)
            files[(length, qa)] = path
    return files


def main():
    rng = random.Random(20261128)
    files = write_data(rng)

    def fixture_load_dataset(path, name=None, split=None, **kwargs):
        assert path == "RMT-team/babilong-1k-samples", path
        if split is not None:
            return datasets.Dataset.from_parquet(files[(name, split)])
        return datasets.DatasetDict({qa: datasets.Dataset.from_parquet(files[(name, qa)]) for qa in LAYOUT[name]})

    datasets.load_dataset = fixture_load_dataset
    from lm_eval.tasks import TaskManager
    from lm_eval.tasks.babilong import common_utils

    requests = []
    for length, tasks in LAYOUT.items():
        tm = TaskManager(metadata={"max_seq_lengths": length})
        for qa in tasks:
            name = f"babilong_{qa}"
            task = tm.load_task_or_group([name])[name]
            task.build_all_requests(limit=None, rank=0, world_size=1)
            for inst in sorted(task.instances, key=lambda x: x.doc_id):
                context, gen_kwargs = inst.arguments
                requests.append({"length": length, "task": qa, "doc_id": inst.doc_id, "context": context,
                                 "gen_kwargs": gen_kwargs, "target": inst.doc["target"]})

    cases = [("garden", "The most recent location of Mary is garden."), ("garden", "GARDEN"),
             (" Garden\n", "the garden"), ("garden", "gar\x00den"), ("garden", "\x1fgarden\x1e"),
             ("garden", "  \n"), ("", "anything"), ("", ""), ("\u0130lker", "i\u0307lker went"),
             ("\u0130lker", "ilker"), ("caf\u00e9", "CAF\u00c9"), ("\u03a3\u039f\u03a3", "\u03c3\u03bf\u03c2"),
             ("\u03a3\u039f\u03a3", "\u03c3\u03bf\u03c3"), ("kitchen", "kit\tchen"), ("kitchen", "\u2028kitchen\u2029"),
             ("kitchen", "kitchen\x7f"), ("The bottle is in the balcony.", "the bottle is in the balcony. Do not"),
             ("stra\u00dfe", "STRASSE"), ("STRASSE", "stra\u00dfe"), ("\ufb01ne", "FINE"), ("\u212a", "k")]
    words = ["garden", "Kitchen", "\x01", "\n", " ", "is", "the", "\u00c9", "\x1b"]
    for _ in range(40):
        target = rng.choice(PLACES + [p.upper() for p in PLACES])
        cases.append((target, "".join(rng.choice(words + [target]) for _ in range(rng.randint(0, 6)))))
    scores = [{"target": t, "prediction": p, "acc": common_utils.process_results({"target": t}, [p])["acc"]}
              for t, p in cases]
    golden = {"about": "lm-eval 0.4.13 on the fixture data: generate_until requests and process_results scores "
                       "(tests/tools/babilong_golden.py)",
              "requests": requests, "scores": scores}
    with open(os.path.join(OUT, "golden.json"), "w") as f:
        json.dump(golden, f, indent=0, ensure_ascii=True)
    print("wrote", OUT, len(requests), "requests,", len(scores), "scores")


if __name__ == "__main__":
    main()
