#!/usr/bin/env python3
"""Goldens for LongBench's Chinese metrics and numeric answers, from the official Python.

Writes tests/fixtures/longbench/metrics_zh_golden.json: metrics.py's values for the Chinese tasks
(qa_f1_zh_score: multifieldqa_zh; rouge_zh_score: dureader, vcsum; classification_score: lsht;
retrieval_zh_score: passage_retrieval_zh) and for answers as LongBench's released files hold them
(passage_count's "answers": [15], numbers scored through str()), plus eval.py's scorer and scorer_e
on record sets of those tasks. jieba segments both sides of the Chinese metrics, so the texts mix
dictionary words, characters outside the dictionary, ASCII words, digits, decimals, percents,
versions, full-width forms, punctuation and whitespace, as model outputs do.

The official code and packages as tests/tools/longbench_metrics_golden.py says (forgetting-
transformer eval/longbench @ 883f260c, rouge 1.0.1, fuzzywuzzy 0.18.0 without python-Levenshtein,
jieba 0.42.1, numpy), in the same venv:
    /tmp/lbm-venv/bin/python tests/tools/longbench_zh_golden.py tests/fixtures/longbench/metrics_zh_golden.json

Call depth: metrics are called from <module> -> call_metric -> metric, eval.py's depth (see the
other script), so rouge's RecursionError (caught by metrics.py's bare except) happens where it
happens under eval.py; rouge_zh_score adds one frame (it calls rouge_score).
"""
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from longbench_metrics_golden import COMMIT, official_dir  # noqa: E402

JIEBA_DICT = "/usr/lib/python3/dist-packages/jieba/dict.txt"


def dictionary_words():
    words = []
    with open(JIEBA_DICT, encoding="utf-8") as f:
        for line in f:
            parts = line.split(" ")
            if len(parts) >= 2 and int(parts[1]) >= 50:
                words.append(parts[0])
    return words


RARE_HAN = list("龘靐齉爩麤龖鱻犇骉羴猋淼焱垚掱赑嚞孨") + ["\u9fd5", "\u9fd6", "\u3400", "\u4e00"]
ASCII = ["GPU", "model", "Python", "the", "LongBench", "API", "x", "OK", "iPhone", "COVID-19", "C++", "A_B"]
NUMBERS = ["2024", "3.14", "12.5%", "v1.2.3", "2.0.1", "100", "0", "1,000", "3-5", "90%", "7.", "#1", "&"]
FULLWIDTH = ["ＡＢＣ", "１２３", "１２．５％", "Ｏｋ", "（", "）", "：", "；"]
PUNCT = ["，", "。", "、", "！", "？", "：", "；", "“", "”", "《", "》", "（", "）", "【", "】", "…", "—", "·",
         ",", ".", "!", "?", ":", ";", "'", "\"", "(", ")", "-", "/", "~"]
SPACES = [" ", "  ", "\t", "\n", "\r\n", "\u3000", "\u00a0", "\n\n"]
EMOJI = ["😀", "👍", "🚀", "❤️", "🇨🇳"]


# The pools a piece of zh_text is drawn from, by cumulative probability (None: the words given).
PIECES = [(0.55, None), (0.62, RARE_HAN), (0.70, ASCII), (0.78, NUMBERS), (0.82, FULLWIDTH), (0.94, PUNCT),
          (0.98, SPACES), (1.0, EMOJI)]


def zh_text(rng, words, n_min=1, n_max=30):
    out = []
    for _ in range(rng.randint(n_min, n_max)):
        r = rng.random()
        pool = next(p for limit, p in PIECES if r < limit)
        out.append(rng.choice(words if pool is None else pool))
    return "".join(out)


def near_zh(rng, text, words):
    """A prediction close to `text`: characters dropped, words inserted, pieces repeated."""
    out = []
    for ch in text:
        r = rng.random()
        if r < 0.08:
            continue
        if r < 0.12:
            out.append(rng.choice(words))
        out.append(ch)
        if rng.random() < 0.03:
            out.append(ch)
    return "".join(out)


