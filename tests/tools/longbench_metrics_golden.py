#!/usr/bin/env python3
"""Goldens for foxeval's LongBench scorer (tasks/longbench/metrics.h), from the official Python.

Two jobs:
  tables  DIR   writes DIR/unicode_tables.cpp: the character classes of CPython's str methods and
                `re` that LongBench's metrics.py relies on (str.lower with its Final_Sigma rule,
                str.split's whitespace, re's \\w (isalnum) and \\d (isdecimal)), read off this
                interpreter's unicodedata. Run it with the Python the goldens are made with.
  golden  OUT   writes OUT (tests/fixtures/longbench/metrics_golden.json): per-(prediction, answer)
                metric values of metrics.py, eval.py's scorer / scorer_e on record sets, and
                Python's / NumPy's rounding and np.mean on hard values.

The official code is forgetting-transformer's eval/longbench (metrics.py, eval.py; commit
883f260c636e87971339749b0d8310004794a5cc), imported from --official DIR, by default extracted from
the fetched mirror. Its requirements.txt leaves the packages unpinned; the goldens were made with
rouge 1.0.1, fuzzywuzzy 0.18.0 WITHOUT python-Levenshtein (so fuzz.ratio is difflib's
SequenceMatcher), jieba 0.42.1, numpy 2.4.6, CPython 3.11.7:
    python3 -m venv /tmp/lbm-venv
    /tmp/lbm-venv/bin/pip install rouge==1.0.1 fuzzywuzzy==0.18.0 jieba==0.42.1 numpy
    /tmp/lbm-venv/bin/python tests/tools/longbench_metrics_golden.py tables data/python
    /tmp/lbm-venv/bin/python tests/tools/longbench_metrics_golden.py golden \\
        tests/fixtures/longbench/metrics_golden.json

Call depth matters: rouge's _recon recurses once per step of its LCS backtrack, and a
RecursionError is caught by metrics.py's bare `except` (score 0). eval.py calls the metric from
<module> -> scorer -> metric; this script calls it from <module> -> call_metric -> metric, the same
depth, so the goldens see the same recursion limit as eval.py does.
"""
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import unicodedata

MIRROR = "/work/.mirror/zhixuan-lin+forgetting-transformer/repo"
COMMIT = "883f260c636e87971339749b0d8310004794a5cc"


# ----------------------------------------------------------------------------------------------
# tables
# ----------------------------------------------------------------------------------------------

def code_points():
    return [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]


def ranges(pred):
    out, start, prev = [], None, None
    for c in code_points():
        if pred(c):
            if start is not None and c == prev + 1:
                prev = c
                continue
            if start is not None:
                out.append((start, prev))
            start = prev = c
    if start is not None:
        out.append((start, prev))
    return out


def lower_runs():
    """(first, last, stride, delta): chr(c).lower() == chr(c + delta) for c in first..last by stride."""
    singles = []
    for c in code_points():
        low = chr(c).lower()
        if len(low) == 1 and ord(low) != c:
            singles.append((c, ord(low) - c))
    runs = []
    for c, d in singles:
        if runs:
            first, last, stride, delta = runs[-1]
            if delta == d:
                if first == last and c - last in (1, 2):
                    runs[-1] = (first, c, c - last, d)
                    continue
                if first != last and c - last == stride:
                    runs[-1] = (first, c, stride, d)
                    continue
        runs.append((c, c, 1, d))
    return runs


def sigma_classes():
    """Case-ignorable and cased (among the not case-ignorable), probed through str.lower()'s
    Final_Sigma rule itself: 'AΣ'+c and 'AΣ'+c+'B'."""
    ignorable, cased = [], []
    for c in code_points():
        ch = chr(c)
        p1 = ("A\u03a3" + ch).lower()[1]
        p2 = ("A\u03a3" + ch + "B").lower()[1]
        if p1 == "\u03c2" and p2 == "\u03c3":
            ignorable.append(c)
        elif p1 == "\u03c3" and p2 == "\u03c3":
            cased.append(c)
        elif not (p1 == "\u03c2" and p2 == "\u03c2"):
            raise SystemExit(f"unexpected Final_Sigma probe for U+{c:04X}")
    return ignorable, cased


