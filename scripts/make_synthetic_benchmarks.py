#!/usr/bin/env python3
"""Synthetic LongBench and lm-eval data at the real record counts and lengths, in the published
layouts, for speed runs where the real datasets cannot be downloaded (the GPU machine has no
network). The text is random English-like words: only sizes matter for timing.

  scripts/make_synthetic_benchmarks.py --out DIR [--scale 1.0]

writes DIR/longbench/{task}.jsonl and, for LongBench-E's 11 tasks, {task}_e.jsonl (LongBench's fields;
the _e contexts spread over the 0-4k, 4-8k and 8k+ word buckets) and DIR/lm_eval/{task}.jsonl (the Hugging
Face datasets' fields, the evaluated split). --scale multiplies record counts (e.g. 0.05 for a smoke run).
"""
import argparse
import json
import os
import random

WORDS = ("the of and to in is was for on that with as by at from his her an be this which or had are "
         "not but were have one their they all has been its new more also time first would after other "
         "two when who into only over such made then most years many some these could may any city "
         "state world house water people system school company river music family number small large "
         "between during through under several because however against since among history second").split()

# LongBench English tasks: records, mean words of context (LongBench paper, Table 1), max new tokens.
LONGBENCH = {
    "narrativeqa": (200, 18409, 128), "qasper": (200, 3619, 128), "multifieldqa_en": (150, 4559, 64),
    "hotpotqa": (200, 9151, 32), "2wikimqa": (200, 4887, 32), "musique": (200, 11214, 32),
    "gov_report": (200, 8734, 512), "qmsum": (200, 10614, 512), "multi_news": (200, 2113, 512),
    "trec": (200, 5177, 64), "triviaqa": (200, 8209, 32), "samsum": (200, 6258, 128),
    "lcc": (500, 1235, 64), "repobench-p": (500, 4206, 64),
}

# LongBench-E (`longbench run --e`): its tasks, about 300 records each, lengths over its three buckets.
LONGBENCH_E = ["qasper", "multifieldqa_en", "hotpotqa", "2wikimqa", "gov_report", "multi_news", "trec", "triviaqa",
               "samsum", "lcc", "repobench-p"]

# lm-eval 0.4.4: the evaluated split's size.
LM_EVAL = {"wikitext": 62, "lambada_openai": 5153, "piqa": 1838, "hellaswag": 10042, "winogrande": 1267,
           "arc_easy": 2376, "arc_challenge": 1172, "boolq": 3270, "sciq": 1000, "copa": 100, "openbookqa": 500}


def words(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(max(1, n)))


def sentence(rng, lo, hi):
    return words(rng, rng.randint(lo, hi)).capitalize() + "."


def longbench(rng, out, scale):
    os.makedirs(out, exist_ok=True)
    for task, (count, mean_words, _) in LONGBENCH.items():
        with open(os.path.join(out, f"{task}.jsonl"), "w") as f:
            for i in range(max(1, round(count * scale))):
                n = int(rng.lognormvariate(0, 0.5) * mean_words)
                rec = {"input": sentence(rng, 5, 15).rstrip(".") + "?", "context": words(rng, n),
                       "answers": [words(rng, 3)], "length": n, "dataset": task, "language": "en",
                       "all_classes": ["A", "B"] if task == "trec" else None, "_id": f"{task}-{i:05d}"}
                f.write(json.dumps(rec) + "\n")
    for task in LONGBENCH_E:
        with open(os.path.join(out, f"{task}_e.jsonl"), "w") as f:
            for i in range(max(1, round(300 * scale))):
                n = rng.choice([rng.randint(500, 3900), rng.randint(4100, 7900), rng.randint(8100, 12000)])
                rec = {"input": sentence(rng, 5, 15).rstrip(".") + "?", "context": words(rng, n),
                       "answers": [words(rng, 3)], "length": n, "dataset": task + "_e", "language": "en",
                       "all_classes": ["A", "B"] if task == "trec" else None, "_id": f"{task}_e-{i:05d}"}
                f.write(json.dumps(rec) + "\n")


def lm_eval_doc(rng, task, i):
    if task == "wikitext":
        return {"page": "\n".join(" = " + words(rng, 3) + " = \n" + sentence(rng, 3000, 5000) for _ in range(1))}
    if task == "lambada_openai":
        return {"text": sentence(rng, 60, 100)}
    if task == "piqa":
        return {"goal": sentence(rng, 5, 15), "sol1": sentence(rng, 5, 25), "sol2": sentence(rng, 5, 25),
                "label": rng.randint(0, 1)}
    if task == "hellaswag":
        return {"ind": i, "activity_label": words(rng, 2), "ctx_a": sentence(rng, 10, 30), "ctx_b": words(rng, 4),
                "ctx": "", "endings": [sentence(rng, 10, 30) for _ in range(4)], "source_id": f"s{i}",
                "split": "val", "split_type": "indomain", "label": str(rng.randint(0, 3))}
    if task == "winogrande":
        s = words(rng, 10) + " _ " + words(rng, 10) + "."
        return {"sentence": s, "option1": words(rng, 1), "option2": words(rng, 1), "answer": str(rng.randint(1, 2))}
    if task in ("arc_easy", "arc_challenge", "openbookqa"):
        labels = ["A", "B", "C", "D"]
        choices = {"text": [words(rng, rng.randint(1, 8)) for _ in labels], "label": labels}
        key = "question_stem" if task == "openbookqa" else "question"
        return {"id": f"q{i}", key: sentence(rng, 10, 30), "choices": choices, "answerKey": rng.choice(labels)}
    if task == "boolq":
        return {"question": words(rng, 8), "passage": sentence(rng, 80, 150), "idx": i, "label": rng.randint(0, 1)}
    if task == "sciq":
        return {"question": sentence(rng, 8, 20), "distractor1": words(rng, 2), "distractor2": words(rng, 2),
                "distractor3": words(rng, 2), "correct_answer": words(rng, 2), "support": sentence(rng, 40, 120)}
    if task == "copa":
        return {"premise": sentence(rng, 5, 12), "choice1": sentence(rng, 4, 10), "choice2": sentence(rng, 4, 10),
                "question": rng.choice(["cause", "effect"]), "idx": i, "label": rng.randint(0, 1)}
    raise ValueError(task)


def lm_eval(rng, out, scale):
    os.makedirs(out, exist_ok=True)
    for task, count in LM_EVAL.items():
        with open(os.path.join(out, f"{task}.jsonl"), "w") as f:
            for i in range(max(1, round(count * scale))):
                f.write(json.dumps(lm_eval_doc(rng, task, i)) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    longbench(random.Random(a.seed), os.path.join(a.out, "longbench"), a.scale)
    lm_eval(random.Random(a.seed + 1), os.path.join(a.out, "lm_eval"), a.scale)


if __name__ == "__main__":
    main()
