#!/usr/bin/env python3
"""Writes tests/fixtures/results/*.json: small synthetic result files of every kind `foxeval table`
and `foxeval report` read, in the shapes foxeval's tasks write (tasks/run/runner.h header; loss:
tasks/loss.cpp; niah: tasks/niah/niah_score.cpp; longbench: tasks/longbench/longbench_official.cpp;
lm-eval: tasks/lm_eval/lm_eval_task.cpp). The numbers are made up, deterministic, and chosen to
exercise the tables: ties, a missing task, perplexities (lower is better), three models per kind.

Usage: python3 tests/tools/make_results_fixtures.py   (from the repository root; stdlib only)
"""
import json
import math
import os

OUT = os.path.join(os.path.dirname(__file__), "..", "fixtures", "results")

MODELS = {
    "fox_pro": ("/models/fox-pro-760m-longcrawl64-48b", "forgetting_transformer-project_fox", "FoX (Pro)", 836_700_000),
    "transformer_pro": ("/models/transformer-pro-760m-longcrawl64-48b", "forgetting_transformer-project_fox",
                        "Transformer (Pro)", 836_600_000),
    "mamba2": ("/models/mamba2-760m-longcrawl64-48b", "mamba2-project_fox", "Mamba-2", 830_200_000),
}


def header(task, key, extra, date, elapsed):
    model, model_type, _, nparams = MODELS[key]
    settings = {"model": model, "model_type": model_type, "num_parameters": nparams}
    settings.update(extra)
    settings.update({"dtype": "bfloat16", "device_type": "cuda"})
    return {"task": task, "foxeval_version": "0123456789ab", "settings": settings,
            "machine": {"cpu": "Intel(R) Xeon(R) Platinum 8480+", "host": "gpu-node-07", "gpu": "NVIDIA H100 80GB HBM3"},
            "date": date, "elapsed_s": elapsed}


def write(name, obj):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


LM_EVAL = {
    # wikitext word ppl, lambada ppl, lambada acc, piqa acc, hellaswag acc_norm, winogrande acc, arc_easy acc,
    # arc_challenge acc_norm, copa acc, openbookqa acc_norm, sciq acc, boolq acc
    "fox_pro": [23.04, 14.91, 0.4227, 0.7067, 0.4622, 0.5414, 0.6069, 0.2875, 0.71, 0.338, 0.851, 0.6141],
    "transformer_pro": [23.64, 15.31, 0.4174, 0.7035, 0.4597, 0.5249, 0.6103, 0.2935, 0.71, 0.316, 0.853, 0.5795],
    "mamba2": [23.76, 15.38, 0.4172, 0.7122, 0.4587, 0.5367, 0.6364, 0.2765, 0.69, 0.344, 0.856, 0.5917],
}
LM_TASKS = ["wikitext", "lambada_openai", "piqa", "hellaswag", "winogrande", "arc_easy", "arc_challenge", "copa",
            "openbookqa", "sciq", "boolq"]
N_DOCS = {"wikitext": 62, "lambada_openai": 5153, "piqa": 1838, "hellaswag": 10042, "winogrande": 1267,
          "arc_easy": 2376, "arc_challenge": 1172, "copa": 100, "openbookqa": 500, "sciq": 1000, "boolq": 3270}


