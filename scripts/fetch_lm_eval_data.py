#!/usr/bin/env python3
"""Fetch the documents of foxeval's 11 lm-eval tasks on a machine with network (test tooling;
foxeval itself never runs Python and never downloads).

Two ways, both from the ids, configs and splits in tasks/lm_eval/tasks.json (hf_ids: lm-eval
0.4.4's id first, then the re-hosted copy current lm-eval loads; script datasets no longer load
with current `datasets`, so the first id that loads wins):

  --out DIR     writes DIR/{task}.jsonl, the folder `foxeval lm-eval run --data DIR` reads
                (each document as datasets gives it: field order kept, ints as ints).
  --warm-cache  only loads each split with datasets.load_dataset, which fills the datasets Arrow
                cache (HF_DATASETS_CACHE / HF_HOME) that `foxeval lm-eval ... --data hf` reads.
                Copy that cache to the machine that runs foxeval.

Usage: pip install datasets; python scripts/fetch_lm_eval_data.py --out lm_eval_data [--tasks piqa,...]
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TASKS_JSON = os.path.join(HERE, "..", "tasks", "lm_eval", "tasks.json")


def task_table(path=TASKS_JSON):
    """{task: (split, [(dataset_path, dataset_name or None), ...])} from tasks.json."""
    with open(path, encoding="utf-8") as f:
        tasks = json.load(f)["tasks"]
    return {name: (t["split"], [(h["dataset_path"], h["dataset_name"]) for h in t["hf_ids"]]) for name, t in tasks.items()}


def load_split(ids, split):
    import datasets  # only here: --help and the table work without it

    errors = []
    for path, name in ids:
        try:
            return path, name, datasets.load_dataset(path, name, split=split)
        except Exception as e:  # the next id is the fallback; every failure is reported at the end
            errors.append(f"{path} ({name or 'no config'}): {type(e).__name__}: {e}")
    raise RuntimeError("no id loaded:\n  " + "\n  ".join(errors))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--out", help="folder to write {task}.jsonl into")
    g.add_argument("--warm-cache", action="store_true", help="only fill the local datasets cache")
    p.add_argument("--tasks", default=None, help="comma-separated task names (default: all 11)")
    args = p.parse_args(argv)
    table = task_table()
    names = args.tasks.split(",") if args.tasks else list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        p.error(f"unknown task(s) {unknown}; known: {', '.join(table)}")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    for name in names:
        split, ids = table[name]
        path, config, ds = load_split(ids, split)
        print(f"{name}: {path} ({config or 'no config'}) split {split}: {len(ds)} documents", file=sys.stderr)
        if args.out:
            target = os.path.join(args.out, name + ".jsonl")
            with open(target + ".tmp", "w", encoding="utf-8") as f:
                for doc in ds:
                    f.write(json.dumps(doc, ensure_ascii=False) + "\n")
            os.replace(target + ".tmp", target)


if __name__ == "__main__":
    main()
