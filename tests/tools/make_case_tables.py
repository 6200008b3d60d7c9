#!/usr/bin/env python3
"""CPython's str.upper() and the title case of str.capitalize()'s first character, as tables for
foxeval's lm-eval string operations (tasks/lm_eval/pystr.h), plus all-code-point goldens.

    python3 tests/tools/make_case_tables.py      # system python3 = CPython 3.11.7, unicodedata 14.0.0
                                                 # (/work/main/.venv/bin/python is the same interpreter)
writes
    data/python/case_tables.cpp                 kUpper, kTitle (one-to-one mappings as runs with a
                                                  delta) and kSpecial (every code point whose upper or
                                                  title case is several characters: both in full);
    tests/fixtures/lm_eval/case_goldens.json      chr(c).upper(), chr(c).capitalize(), chr(c).lower()
                                                  for every code point where the result is not chr(c).

Lower case is not tabulated here: pystr calls foxeval::py_lower, whose tables
(data/python/unicode_tables.cpp, from tests/tools/longbench_metrics_golden.py tables) this
script checks against this interpreter's str.lower() before writing anything.

Self-check: the tables are read back the way pystr.cpp reads them and must reproduce
chr(c).upper() and chr(c).capitalize() for every code point (0..0x10FFFF without surrogates), and
longbench's lowercase runs and Final_Sigma classes must reproduce chr(c).lower(); otherwise
nothing is written.
"""
import bisect
import json
import os
import re
import sys
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLES = os.path.join(ROOT, "data", "python", "case_tables.cpp")
GOLDENS = os.path.join(ROOT, "tests", "fixtures", "lm_eval", "case_goldens.json")
LONGBENCH_TABLES = os.path.join(ROOT, "data", "python", "unicode_tables.cpp")
MAX_FULL = 3  # CPython's _PyUnicode_To*Full write at most 3 code points

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from longbench_metrics_golden import code_points, sigma_classes, set_ranges  # noqa: E402

CODE_POINTS = code_points()


def runs_of(singles):
    """[(c, delta)] sorted by c -> [(first, last, stride, delta)]: c maps to c + delta for
    c = first, first + stride, ..., last. A run only grows by the next entry of `singles`, so runs
    never interleave (what the C++ lookup by `first` relies on). Same scheme as longbench's kLower."""
    runs = []
    for c, d in singles:
        if runs:
            first, last, stride, delta = runs[-1]
            if delta == d and ((first == last and c - last in (1, 2)) or (first != last and c - last == stride)):
                runs[-1] = (first, c, c - last if first == last else stride, d)
                continue
        runs.append((c, c, 1, d))
    return runs


def lookup_runs(runs, c):
    """tasks/lm_eval/pystr.cpp's map_runs (and longbench's lower_one)."""
    i = bisect.bisect_right([r[0] for r in runs], c)
    if i == 0:
        return c
    first, last, stride, delta = runs[i - 1]
    return c + delta if c <= last and (c - first) % stride == 0 else c


def build():
    upper = {c: chr(c).upper() for c in CODE_POINTS}
    title = {c: chr(c).capitalize() for c in CODE_POINTS}  # one character: its full title case
    special = sorted(c for c in CODE_POINTS if len(upper[c]) != 1 or len(title[c]) != 1)
    if any(len(upper[c]) > MAX_FULL or len(title[c]) > MAX_FULL for c in special):
        raise SystemExit("a case mapping longer than 3 code points; widen Special in case_tables.h")
    sp = set(special)
    k_upper = runs_of([(c, ord(upper[c]) - c) for c in CODE_POINTS if c not in sp and upper[c] != chr(c)])
    k_title = runs_of([(c, ord(title[c]) - c) for c in CODE_POINTS if c not in sp and title[c] != chr(c)])
    return k_upper, k_title, [(c, upper[c], title[c]) for c in special]


def check_tables(k_upper, k_title, k_special):
    special = {c: (u, t) for c, u, t in k_special}
    bad = []
    for c in CODE_POINTS:
        if c in special:
            u, t = special[c]
        else:
            u, t = chr(lookup_runs(k_upper, c)), chr(lookup_runs(k_title, c))
        if u != chr(c).upper() or t != chr(c).capitalize():
            bad.append(c)
    if bad:
        raise SystemExit("tables do not reproduce str.upper/str.capitalize at " + ", ".join(f"U+{c:04X}" for c in bad[:20]))


