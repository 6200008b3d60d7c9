#!/usr/bin/env python3
"""Goldens for foxeval's port of nltk's Punkt sentence splitter (data/python/punkt.h).

Writes synthetic Punkt parameters in nltk's punkt_tab layout under
tests/fixtures/ruler/nltk_data/tokenizers/punkt_tab/english/ (abbreviations, collocations, sentence
starters, orthographic contexts: made up here, not nltk's trained English model, which this
repository does not ship; the algorithm is what must equal nltk's), then runs
nltk.sent_tokenize(text) with NLTK_DATA pointing there over generated texts (abbreviations,
initials, numbers, ellipses, quotes and brackets after sentence ends, "?!", line and paragraph
breaks, curly quotes, non-ASCII letters, combining marks, odd whitespace) and writes
tests/fixtures/ruler/punkt_goldens.jsonl: one {"text", "sentences"} a line.

    /opt/ruler-venv/bin/python tests/tools/punkt_goldens.py     # nltk 3.10.4 (scripts/setup.sh)
"""
import json
import os
import random
import sys

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "ruler")
DATA = os.path.join(FIX, "nltk_data")
LANG_DIR = os.path.join(DATA, "tokenizers", "punkt_tab", "english")

ABBREVS = ["mr", "mrs", "dr", "etc", "e.g", "i.e", "u.s", "inc", "vs", "st", "jan", "no", "fig", "prof"]
COLLOCATIONS = [("s", "bach"), ("##number##", "percent"), ("st", "louis"), ("j", "smith"), ("dr", "who")]
STARTERS = ["the", "but", "however", "in", "it", "this", "we", "he", "and"]
WORDS = ["the", "The", "cat", "Cat", "sat", "on", "mat", "But", "but", "however", "However", "In", "in",
         "It", "it", "this", "This", "we", "We", "he", "He", "and", "And", "Bach", "bach", "Louis", "Smith",
         "percent", "Who", "who", "Paris", "paris", "Apple", "apple", "über", "Über", "éclair", "Ωmega",
         "naïve", "cafe\u0301", "x\u00b2", "co-op", "self-driving", "e-mail", "U.S.A", "don't", "rock'n'roll",
         "3", "42", "1,000", "3.14", "-7", ".5", "2024", "x1", "A1"]
ENDERS = [".", ".", ".", "?", "!", "?!", "!!!", "...", "..", ". . .", ". . . .", ".'", '."', ".)", ".]",
          ".\u201d", ".\u2019", ".\u00bb", "!\u201d", ".\"')", ",", ";", ":", ""]
TOKENS_AFTER = ["Mr.", "Dr.", "etc.", "e.g.", "i.e.", "U.S.", "Inc.", "vs.", "St.", "Jan.", "No.", "fig.",
                "Prof.", "co-op.", "J.", "S.", "a.", "Z.", "é.", "3.", "42.", "1,000.", "3.14.", "1.5.", "-2.",
                "--", "---", "(", ")", "[", "]", "\"", "'", "\u201c", "\u2018", "\u00ab", "*", "@", "&", "#",
                "`", "{", "}", "-", ",", ";", ":", "...", "?", "!", ".", "..a", "a..", "a.b.", "x.y"]
SPACES = [" ", " ", " ", " ", "  ", "\n", "\n\n", "\t", " \n ", "\u00a0", "\u2003", "\x1c", "\x85", "\r\n",
          "\u3000", "\v", "\f", " \n\n\n "]


def write_params(rng):
    os.makedirs(LANG_DIR, exist_ok=True)
    with open(os.path.join(LANG_DIR, "abbrev_types.txt"), "w", encoding="utf-8", newline="") as f:
        f.write("\n".join(ABBREVS) + "\n")
    with open(os.path.join(LANG_DIR, "collocations.tab"), "w", encoding="utf-8", newline="") as f:
        f.write("\n".join(f"{a}\t{b}" for a, b in COLLOCATIONS) + "\n")
    with open(os.path.join(LANG_DIR, "sent_starters.txt"), "w", encoding="utf-8", newline="") as f:
        f.write("\n".join(STARTERS) + "\n")
    # Orthographic contexts for most lowercased word types (flags 2..64, as the trainer sets them).
    types = sorted({w.lower() for w in WORDS + [t.rstrip(".") for t in TOKENS_AFTER]} | {"##number##"})
    with open(os.path.join(LANG_DIR, "ortho_context.tab"), "w", encoding="utf-8", newline="") as f:
        for t in types:
            if t and "\t" not in t and rng.random() < 0.85:
                f.write(f"{t}\t{rng.randrange(0, 128) & ~1}\n")


def make_text(rng):
    parts = []
    for _ in range(rng.randrange(1, 30)):
        r = rng.random()
        if r < 0.55:
            parts.append(rng.choice(WORDS))
        elif r < 0.85:
            parts.append(rng.choice(TOKENS_AFTER))
        else:
            parts.append(rng.choice(WORDS) + rng.choice(ENDERS))
        if rng.random() < 0.3:
            parts[-1] += rng.choice(ENDERS)
        if rng.random() < 0.1:
            parts[-1] = rng.choice(["(", "\"", "'", "\u201c", "[", "\u00ab"]) + parts[-1]
        parts.append(rng.choice(SPACES))
    text = "".join(parts)
    if rng.random() < 0.5:
        text = text.strip()
    return text


def main():
    rng = random.Random(5252)
    write_params(rng)
    os.environ["NLTK_DATA"] = DATA
    import nltk  # after NLTK_DATA: nltk.data.path reads it at import

    texts = [make_text(rng) for _ in range(4000)]
    texts += ["", " ", "Hello.", "Hello. World.", "Mr. Smith went to Washington. He said hi.",
              "(Sent1.) Sent2.", "\"Yes!\" he said. 'No.' She left.", "a . . . b. C", "End..",
              "Very bad acting!!! I promise.", "J. S. Bach wrote it. The end.", "It is 5 p.m. Now go."]
    with open(os.path.join(FIX, "punkt_goldens.jsonl"), "w", encoding="utf-8") as f:
        for t in texts:
            f.write(json.dumps({"text": t, "sentences": nltk.sent_tokenize(t)}, ensure_ascii=False) + "\n")
    print(f"wrote {len(texts)} texts; nltk {nltk.__version__}, python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