def metric_cases(rng, words):
    cases = []  # (dataset, prediction, answer, all_classes)
    fixed = ["", " ", "。", "北京", "北京大学", "我爱北京天安门", "他来到了网易杭研大厦", "小明硕士毕业于中国科学院计算所",
             "2024年3月14日", "增长了12.5%", "版本v1.2.3发布", "ＡＢＣ１２３", "苹果iPhone 15 Pro", "\n答案：北京\n",
             "中华人民共和国成立于1949年", "“你好”，他说。", "The answer is 北京"]
    for a in fixed:
        for p in fixed[:6] + [a, near_zh(rng, a, words)]:
            cases.append(("multifieldqa_zh", p, a, []))
            cases.append(("dureader", p, a, []))
    for _ in range(300):
        a = zh_text(rng, words, 1, 25)
        p = near_zh(rng, a, words) if rng.random() < 0.6 else zh_text(rng, words, 0, 25)
        cases.append(("multifieldqa_zh", p, a, []))
    for _ in range(200):
        a = zh_text(rng, words, 5, 120)
        p = near_zh(rng, a, words) if rng.random() < 0.6 else zh_text(rng, words, 0, 120)
        cases.append((rng.choice(["dureader", "vcsum"]), p, a, []))
    # rouge's recursion limit after segmentation: one "sentence" (no '.') of distinct words whose LCS
    # backtrack takes ~m steps; rouge_zh_score sits one frame deeper than rouge_score
    for m in (984, 988, 989, 990, 991, 992, 1000):
        y = " ".join(f"y{i}" for i in range(m))
        cases.append(("vcsum", y, "x0 x1 y5", []))
        cases.append(("dureader", "x0 x1 y5", y, []))
    lsht = ["农业、农村", "军事", "体育", "经济", "科技", "教育", "国际", "文化", "医疗卫生", "交通", "政法"]
    for _ in range(150):
        gt = rng.choice(lsht)
        picks = rng.sample(lsht, rng.randint(0, 3)) + ([gt] if rng.random() < 0.5 else [])
        p = rng.choice(["", "类别：", "这篇新闻属于"]) + "、".join(picks) + rng.choice(["", "。", "\n其他"])
        cases.append(("lsht", p, gt, lsht))
    for _ in range(80):
        n = rng.randint(1, 30)
        p = rng.choice([f"段落{n}", f"段落{n + 1}", f"答案是段落{n}和段落{n}0", "没有", f"{n}，{n}，7", f"段落{n:03d}",
                        f"段落１２ {n}"])
        cases.append(("passage_retrieval_zh", p, f"段落{n}", []))
    # numeric answers, as LongBench's passage_count files hold them: str(15) == "15"
    for _ in range(80):
        n = rng.randint(0, 40)
        p = rng.choice([f"{n}", f"There are {n} unique paragraphs.", f"{n + 1}", f"{n}, {n}", "none", f"{n}.0", f"０{n}"])
        answer = rng.choice([n, n, float(n), str(n)])
        cases.append(("passage_count", p, answer, []))
    return cases


def record_sets(rng, cases):
    by_ds = {}
    for ds, p, a, c in cases:
        if len(p) + len(str(a)) > 4000:
            continue  # keep the sets small
        by_ds.setdefault(ds, []).append((p, a, c))
    sets = []
    for ds, recs in sorted(by_ds.items()):
        for _ in range(4):
            n = rng.randint(1, 25)
            picked = [rng.choice(recs) for _ in range(n)]
            preds = [("\n" * rng.randint(0, 2)) + p + (("\n" + rng.choice(recs)[0]) if rng.random() < 0.4 else "")
                     for p, _, _ in picked]
            answers = []
            for _, a, _ in picked:
                extra = [rng.choice(recs)[1] for _ in range(rng.randint(0, 2))]
                answers.append([a] + extra)
            classes = [c if c else None for _, _, c in picked]
            lengths = [rng.choice([0, 3999, 4000, 7999, 8000, rng.randint(0, 20000)]) for _ in picked]
            sets.append((ds, preds, answers, classes, lengths))
    return sets


def nan_safe(x):
    x = float(x)
    return "NaN" if math.isnan(x) else x


if __name__ == "__main__":
    out_path = sys.argv[1]
    src = official_dir(sys.argv[2] if len(sys.argv) > 2 else None)
    sys.path.insert(0, src)
    import difflib
    import warnings

    import jieba
    import numpy as np
    jieba.setLogLevel(60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fuzzywuzzy import fuzz
        import eval as official  # forgetting-transformer's eval/longbench/eval.py
        import metrics as official_metrics
    if fuzz.SequenceMatcher is not difflib.SequenceMatcher:
        raise SystemExit("python-Levenshtein is installed; LongBench's setup has difflib's SequenceMatcher")

    def call_metric(ds, p, a, c):
        # Same call depth as eval.py's scorer: <module> -> this -> metric.
        return official.dataset2metric[ds](p, a, all_classes=c)

    rng = random.Random(20261124)
    words = dictionary_words()
    golden = {"source": f"forgetting-transformer eval/longbench @ {COMMIT}; jieba {jieba.__version__}, rouge 1.0.1, "
                        f"fuzzywuzzy 0.18.0 (difflib), numpy {np.__version__}, CPython {sys.version.split()[0]}",
              "metric": [], "normalize_zh": [], "sets": []}
    cases = metric_cases(rng, words)
    for ds, p, a, c in cases:  # plain loops: a comprehension would add a frame
        value = call_metric(ds, p, a, c)
        golden["metric"].append({"dataset": ds, "prediction": p, "answer": a, "all_classes": c, "value": float(value)})
    for ds, p, a, c in cases:
        if ds == "multifieldqa_zh":
            golden["normalize_zh"].append({"text": p, "normalized": official_metrics.normalize_zh_answer(p)})
    for ds, preds, answers, classes, lengths in record_sets(rng, cases):
        s = official.scorer(ds, preds, answers, classes[-1])
        se = official.scorer_e(ds, preds, answers, lengths, classes[-1])
        golden["sets"].append({"dataset": ds, "predictions": preds, "answers": answers, "all_classes": classes,
                               "lengths": lengths, "score": s, "score_e": {k: nan_safe(v) for k, v in se.items()}})
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {out_path}: " + ", ".join(f"{k} {len(v)}" for k, v in golden.items() if isinstance(v, list)))
