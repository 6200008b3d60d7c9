"""Reads a `foxeval lm-eval run --output_path DIR --log_samples` tree with lm-eval 0.4.4's own code:
lm_eval/utils.py's file-selection helpers (get_results_filenames, get_latest_filename,
get_sample_results_filenames, get_file_task_name, as scripts/zeno_visualize.py uses them) and its
make_table (what `lm_eval` prints, for "results" and, where present, "groups"). Exits 1 if anything
is missing or unreadable.

utils.py is loaded as a file (lm_eval/__init__ imports the evaluator, which needs torch and
transformers; utils.py needs only numpy, pyyaml, jinja2; make_table needs pytablewriter).
Run: /tmp/lmeval-venv/bin/python tests/tools/lm_eval_read_tree.py DIR   (pip install lm_eval==0.4.4 --no-deps
pytablewriter numpy pyyaml jinja2)
"""
import importlib.util
import json
import os
import sys
from importlib.metadata import version
from pathlib import Path

assert version("lm_eval") == "0.4.4", version("lm_eval")
spec = importlib.util.find_spec("lm_eval")
utils_path = os.path.join(os.path.dirname(spec.origin), "utils.py")
s = importlib.util.spec_from_file_location("lm_eval_utils", utils_path)
utils = importlib.util.module_from_spec(s)
s.loader.exec_module(utils)

root = Path(sys.argv[1])
models = [d for d in root.iterdir() if d.is_dir()]
assert models, f"no model folder in {root}"
for model_dir in models:
    files = [f.as_posix() for f in model_dir.iterdir() if f.is_file()]
    results_files = utils.get_results_filenames(files)
    assert results_files, f"no results_*.json in {model_dir}"
    latest = utils.get_latest_filename(results_files)
    results = json.load(open(latest, encoding="utf-8"))
    for key in ("results", "configs", "versions", "n-shot", "higher_is_better", "n-samples", "config",
                "task_hashes", "model_name", "model_name_sanitized", "date"):
        assert key in results, f"{latest}: no '{key}'"
    assert results["model_name_sanitized"] == model_dir.name, (results["model_name_sanitized"], model_dir.name)
    print(utils.make_table(results))
    if "groups" in results:
        print(utils.make_table(results, "groups"))
    sample_files = utils.get_sample_results_filenames(files)
    tasks = {utils.get_file_task_name(Path(f).name) for f in sample_files}
    assert tasks == set(results["configs"]), (tasks, set(results["configs"]))
    for task in tasks:
        latest_samples = utils.get_latest_filename([Path(f).name for f in sample_files if task in f])
        assert utils.get_file_datetime(latest_samples) == utils.get_file_datetime(Path(latest).name).replace(".json", "")
        lines = [json.loads(x) for x in open(model_dir / latest_samples, encoding="utf-8")]
        assert len(lines) == results["n-samples"][task]["effective"], (task, len(lines))
        hashes = "".join(x["doc_hash"] + x["prompt_hash"] + x["target_hash"] for x in lines)
        assert utils.hash_string(hashes) == results["task_hashes"][task], task
        config = results["configs"][task]
        for x in lines:
            assert utils.hash_string(json.dumps(x["doc"], indent=2, ensure_ascii=False)) == x["doc_hash"], task
            assert utils.hash_string(x["arguments"]["gen_args_0"]["arg_0"]) == x["prompt_hash"], task
            assert utils.hash_string(x["target"]) == x["target_hash"], task
            for m in config["metric_list"]:
                assert m["metric"] in x, (task, m)
            # zeno_visualize.generate_system_df's reading of the responses:
            if config["output_type"] == "multiple_choice":
                ", ".join([str(y[0]) for y in x["filtered_resps"]])
            else:
                str(x["filtered_resps"][0])
print("lm-eval 0.4.4's utils read the tree")
