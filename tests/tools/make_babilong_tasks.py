#!/usr/bin/env python3
"""Writes tasks/babilong/babilong_tasks.json from lm-evaluation-harness 0.4.13's own task files
(lm_eval/tasks/babilong/: _babilong_common_yaml, babilong_qa1.yaml .. babilong_qa20.yaml,
common_utils.py), as lm-eval's TaskManager loads them: each task's description (the instruction),
its two few-shot examples (sampler first_n), and the settings every task shares.

Usage (lm-eval as test tooling, outside the project's .venv):
  python3 -m venv /opt/babilong-venv
  /opt/babilong-venv/bin/pip install --no-deps lm-eval==0.4.13
  /opt/babilong-venv/bin/pip install datasets jinja2 pyyaml transformers requests sacrebleu
  /opt/babilong-venv/bin/python tests/tools/make_babilong_tasks.py
"""
import importlib.metadata
import json
import os

import datasets

# Loading a task loads its split; these files need only the configs, so no data is fetched.
def _no_data(path, name=None, split=None, **kwargs):
    empty = datasets.Dataset.from_list([{"input": "", "question": "", "target": ""}])
    return empty if split else datasets.DatasetDict({s: empty for s in [f"qa{i}" for i in range(1, 21)]})


datasets.load_dataset = _no_data
from lm_eval.tasks import TaskManager  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tasks", "babilong", "babilong_tasks.json")


def main():
    version = importlib.metadata.version("lm-eval")
    assert version == "0.4.13", version
    tm = TaskManager()
    names = [f"babilong_qa{i}" for i in range(1, 21)]
    out = {
        "about": "lm-evaluation-harness 0.4.13's babilong tasks (lm_eval/tasks/babilong/), written by "
                 "tests/tools/make_babilong_tasks.py from the YAML files as lm-eval's TaskManager loads them",
        "source": "lm-eval==0.4.13: lm_eval/tasks/babilong/_babilong_common_yaml, babilong_qaN.yaml, common_utils.py",
        "dataset_path": None,
        "lengths": ["0k", "1k", "2k", "4k", "8k", "16k", "32k", "64k", "128k"],
        "lengths_from": "lm_eval/tasks/babilong/README.md: lengths 0k..128k for qa1-qa5; qa6-qa20 only 0k",
        "default_tasks": ["qa1", "qa2", "qa3", "qa4", "qa5"],
        "default_tasks_from": "babilong_longctx.yaml (the group of qa1-qa5 at lengths up to 128k)",
        "tasks": {},
    }
    for name in names:
        cfg = tm.load_task_or_group([name])[name].config.to_dict()  # the YAML as loaded, includes resolved
        split = cfg["test_split"]
        # qa1-qa10 load through common_utils.load_dataset (the length from --metadata max_seq_lengths,
        # default 0k); qa11-qa20 name dataset_name 0k: always the 0k config.
        custom = "custom_dataset" in cfg
        assert (cfg["dataset_kwargs"]["qa_split"] == split) if custom else (cfg.get("dataset_name") == "0k"), name
        assert cfg["doc_to_text"] == "{{input.strip()}}\n{{question.strip()}}", cfg["doc_to_text"]
        assert cfg["doc_to_target"] == "{{target}}"
        assert cfg["fewshot_config"]["sampler"] == "first_n"
        # Some YAMLs list three samples; first_n takes the first num_fewshot (2) of them.
        assert cfg["num_fewshot"] == 2 and len(cfg["fewshot_config"]["samples"]) >= 2
        assert cfg["output_type"] == "generate_until"
        common = {"target_delimiter": cfg["target_delimiter"], "doc_to_text": cfg["doc_to_text"],
                  "doc_to_target": cfg["doc_to_target"], "num_fewshot": cfg["num_fewshot"],
                  "generation_kwargs": cfg["generation_kwargs"], "dataset_path": cfg["dataset_path"],
                  "fewshot_delimiter": cfg["fewshot_delimiter"], "sampler": cfg["fewshot_config"]["sampler"]}
        if out["dataset_path"] is None:
            out["dataset_path"] = cfg["dataset_path"]
            out["common"] = common
        assert common == out["common"], (name, common)
        # The lengths the dataset holds the task at (its README): qa1-qa5 every length, qa6-qa20 0k only.
        lengths = out["lengths"] if split in out["default_tasks"] else ["0k"]
        out["tasks"][split] = {"task": name, "lengths": lengths, "description": cfg["description"],
                               "fewshot": [{"input": s["input"], "question": s["question"], "target": s["target"]}
                                           for s in cfg["fewshot_config"]["samples"][:cfg["num_fewshot"]]],
                               "fewshot_listed": len(cfg["fewshot_config"]["samples"])}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