def lm_eval_result(key, values, drop=()):
    wiki, lmb_ppl, lmb_acc, piqa, hella, wino, arc_e, arc_c, copa, obqa, sciq, boolq = values
    acc = lambda v, n: {"acc,none": v, "acc_stderr,none": math.sqrt(v * (1 - v) / (n - 1))}
    norm = lambda a, v, n: {"acc,none": a, "acc_stderr,none": math.sqrt(a * (1 - a) / (n - 1)),
                            "acc_norm,none": v, "acc_norm_stderr,none": math.sqrt(v * (1 - v) / (n - 1))}
    results = {
        "wikitext": {"word_perplexity,none": wiki, "word_perplexity_stderr,none": "N/A",
                     "byte_perplexity,none": wiki ** 0.2, "byte_perplexity_stderr,none": "N/A",
                     "bits_per_byte,none": math.log2(wiki ** 0.2), "bits_per_byte_stderr,none": "N/A"},
        "lambada_openai": {"perplexity,none": lmb_ppl, "perplexity_stderr,none": "N/A", **acc(lmb_acc, 5153)},
        "piqa": norm(piqa, piqa + 0.005, 1838),
        "hellaswag": norm(hella - 0.08, hella, 10042),
        "winogrande": acc(wino, 1267),
        "arc_easy": norm(arc_e, arc_e - 0.05, 2376),
        "arc_challenge": norm(arc_c - 0.03, arc_c, 1172),
        "copa": acc(copa, 100),
        "openbookqa": norm(obqa - 0.12, obqa, 500),
        "sciq": norm(sciq, sciq - 0.07, 1000),
        "boolq": acc(boolq, 3270),
    }
    tasks = [t for t in LM_TASKS if t not in drop]
    for t in LM_TASKS:
        results[t] = dict({"alias": t}, **results[t])
    results = {t: results[t] for t in tasks}
    data = {t: {"file": f"/data/lm_eval/{t}.jsonl", "digest": "9f1c2e3d4b5a6978", "docs_total": N_DOCS[t],
                "docs_evaluated": N_DOCS[t]} for t in tasks}
    return {"results": results,
            "n-samples": {t: {"original": N_DOCS[t], "effective": N_DOCS[t]} for t in tasks},
            "model": MODELS[key][0],
            "header": header("lm-eval", key, {"tasks": tasks, "data": data, "limit": -1, "max_length": 16384,
                                              "add_bos_token": True, "num_fewshot": 0},
                             "2026-11-20T09:12:44Z", 5400.0 + len(key))}


LB_TASKS = ["narrativeqa", "qasper", "multifieldqa_en", "hotpotqa", "2wikimqa", "musique", "gov_report", "qmsum",
            "multi_news", "trec", "triviaqa", "samsum", "lcc", "repobench-p"]
LONGBENCH = {
    "fox_pro": [13.38, 12.88, 20.36, 7.51, 15.5, 4.15, 26.24, 17.08, 14.88, 48.5, 45.53, 21.83, 22.75, 18.36],
    "transformer_pro": [11.42, 21.54, 19.89, 8.01, 15.5, 4.7, 27.15, 16.95, 8.9, 47.0, 37.54, 18.11, 24.7, 20.58],
    "mamba2": [10.65, 11.26, 16.98, 11.59, 15.82, 6.53, 28.18, 15.97, 14.16, 31.0, 45.06, 21.51, 19.93, 21.3],
}


def longbench_result(key, values, errors=()):
    scores = {t: v for t, v in zip(LB_TASKS, values) if t not in errors}
    return {"tasks": LB_TASKS, "scores": scores,
            "score_errors": {t: f"longbench: scoring \"{t}\": no predictions" for t in errors},
            "predictions": {},
            "header": header("longbench", key, {"tasks": LB_TASKS, "e": False, "limit": -1, "max_length": 15500,
                                                "max_new_tokens": -1, "data": "5d1e7a0c9b3f2e41"},
                             "2026-11-21T14:03:10Z", 20100.0 + len(key))}


