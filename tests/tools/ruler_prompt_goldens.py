#!/usr/bin/env python3
"""Goldens for the prompt foxeval's `ruler run` sends (tasks/ruler/ruler_run.h): each task's
generation settings read from lm-eval 0.4.13's own YAMLs (include chains resolved as lm-eval does:
the including file's keys win), and the prompt text of lm-eval's ConfigurableTask.build_qa_turn for
the evaluated doc (q = doc_to_text = the doc's input, gen_prefix, tgt_delim = the task's
target_delimiter, rendered with Message.to_text as fewshot_context does without a chat template),
over the first doc of every task in the committed sample goldens and generated edge cases
(whitespace of every kind at the join, empty gen_prefix, empty input, non-ASCII). Writes
tests/fixtures/ruler/prompt_goldens.json.

    /opt/ruler-venv/bin/python tests/tools/ruler_prompt_goldens.py
"""
import json
import os

import yaml

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "ruler")


class _Loader(yaml.SafeLoader):
    pass


# `!function module.name` entries name Python callables (datasets, metrics): not needed here.
_Loader.add_constructor("!function", lambda loader, node: "!function " + loader.construct_scalar(node))


def load_task_yaml(path):
    with open(path, encoding="utf-8") as f:
        cfg = yaml.load(f, Loader=_Loader)
    if "include" in cfg:
        base = load_task_yaml(os.path.join(os.path.dirname(path), cfg.pop("include")))
        base.update(cfg)
        cfg = base
    return cfg


def lm_eval_build_qa_turn():
    """ConfigurableTask.build_qa_turn, compiled from lm-eval's api/task.py with the names it uses
    (api/utils.py's Message, requires_delimiter, maybe_delimit): api/task.py itself imports
    `datasets`, which this venv does not install."""
    import ast
    import lm_eval
    from lm_eval.api import utils as api_utils

    path = os.path.join(os.path.dirname(lm_eval.__file__), "api", "task.py")
    tree = ast.parse(open(path, encoding="utf-8").read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ConfigurableTask")
    fn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "build_qa_turn")
    ns = {"Message": api_utils.Message, "requires_delimiter": api_utils.requires_delimiter,
          "maybe_delimit": api_utils.maybe_delimit}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), path, "exec"), ns)
    return ns["build_qa_turn"]


def main():
    import lm_eval
    build_qa_turn = lm_eval_build_qa_turn()

    ruler_dir = os.path.join(os.path.dirname(lm_eval.__file__), "tasks", "ruler")
    tasks = {}
    for name in sorted(os.listdir(ruler_dir)):
        if not name.endswith(".yaml") or name == "ruler.yaml":
            continue
        cfg = load_task_yaml(os.path.join(ruler_dir, name))
        assert cfg["generation_kwargs"]["until"] == [] and cfg["generation_kwargs"]["do_sample"] is False, name
        assert cfg["gen_prefix"] == "{{gen_prefix}}" and cfg["doc_to_text"] == "{{input}}", name
        tasks[cfg["task"]] = {"max_gen_toks": cfg["generation_kwargs"]["max_gen_toks"],
                              "target_delimiter": cfg.get("target_delimiter", " ")}

    cases = []
    for golden in ["niah_goldens.jsonl", "vt_goldens.jsonl", "cwe_goldens.jsonl"]:
        seen = set()
        for line in open(os.path.join(FIX, golden), encoding="utf-8"):
            row = json.loads(line)
            if row["task"] in seen or "input" not in row["doc"]:
                continue
            seen.add(row["task"])
            cases.append((row["task"], row["doc"]["input"], row["doc"]["gen_prefix"]))
    ends = ["?", "text.", "\n", " ", "\t", "\x1c", "\x85", "\u00a0", "\u3000", "\u2028", "é", "\u200b", ""]
    starts = ["Answer:", " Answer:", "\nA", "\u00a0A", "\u3000A", "\x1fA", "éA", ""]
    for task in ["niah_single_1", "ruler_cwe"]:
        for e in ends:
            for st in starts:
                cases.append((task, ("Question" + e) if e else "", st))

    prompts = []
    for task, q, gp in cases:
        msgs = build_qa_turn(None, q=q, gen_prefix=gp, tgt_delim=tasks[task]["target_delimiter"], few_delim="")
        prompts.append({"task": task, "input": q, "gen_prefix": gp, "prompt": "".join(m.to_text() for m in msgs)})
    out = {"source": "lm-eval " + lm_eval.__version__ + " task YAMLs and ConfigurableTask.build_qa_turn (tests/tools/ruler_prompt_goldens.py)",
           "tasks": tasks, "prompts": prompts}
    with open(os.path.join(FIX, "prompt_goldens.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=True, indent=0)
        f.write("\n")
    print(len(tasks), "tasks,", len(prompts), "prompts")


if __name__ == "__main__":
    main()
