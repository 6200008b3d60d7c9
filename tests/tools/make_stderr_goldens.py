#!/usr/bin/env python3
"""Goldens for foxeval's per-item statistics (tasks/results/item_stats.h): lm-eval 0.4.4's own stderr
functions and the paired comparison of `foxeval compare`, on fixed per-sample values.

  lm-eval   mean_stderr (acc-like and score-like values) and bootstrap_stderr of the perplexity,
            weighted_perplexity and bits_per_byte aggregations, called from lm_eval.api.metrics
            itself (100000 iterations, as lm-eval's evaluator runs them). lm_eval.api.metrics
            imports sacrebleu at the top for bleu/chrf/ter only; it is stubbed when absent (none
            of the functions used here touch it).
  paired    the paired bootstrap `foxeval compare` computes, written out in Python: one
            random.Random(seed), choices(range(n), k=n) per resample, lm-eval's aggregation of
            each side, numpy.percentile(diffs, [2.5, 97.5]); McNemar's exact p from math.comb.

Made with /work/main/.venv (CPython 3.11.7, lm_eval 0.4.4, numpy):
    .venv/bin/python tests/tools/make_stderr_goldens.py tests/fixtures/stats/stderr_golden.json
"""
import json
import math
import random
import sys
import types
from fractions import Fraction

import numpy as np

# lm_eval.api.metrics is loaded from lm-eval's installed file by itself: importing it as a package
# member runs lm_eval/__init__ (the evaluator, transformers, evaluate, ...), which the project's venv
# lacks. Its own imports are sacrebleu (bleu/chrf/ter only), the registry's two decorators and
# bootstrap_stderr's tqdm progress bar; those are stubbed where absent (the decorators and tqdm
# return what they are given), the rest is lm-eval's code as it is.
from importlib.metadata import version  # noqa: E402
import importlib.util  # noqa: E402

assert version("lm-eval") == "0.4.4", version("lm-eval")