def set_ranges(values):
    s = set(values)
    return ranges(lambda c: c in s)


def emit_tables(out_dir):
    multi = [c for c in code_points() if len(chr(c).lower()) != 1]
    if multi != [0x130] or chr(0x130).lower() != "i\u0307":
        raise SystemExit(f"multi-character lowercase mappings changed: {multi}; update unicode.cpp")
    ignorable, cased = sigma_classes()
    tables = [
        ("kSpace", ranges(lambda c: chr(c).isspace()), "str.split() whitespace (str.isspace)"),
        ("kAlnum", ranges(lambda c: chr(c).isalnum()), "re's \\w without '_' (str.isalnum)"),
        ("kDecimal", ranges(lambda c: chr(c).isdecimal()), "re's \\d (str.isdecimal)"),
        ("kCaseIgnorable", set_ranges(ignorable), "Final_Sigma: case-ignorable"),
        ("kCased", set_ranges(cased), "Final_Sigma: cased and not case-ignorable"),
    ]
    lines = [
        "// GENERATED by tests/tools/longbench_metrics_golden.py tables; do not edit.",
        f"// Character classes of CPython {sys.version.split()[0]} (unicodedata {unicodedata.unidata_version})",
        "// that LongBench's metrics.py depends on through str.lower/str.split/re.",
        '#include "data/python/unicode_tables.h"',
        "",
        "namespace foxeval::unicode_tables {",
        "",
    ]
    runs = lower_runs()
    lines.append("// str.lower() of one code point, apart from U+0130 and Final_Sigma.")
    lines.append(f"const LowerRun kLower[{len(runs)}] = {{")
    for i in range(0, len(runs), 4):
        lines.append("    " + " ".join(f"{{0x{a:X}, 0x{b:X}, {s}, {d}}}," for a, b, s, d in runs[i:i + 4]))
    lines.append("};")
    lines.append(f"const size_t kLowerCount = {len(runs)};")
    for name, rs, doc in tables:
        lines.append("")
        lines.append(f"// {doc}")
        lines.append(f"const CodeRange {name}[{len(rs)}] = {{")
        for i in range(0, len(rs), 6):
            lines.append("    " + " ".join(f"{{0x{a:X}, 0x{b:X}}}," for a, b in rs[i:i + 6]))
        lines.append("};")
        lines.append(f"const size_t {name}Count = {len(rs)};")
    lines += ["", "}  // namespace foxeval::unicode_tables", ""]
    path = os.path.join(out_dir, "unicode_tables.cpp")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print(f"wrote {path}: {len(runs)} lowercase runs, " +
          ", ".join(f"{n} {len(r)} ranges" for n, r, _ in tables))


if __name__ == "__main__" and len(sys.argv) >= 2 and sys.argv[1] == "tables":
    emit_tables(sys.argv[2])
    sys.exit(0)


# ----------------------------------------------------------------------------------------------
# goldens
# ----------------------------------------------------------------------------------------------

def official_dir(arg):
    if arg:
        return arg
    d = tempfile.mkdtemp(prefix="longbench-official-")
    for name in ("metrics.py", "eval.py"):
        src = subprocess.run(["git", "-C", MIRROR, "show", f"{COMMIT}:eval/longbench/{name}"],
                             check=True, capture_output=True, text=True).stdout
        with open(os.path.join(d, name), "w", encoding="utf-8") as f:
            f.write(src)
    return d


WORDS = ("the a an The A AN answer paris London is was of to and in it for on with as by cat dog "
         "report meeting summary 1990 42 3.14 co-operate U.S. don't e.g. state-of-the-art").split()
