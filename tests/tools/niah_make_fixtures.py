#!/usr/bin/env python3
"""Writes tests/fixtures/niah/: a small haystack written for foxeval that stresses the prompt
builder (non-ASCII, astral characters cut between their two \\u escapes, backslashes, CR/CRLF,
a literal <|endoftext|>, control characters, hidden and upper-case files that glob must skip),
and golden prompt files from tests/tools/niah_reference.py on it and on the Paul Graham essays
(no essay text: those prompts are compared live by tests/cli_niah_test.sh). Run from the repository root with .venv/bin/python.
"""
import os
import random
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "niah")
HAY = os.path.join(OUT, "haystack_tricky")
PIECES = ["The cat sat. ", "Naïve café — “quotes” ", "emoji 😀🎉 here. ", "back\\slash \\u00e9 \\n \\\\ ",
          "tab\there\r\n", "CR only\rline. ", "<|endoftext|>", "\"quoted\" ", "日本語のテキスト。", "x\x7fy\x01z. ",
          "Mr. Smith went... to Washington!? ", "2024-01-01 12:30. ", "\\", "𝔘𝔫𝔦 ", ".", " .\n", "\u2028 "]
LENGTHS = "201,215,260,300,457,800"
DEPTHS = "0,7,33,50,90,100"


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(HAY)
    rng = random.Random(11)
    for name in ["b.txt", "a.txt", "Z.txt", "é.txt"]:
        with open(os.path.join(HAY, name), "w", encoding="utf-8", newline="") as f:
            f.write("".join(rng.choice(PIECES) for _ in range(rng.randint(20, 60))))
    for name, text in [(".hidden.txt", "HIDDEN"), ("upper.TXT", "UPPER"), ("notes.md", "NOTES")]:
        with open(os.path.join(HAY, name), "w") as f:
            f.write(text)
    ref = os.path.join(ROOT, "tests", "tools", "niah_reference.py")
    for mode in ["standard", "easy"]:
        subprocess.check_call([sys.executable, ref, "--haystack", HAY, "--mode", mode, "--lengths", LENGTHS,
                               "--depths", DEPTHS, "--out", os.path.join(OUT, "tricky_" + mode)])
    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write("Made by tests/tools/niah_make_fixtures.py: haystack_tricky/ (text written for foxeval) and\n"
                "prompt files from tests/tools/niah_reference.py (the official prompt.py logic) on it\n"
                f"(lengths {LENGTHS}, depths {DEPTHS}).\n"
                "The essays are never committed: tests/cli_niah_test.sh compares them with the reference live.\n")


if __name__ == "__main__":
    main()