def load_lm_eval_metrics():
    path = importlib.util.find_spec("lm_eval").submodule_search_locations[0] + "/api/metrics.py"
    for name in ("lm_eval", "lm_eval.api", "lm_eval.api.registry", "sacrebleu"):
        sys.modules.setdefault(name, types.ModuleType(name))
    registry = sys.modules["lm_eval.api.registry"]
    registry.register_aggregation = lambda name: (lambda f: f)
    registry.register_metric = lambda **kw: (lambda f: f)
    try:
        import tqdm  # noqa: F401
    except ImportError:
        sys.modules["tqdm"] = types.ModuleType("tqdm")
        sys.modules["tqdm"].tqdm = lambda iterable, total=None: iterable
    spec = importlib.util.spec_from_file_location("lm_eval.api.metrics", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["lm_eval.api.metrics"] = module  # bootstrap_stderr's pool pickles its classes by module name
    spec.loader.exec_module(module)
    return module


M = load_lm_eval_metrics()

AGG = {"mean": M.mean, "perplexity": M.perplexity, "weighted_perplexity": M.weighted_perplexity,
       "bits_per_byte": M.bits_per_byte}


def items_of(case):
    if "weights" in case:
        return list(zip(case["values"], case["weights"]))
    return list(case["values"])


def lm_eval_cases():
    rng = random.Random(7)
    acc = [float(rng.random() < 0.6) for _ in range(37)]
    scores = [round(100 * rng.random() ** 2, 6) for _ in range(23)]
    lls = [-rng.uniform(0.5, 12.0) for _ in range(9)]
    words = [rng.randint(20, 400) for _ in range(9)]
    out = []
    for name, agg, values, weights in [("acc", "mean", acc, None), ("scores", "mean", scores, None),
                                       ("two", "mean", [0.0, 1.0], None),
                                       ("lambada_perplexity", "perplexity", lls, None),
                                       ("word_perplexity", "weighted_perplexity", lls, words),
                                       ("bits_per_byte", "bits_per_byte", lls, words)]:
        case = {"name": name, "aggregation": agg, "values": values}
        if weights is not None:
            case["weights"] = weights
        items = items_of(case)
        case["value"] = AGG[agg](items)
        if agg == "mean":
            case["stderr"] = M.mean_stderr(items)
            # lm-eval's evaluator asks stderr_for_metric; the same function must come back.
            assert M.stderr_for_metric(M.mean, 100000) is M.mean_stderr
        else:
            case["stderr"] = M.bootstrap_stderr(AGG[agg], items, iters=100000)
        out.append(case)
    return out


def mcnemar(b, c):
    m, k = b + c, min(b, c)
    if m == 0:
        return 1.0
    return float(min(Fraction(1), 2 * Fraction(sum(math.comb(m, i) for i in range(k + 1)), 2 ** m)))


def paired(a, b, agg, seed, resamples, wa=None, wb=None):
    rnd = random.Random(seed)
    n = len(a)
    diffs = []
    for _ in range(resamples):
        idx = rnd.choices(range(n), k=n)
        ia = [(a[i], wa[i]) for i in idx] if wa else [a[i] for i in idx]
        ib = [(b[i], wb[i]) for i in idx] if wb else [b[i] for i in idx]
        diffs.append(AGG[agg](ib) - AGG[agg](ia))
    full_a = list(zip(a, wa)) if wa else a
    full_b = list(zip(b, wb)) if wb else b
    low, high = np.percentile(diffs, [2.5, 97.5])
    return {"a": AGG[agg](full_a), "b": AGG[agg](full_b), "difference": AGG[agg](full_b) - AGG[agg](full_a),
            "low": float(low), "high": float(high)}


def paired_cases():
    rng = random.Random(11)
    out = []
    a = [float(rng.random() < 0.5) for _ in range(60)]
    b = [1.0 if x == 1.0 or rng.random() < 0.4 else 0.0 for x in a]  # b right wherever a is, and more
    a_only = sum(1 for x, y in zip(a, b) if x == 1 and y == 0)
    b_only = sum(1 for x, y in zip(a, b) if x == 0 and y == 1)
    out.append({"name": "accuracy", "aggregation": "mean", "values_a": a, "values_b": b, "seed": 1234, "resamples": 10000,
                **paired(a, b, "mean", 1234, 10000), "a_only": a_only, "b_only": b_only,
                "mcnemar_p": mcnemar(a_only, b_only)})
    s = [100 * rng.random() for _ in range(25)]
    t = [x + rng.gauss(-3, 5) for x in s]
    out.append({"name": "scores", "aggregation": "mean", "values_a": s, "values_b": t, "seed": 1234, "resamples": 10000,
                **paired(s, t, "mean", 1234, 10000)})
    la = [-rng.uniform(1, 9) for _ in range(12)]
    lb = [x + rng.uniform(-0.5, 0.3) for x in la]
    w = [rng.randint(10, 90) for _ in range(12)]
    out.append({"name": "word_perplexity", "aggregation": "weighted_perplexity", "values_a": la, "values_b": lb, "weights": w,
                "seed": 99, "resamples": 2000, **paired(la, lb, "weighted_perplexity", 99, 2000, w, w)})
    out.append({"name": "mcnemar_only", "a_only": 10, "b_only": 0, "mcnemar_p": mcnemar(10, 0)})
    out.append({"name": "mcnemar_large", "a_only": 480, "b_only": 530, "mcnemar_p": mcnemar(480, 530)})
    return out


def main():
    golden = {
        "source": "tests/tools/make_stderr_goldens.py, lm_eval " + version("lm-eval") + ", numpy " + np.__version__,
        "python": sys.version.split()[0],
        "lm_eval": lm_eval_cases(),
        "paired": paired_cases(),
    }
    with open(sys.argv[1], "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