def loss_result(key, a, b, c, seq_len=2048):
    per_token = [round(a + b * (p + 1) ** -c, 6) for p in range(seq_len)]
    out = {}
    L = seq_len
    while L >= 512:
        avg = sum(per_token[:L]) / L
        out[f"val/loss_avg_len_{L}"] = avg
        out[f"val/perplexity_len_{L}"] = math.exp(avg)
        L //= 2
    identity = {"model": MODELS[key][0], "model_type": MODELS[key][1], "num_parameters": MODELS[key][3],
                "data": "zarr:/data/heldout.zarr shape=[52131, 65536]", "seq_len": seq_len, "max_tokens": 2147483648,
                "num_windows": 32768, "bos_id": 50256, "dtype": "bfloat16", "device_type": "cuda", "batch_size": 1,
                "num_shards": 8}
    out.update({"val/loss_per_token": per_token, "kind": "foxeval-loss", "identity": identity,
                "model_info": {"family": MODELS[key][2], "num_parameters": MODELS[key][3]},
                "documents": 32768, "tokens": 32768 * seq_len, "elapsed_s": 3600.0})
    h = header("loss", key, {}, "2026-11-22T08:00:00Z", 3600.0)
    h["settings"] = identity
    out["header"] = h
    return out


NIAH_LENGTHS = [1000, 4100, 7200, 10300, 13400, 16500, 19600, 22700, 25800, 28900, 32000]
NIAH_DEPTHS = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
ANSWER = "eat a sandwich and sit in Dolores Park on a sunny day"


def niah_result(key, mode, fail_after, partial_every):
    cells = []
    for L in NIAH_LENGTHS:
        for D in NIAH_DEPTHS:
            if L > fail_after:
                pred, score = "The best thing to do in San Francisco is to visit the Golden Gate Bridge.", 1
            elif (L // 100 + D) % partial_every == 0:
                pred, score = "The best thing to do in San Francisco is to eat a sandwich.", 4
            else:
                pred, score = f"The best thing to do in San Francisco is to {ANSWER}.", 10
            cells.append({"length": L, "depth": D, "prediction": pred, "prompt_tokens": L, "new_tokens": 20,
                          "score": score, "answer_recall": 1.0 if score == 10 else 0.2, "contains_answer": score == 10})
    mean = lambda xs: sum(xs) / len(xs)
    return {"task": "niah", "scorer": "offline", "mode": mode, "model": MODELS[key][0], "model_type": MODELS[key][1],
            "mean_by_length": [{"length": L, "mean": mean([c["score"] for c in cells if c["length"] == L])}
                               for L in NIAH_LENGTHS],
            "mean_by_depth": [{"depth": D, "mean": mean([c["score"] for c in cells if c["depth"] == D])}
                              for D in NIAH_DEPTHS],
            "mean": mean([c["score"] for c in cells]),
            "cells": cells,
            "header": header("niah", key, {"mode": mode, "answer": ANSWER, "lengths": NIAH_LENGTHS,
                                           "depths": NIAH_DEPTHS, "max_new_tokens": 50,
                                           "haystack_digest": "77aa01c3e5f2b9d0"},
                             "2026-11-22T11:30:00Z", 1500.0)}


def main():
    os.makedirs(OUT, exist_ok=True)
    for key, values in LM_EVAL.items():
        write(f"lm_eval_{key}.json", lm_eval_result(key, values))
    for key, values in LONGBENCH.items():
        write(f"longbench_{key}.json", longbench_result(key, values, errors=("lcc",) if key == "mamba2" else ()))
    for key, (a, b, c) in {"fox_pro": (2.0, 6.0, 0.35), "transformer_pro": (2.02, 6.0, 0.34),
                           "mamba2": (2.06, 5.5, 0.38)}.items():
        write(f"loss_{key}.json", loss_result(key, a, b, c))
    write("niah_fox_pro_standard.json", niah_result("fox_pro", "standard", 40000, 13))
    write("niah_fox_pro_easy.json", niah_result("fox_pro", "easy", 40000, 29))
    write("niah_transformer_pro_standard.json", niah_result("transformer_pro", "standard", 17000, 11))
    write("niah_transformer_pro_easy.json", niah_result("transformer_pro", "easy", 17000, 23))
    write("niah_mamba2_standard.json", niah_result("mamba2", "standard", 8000, 7))


if __name__ == "__main__":
    main()