UNICODE = ["café", "cafe\u0301", "naïve", "Ångström", "ÉCOLE", "straße", "STRASSE", "İstanbul", "ΟΔΟΣ",
           "ΣΟΦΟΣ.", "Σ", "ΑΣ'Β", "Москва", "ПРИВЕТ", "北京", "中华人民共和国", "段落12", "ｆｕｌｌ",
           "１２３", "٣٤", "Ⅻ", "½", "²", "x²", "a\u00a0the", "the\u3000a", "an\u2028b", "c\u0085d",
           "\u200bthe", "emoji😀", "ǅemal", "ᾼ", "K", "ﬁne", "Ⓐ", "Ω", "µ", "\ufeffbom"]
PUNCT = list(".,;:!?\"'()[]{}-_/\\@#$%^&*~`|<>+=") + ["…", "—", "“", "”", "，", "。", "¿", "«", "»"]
SPACES = [" ", " ", " ", "  ", "\t", "\n", "\r\n", "\n\n", " \n ", "\u00a0", "\u3000", "\x0b", "\x1c"]
CODE_LINES = [
    "def f(x):", "    return x + 1  # add one", "# a comment", "// another comment",
    "int main() { return 0; }", "```python", "for (int i = 0; i < n; ++i) {", "    total += a[i];",
    "}", "print('hello, world')", "x = y // 2", "s = \"a#b\"", "    self.assertEqual(a, b)",
    "public static void main(String[] args) {", "import numpy as np", "", "    ", "return result;",
]


def rand_text(rng, n_min=0, n_max=12, unicode_p=0.2, punct_p=0.2):
    out = []
    for _ in range(rng.randint(n_min, n_max)):
        r = rng.random()
        if r < unicode_p:
            out.append(rng.choice(UNICODE))
        elif r < unicode_p + punct_p:
            out.append(rng.choice(PUNCT))
        else:
            out.append(rng.choice(WORDS))
        out.append(rng.choice(SPACES) if rng.random() < 0.8 else "")
    return "".join(out)


def near(rng, text):
    """A prediction close to `text`: words dropped, swapped, repeated, re-cased."""
    words = text.split(" ")
    out = []
    for w in words:
        r = rng.random()
        if r < 0.15:
            continue
        if r < 0.25:
            out.append(w.upper())
        elif r < 0.35:
            out.extend([w, w])
        else:
            out.append(w)
        if rng.random() < 0.1:
            out.append(rng.choice(WORDS))
    return " ".join(out)


def long_line(rng, n):
    s = []
    while sum(len(x) for x in s) < n:
        s.append(rng.choice(["x", "y", "self", "=", "(", ")", " ", "_", "a", "e", "0", "1", ",", ".",
                             "data", "é", "中", "return", "    "]))
    return "".join(s)


