#!/usr/bin/env python3
"""Goldens for foxeval's RULER scores (tasks/ruler/ruler_metrics.h) from lm-eval 0.4.13's own
common_utils.py: postprocess_pred, process_results (string_match_all), process_results_part
(string_match_part) and aggregate_metrics, over generated predictions (expected outputs found or not,
in other case, with control characters, surrounding whitespace, non-ASCII case pairs) and
generated score lists. Writes tests/fixtures/ruler/metric_goldens.json; floats are exact through
JSON (repr round-trips).

    /opt/ruler-venv/bin/python tests/tools/ruler_metric_goldens.py
"""
import json
import os
import random
import sys
import types

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "ruler")


def main():
    sys.modules["transformers"] = types.SimpleNamespace(AutoTokenizer=None)  # imported, not used here
    import lm_eval
    # Enter lm_eval.tasks without its __init__ (the whole task registry), as ruler_goldens.py does.
    tasks_pkg = types.ModuleType("lm_eval.tasks")
    tasks_pkg.__path__ = [os.path.join(os.path.dirname(lm_eval.__file__), "tasks")]
    sys.modules["lm_eval.tasks"] = tasks_pkg
    from lm_eval.tasks.ruler import common_utils as cu

    rng = random.Random(5454)
    pieces = ["1234567", "ABC", "abc", "Ünïcode", "ünïcode", "ΣΑΣ", "σας", "İ", "i̇", "word-pair", "c8c97b72-4a29",
              " ", "\n", "\t", "\x00", "\x1f", "\x7f", "\u2028", "\u00a0", ",", " and ", "The answer is ", "."]
    cases = []
    for _ in range(3000):
        outputs = ["".join(rng.choice(pieces[:11]) for _ in range(rng.randrange(1, 3))) for _ in range(rng.randrange(1, 5))]
        pred = "".join(rng.choice(pieces + outputs * 2) for _ in range(rng.randrange(0, 12)))
        doc = {"outputs": outputs, "max_length": 4096}
        cases.append({"prediction": pred, "outputs": outputs, "clean": cu.postprocess_pred([pred])[0],
                      "all": cu.process_results(doc, [pred])["4096"],
                      "part": cu.process_results_part(doc, [pred])["4096"]})
    aggregates = []
    for _ in range(300):
        vals = [rng.choice([-1.0, 0.0, 1.0, 0.5, 0.25, 1 / 3, 2 / 3, 0.75]) for _ in range(rng.randrange(0, 60))]
        aggregates.append({"values": vals, "mean": cu.aggregate_metrics(vals)})
    with open(os.path.join(FIX, "metric_goldens.json"), "w", encoding="utf-8") as f:
        json.dump({"cases": cases, "aggregates": aggregates}, f, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {len(cases)} cases, {len(aggregates)} aggregates")


if __name__ == "__main__":
    main()