def check_longbench_lower():
    """pystr's lower case is longbench's py_lower: its committed tables must be this Python's."""
    src = open(LONGBENCH_TABLES, encoding="utf-8").read()
    version = re.search(r"CPython (\S+) \(unicodedata (\S+)\)", src)
    if not version or version.group(2) != unicodedata.unidata_version:
        raise SystemExit(f"{LONGBENCH_TABLES} is not from unicodedata {unicodedata.unidata_version}")

    def parse(name, width):
        m = re.search(r"\b" + name + r"\[\d+\] = \{(.*?)\};", src, re.S)
        if not m:
            raise SystemExit(f"{name} not found in {LONGBENCH_TABLES}")
        return [tuple(int(x, 0) for x in t) for t in re.findall(r"\{" + ", ".join([r"(-?\w+)"] * width) + r"\}", m.group(1))]

    k_lower = parse("kLower", 4)
    for c in CODE_POINTS:
        # longbench's py_lower: U+0130 -> "i\u0307", U+03A3 by Final_Sigma (alone: U+03C3), else kLower.
        want = chr(c).lower()
        got = "i\u0307" if c == 0x130 else "\u03c3" if c == 0x3A3 else chr(lookup_runs(k_lower, c))
        if got != want:
            raise SystemExit(f"longbench's lowercase tables differ from str.lower() at U+{c:04X}")
    ignorable, cased = sigma_classes()
    if parse("kCaseIgnorable", 2) != set_ranges(ignorable) or parse("kCased", 2) != set_ranges(cased):
        raise SystemExit("longbench's Final_Sigma classes differ from this Python's str.lower()")


def write_tables(k_upper, k_title, k_special):
    def cps(s):
        return "{" + ", ".join(f"0x{ord(x):X}" for x in s.ljust(MAX_FULL, "\0")) + "}"

    lines = [
        "// GENERATED by tests/tools/make_case_tables.py; do not edit.",
        f"// Case mappings of CPython {sys.version.split()[0]} (unicodedata {unicodedata.unidata_version}):",
        "// str.upper() and the title case that str.capitalize() gives its first character.",
        '#include "data/python/case_tables.h"',
        "",
        "namespace foxeval::case_tables {",
    ]
    for name, runs, doc in (("kUpper", k_upper, "chr(c).upper(), one character, not in kSpecial"),
                            ("kTitle", k_title, "chr(c).capitalize() (its title case), one character, not in kSpecial")):
        lines += ["", f"// {doc}", f"const CaseRun {name}[{len(runs)}] = {{"]
        for i in range(0, len(runs), 4):
            lines.append("    " + " ".join(f"{{0x{a:X}, 0x{b:X}, {s}, {d}}}," for a, b, s, d in runs[i:i + 4]))
        lines += ["};", f"const size_t {name}Count = {len(runs)};"]
    lines += ["", "// Several characters in upper or title case: both mappings in full, 0-padded.",
              f"const FullCase kSpecial[{len(k_special)}] = {{"]
    for c, u, t in k_special:
        lines.append(f"    {{0x{c:X}, {cps(u)}, {cps(t)}}},")
    lines += ["};", f"const size_t kSpecialCount = {len(k_special)};", "",
              "}  // namespace foxeval::case_tables", ""]
    with open(TABLES, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print(f"wrote {TABLES}: {len(k_upper)} upper runs, {len(k_title)} title runs, {len(k_special)} special")


def write_goldens():
    golden = {"source": f"CPython {sys.version.split()[0]}, unicodedata {unicodedata.unidata_version}: "
                        "[c, f(chr(c))] for every code point c (no surrogates) where f(chr(c)) != chr(c)"}
    for name, f in (("upper", str.upper), ("capitalize", str.capitalize), ("lower", str.lower)):
        golden[name] = [[c, f(chr(c))] for c in CODE_POINTS if f(chr(c)) != chr(c)]
    os.makedirs(os.path.dirname(GOLDENS), exist_ok=True)
    with open(GOLDENS, "w", encoding="utf-8") as f:  # one entry a line, ASCII escapes
        f.write("{\n" + f'"source": {json.dumps(golden["source"])}')
        for name in ("upper", "capitalize", "lower"):
            f.write(f',\n"{name}": [\n' + ",\n".join(json.dumps(e, separators=(",", ":")) for e in golden[name]) + "\n]")
        f.write("\n}\n")
    print(f"wrote {GOLDENS}: " + ", ".join(f"{n} {len(golden[n])}" for n in ("upper", "capitalize", "lower")))


if __name__ == "__main__":
    tables = build()
    check_tables(*tables)
    check_longbench_lower()
    write_tables(*tables)
    write_goldens()