def fuzz_pairs(rng):
    pairs = [("", ""), ("", "a"), ("a", ""), ("abc", "abc"), ("abcd", "bcde"), ("ab", "acab"),
             ("private Thread currentThread;", "private volatile Thread currentThread;"),
             ("café", "cafe\u0301"), ("北京欢迎你", "欢迎你北京"), ("😀x", "x😀")]
    for _ in range(60):
        a = long_line(rng, rng.choice([5, 50, 150, 199, 200, 201, 250, 400, 800]))
        b = long_line(rng, rng.choice([5, 50, 150, 199, 200, 201, 250, 400, 800]))
        pairs.append((a, b))
        pairs.append((a, a[: len(a) // 2] + "zz" + a[len(a) // 2:]))
    # exactly 200 elements with one popular element (more than 200 // 100 + 1 = 3 occurrences)
    pairs.append(("q" * 10 + "r" * 190, "q" * 4 + "r" * 196))
    pairs.append(("abcde" * 40, "abcde" * 40 + "f"))
    pairs.append(("a" * 199, "a" * 199 + "b"))
    pairs.append(("a" * 200, "a" * 199 + "b"))
    pairs.append(("xa" * 150, ("ab" * 150)))
    return pairs


def metric_cases(rng):
    cases = []  # (dataset, prediction, answer, all_classes)
    qa = ["The Eiffel Tower", "an apple a day", "Paris, France.", "the the the", "A", "a an the",
          "", "   ", "1990", "U.S.A.", "İstanbul", "ΟΔΟΣ", "ΣΟΦΟΣ", "café", "cafe\u0301", "don't stop",
          "Москва", "北京 大学", "x\u00a0y", "the\u3000answer", "e\u0301a\u0301", "the_a", "ǅemal"]
    for a in qa:
        for p in qa[:8] + [a, a.upper(), a.lower(), near(rng, a)]:
            cases.append(("qasper", p, a, []))
    for _ in range(250):
        a = rand_text(rng, 0, 10)
        p = near(rng, a) if rng.random() < 0.6 else rand_text(rng, 0, 14)
        cases.append((rng.choice(["qasper", "narrativeqa", "triviaqa", "hotpotqa"]), p, a, []))

    rouge_fixed = [("", "a b"), ("a b", ""), (".", "a"), ("...", "x. y"), (" . ", " . "), (" ", "a"),
                   ("a. b. c.", "a b c"), ("The cat sat. The dog ran.", "the cat sat on the mat."),
                   ("word word word", "word"), ("x  y\t z", "x y z"), ("a.b", "b.a"),
                   ("Σ. σ", "σ"), ("北京 欢迎 你。", "北京 欢迎 你"), ("3.14 is pi", "pi is 3.14"),
                   ("a\u00a0b. c", "a b. c")]
    for p, a in rouge_fixed:
        cases.append(("gov_report", p, a, []))
    for _ in range(200):
        a = rand_text(rng, 0, 60, punct_p=0.25)
        p = near(rng, a) if rng.random() < 0.6 else rand_text(rng, 0, 60, punct_p=0.25)
        cases.append((rng.choice(["gov_report", "qmsum", "multi_news", "samsum"]), p, a, []))
    # rouge's recursion limit: one sentence each; the LCS backtrack depth crosses 991
    for m in (985, 989, 990, 991, 992, 1000):
        y = " ".join(f"y{i}" for i in range(m))
        cases.append(("gov_report", y, "x0 x1 y5", []))
        cases.append(("gov_report", "x0 x1 y5", y, []))
    for m in (493, 494, 495, 496, 497):
        words = [f"w{rng.randrange(600)}" for _ in range(m)]
        cases.append(("gov_report", " ".join(words), " ".join(near(rng, w) for w in words), []))

    trec = ["Abbreviation", "Expression abbreviated", "Animal", "Organ of body", "Color", "Date",
            "Other entity", "Other location", "Other number", "City", "Country", "Number of something",
            "Description of something", "Definition of something", "Manner of an action"]
    lsht = ["农业、农村", "军事", "体育", "经济", "科技", "教育", "国际", "文化", "医疗卫生"]
    for _ in range(150):
        classes = trec if rng.random() < 0.6 else lsht
        gt = rng.choice(classes)
        picks = rng.sample(classes, rng.randint(0, 4)) + ([gt] if rng.random() < 0.5 else [])
        p = rng.choice(["", "Type: ", "The answer is "]) + " ".join(picks) + rng.choice(["", ".", "\nmore"])
        cases.append(("trec" if classes is trec else "lsht", p, gt, classes))
    # duplicates and substring classes: the remove-while-iterating quirk
    dup = ["Other", "Other entity", "Other", "entity", "Other location"]
    for p in ["Other entity", "Other", "Other location and Other entity", "entity Other", "nothing"]:
        for gt in ["Other", "Other entity", "entity", "Other location"]:
            cases.append(("trec", p, gt, dup))
    cases.append(("trec", "anything", "", ["", "x"]))

    for _ in range(60):
        n = rng.randint(1, 30)
        gt = f"Paragraph {n}"
        p = rng.choice([f"Paragraph {n}", f"Paragraph {n + 1}", f"Paragraphs {n} and {n}0",
                        f"段落{n}", "none", f"{n}, {n}, 7", f"Paragraph ١٢ {n}", f"Paragraph {n:03d}"])
        cases.append(("passage_retrieval_en", p, gt, []))
        cases.append(("passage_retrieval_zh", p.replace("Paragraph ", "段落"), f"段落{n}", []))
        cases.append(("passage_count", p, str(n), []))
    cases.append(("passage_retrieval_en", "3", "The answer is Paragraph x, Paragraph 3", []))
    cases.append(("passage_retrieval_en", "3", "no paragraph here", []))
    cases.append(("passage_retrieval_zh", "3", "Paragraph 3", []))
    cases.append(("passage_count", "１２ and 12", "12", []))
    cases.append(("passage_count", "１２ and 12", "１２", []))

    for _ in range(120):
        gt = rng.choice(CODE_LINES[:14]) if rng.random() < 0.5 else long_line(rng, rng.choice([30, 190, 210, 400]))
        lines = [rng.choice(CODE_LINES) for _ in range(rng.randint(0, 4))]
        lines.insert(rng.randint(0, len(lines)), near(rng, gt) if rng.random() < 0.7 else gt)
        p = ("\n" * rng.randint(0, 2)) + "\n".join(lines)
        cases.append((rng.choice(["lcc", "repobench-p"]), p, gt, []))
    for p, a in [("", ""), ("", "x"), ("\n\n", ""), ("# only comments\n// and more", ""),
                 ("# c\n\nx = 1", "x = 1"), ("```\nx = 1\n```", "x = 1"), ("x=1\n", "x = 1")]:
        cases.append(("lcc", p, a, []))
    return cases


def multi_line(rng, text):
    parts = ["\n" * rng.randint(0, 3), text]
    if rng.random() < 0.6:
        parts.append("\n" + rand_text(rng, 1, 8))
    return "".join(parts)


def record_sets(rng, cases):
    by_ds = {}
    for ds, p, a, c in cases:
        if ds == "gov_report" and len(p) + len(a) > 3000:
            continue  # keep the dataset-level sets small
        by_ds.setdefault(ds, []).append((p, a, c))
    sets = []
    for ds, recs in sorted(by_ds.items()):
        for _ in range(3):
            n = rng.randint(1, 25)
            picked = [rng.choice(recs) for _ in range(n)]
            preds = [multi_line(rng, p) for p, _, _ in picked]
            answers = []
            for _, a, _ in picked:
                extra = [rng.choice(recs)[1] for _ in range(rng.randint(0, 2))]
                answers.append([a] + extra if rng.random() < 0.9 else [])
            classes = [c for _, _, c in picked]
            lengths = [rng.choice([0, 3999, 4000, 7999, 8000, rng.randint(0, 20000)]) for _ in picked]
            sets.append((ds, preds, answers, classes, lengths))
    # one bucket empty, and every record in one bucket
    sets.append(("qasper", ["Paris", "London"], [["Paris"], ["Paris"]], [[], []], [100, 200]))
    sets.append(("triviaqa", ["x"] * 300, [["x"]] * 100 + [["y"]] * 200, [[]] * 300, [9000] * 300))
    # the last record's all_classes is the one used for every record
    sets.append(("trec", ["City", "Animal", "Color"], [["City"], ["Animal"], ["Color"]],
                 [["City", "Animal", "Color"], ["City", "Animal", "Color"], ["Color"]], [1, 5000, 9000]))
    return sets


def nan_safe(x):
    x = float(x)
    return "NaN" if math.isnan(x) else x


def rounding_values(rng):
    vals = []
    for k in range(0, 10001, 23):
        x = (k + 0.5) / 100
        vals += [x, math.nextafter(x, 0), math.nextafter(x, 200)]
    vals += [0.005, 0.015, 0.025, 0.125, 0.375, 2.675, 1.005, 99.995, 100.0, 0.0, 1 / 3 * 100, 200 / 3]
    vals += [rng.random() * 100 for _ in range(300)]
    return vals


if __name__ == "__main__" and len(sys.argv) >= 2 and sys.argv[1] == "golden":
    out_path = sys.argv[2]
    src = official_dir(sys.argv[3] if len(sys.argv) > 3 else None)
    sys.path.insert(0, src)
    import difflib
    import warnings

    import numpy as np
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fuzzywuzzy import fuzz
        import eval as official  # forgetting-transformer's eval/longbench/eval.py
        import metrics as official_metrics
    if fuzz.SequenceMatcher is not difflib.SequenceMatcher:
        raise SystemExit("python-Levenshtein is installed; LongBench's setup has difflib's SequenceMatcher")

    def call_metric(ds, p, a, c):
        # Same call depth as eval.py's scorer: <module> -> this -> metric.
        assert sys._getframe(1).f_back is None or sys._getframe(1).f_code.co_name == "<module>"
        return official.dataset2metric[ds](p, a, all_classes=c)

    rng = random.Random(20261123)
    golden = {"source": f"forgetting-transformer eval/longbench @ {COMMIT}; rouge 1.0.1, fuzzywuzzy 0.18.0 "
                        f"(difflib), numpy {np.__version__}, CPython {sys.version.split()[0]}",
              "metric": [], "normalize": [], "fuzz_ratio": [], "sets": [],
              "lower": [], "python_round2": [], "numpy_round2": [], "numpy_mean": []}
    cases = metric_cases(rng)
    for ds, p, a, c in cases:  # plain loops: a comprehension would add a frame
        try:
            value = call_metric(ds, p, a, c)
            golden["metric"].append({"dataset": ds, "prediction": p, "answer": a, "all_classes": c,
                                     "value": float(value)})
        except IndexError:
            golden["metric"].append({"dataset": ds, "prediction": p, "answer": a, "all_classes": c,
                                     "error": "IndexError"})
    for ds, p, a, c in cases:
        if ds in ("qasper", "narrativeqa", "triviaqa", "hotpotqa"):
            golden["normalize"].append({"text": p, "tokens": official_metrics.normalize_answer(p).split()})
    for a, b in fuzz_pairs(rng):
        golden["fuzz_ratio"].append({"a": a, "b": b, "value": fuzz.ratio(a, b),
                                     "matches": sum(m.size for m in difflib.SequenceMatcher(None, a, b).get_matching_blocks())})
    scorable = [(g["dataset"], g["prediction"], g["answer"], g["all_classes"])
                for g in golden["metric"] if "error" not in g]
    for ds, preds, answers, classes, lengths in record_sets(rng, scorable):
        s = official.scorer(ds, preds, answers, classes[-1])
        se = official.scorer_e(ds, preds, answers, lengths, classes[-1])
        golden["sets"].append({"dataset": ds, "predictions": preds, "answers": answers,
                               "all_classes": classes, "lengths": lengths, "score": s,
                               "score_e": {k: nan_safe(v) for k, v in se.items()}})
    # str.lower() around U+03A3: cased, case-ignorable (U+0345 is both), other characters
    pool = ["\u03a3", "\u03a3", "\u03a3", "A", "\u0391", "a", "\u00aa", "\u02b0", "\u0345", "'", ".", ":",
            "\u00ad", "\u0301", "\u2019", " ", "1", "\u0130", "\u1e9e", "\u2126", "\u212a", "\u10a0",
            "\U00010400", "\u24b6", "\u01c5", "\u1fbc", "\u0100", "\u0179", "Z", "\u0410", "\u0531"]
    for _ in range(400):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(1, 8)))
        golden["lower"].append([text, text.lower()])
    for x in rounding_values(rng):
        golden["python_round2"].append([x, round(x, 2)])
        golden["numpy_round2"].append([x, float(round(np.float64(x), 2))])
    for n in [0, 1, 2, 7, 8, 9, 15, 16, 17, 127, 128, 129, 255, 256, 257, 300, 1000, 1029]:
        values = [rng.choice([0.0, 1.0, 0.5, 1 / 3, 2 / 7, rng.random()]) for _ in range(n)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            golden["numpy_mean"].append({"values": values, "mean": nan_safe(np.mean(values))})
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {out_path}: " + ", ".join(f"{k} {len(v)}" for k, v in golden.items() if isinstance(v, list)))
