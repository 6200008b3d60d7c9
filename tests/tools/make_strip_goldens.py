"""Goldens for data/python/str_strip.h: Python 3's str.strip(), lstrip() and rstrip() (no argument)
over generated strings. Every whitespace character str.isspace() knows (all of sys.maxunicode
scanned) and a few that are not whitespace but look or sound like it (U+200B, U+FEFF, U+180E)
are mixed with letters, CJK and emoji at both ends and inside.

    python3 tests/tools/make_strip_goldens.py > tests/fixtures/python/strip_goldens.json
"""
import json
import random
import sys

SPACES = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
OTHERS = ["a", "Z", "0", "_", ".", "\u00e9", "\u65e5", "\U0001F600", "\u200b", "\ufeff", "\u180e", "\x00", "\x7f"]


def main():
    rng = random.Random(20261129)
    cases = ["", " ", "a", "\u3000", "".join(SPACES), "x" + "".join(SPACES) + "y"]
    for _ in range(1500):
        n = rng.randint(0, 12)
        cases.append("".join(rng.choice(SPACES) if rng.random() < 0.6 else rng.choice(OTHERS) for _ in range(n)))
    rows = [[s, s.strip(), s.lstrip(), s.rstrip()] for s in cases]
    json.dump({"python": sys.version.split()[0], "spaces": SPACES, "cases": rows}, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
