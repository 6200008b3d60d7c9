#!/usr/bin/env python3
"""Writes tests/fixtures/loss_text/: a small text corpus as researchers hold one, and its tokens by
tiktoken, for `foxeval loss --text` (tests/test_loss_text.cpp, tests/cli_loss_text_test.sh).

  hub/datasets--deepmind--pg19/            PG-19's layout in the Hugging Face hub cache: refs/main ->
                                           snapshots/{commit}/data/test-0000N-of-00002.parquet
                                           (columns short_book_title, publication_date, url, text)
  hub/datasets--deepmind--narrativeqa/     one row per question, the story in document.text
                                           (struct: id, kind, url, file_size, word_count, start,
                                           end, summary, text), stories repeated as in the dataset
  folder/                                  the same books as a.jsonl (field "text"), b.txt
  golden.json                              per book (in the shards' order): json_gpt2_ids =
                                           tiktoken gpt2 encode(json.dumps(text)[1:-1],
                                           allowed_special={"<|endoftext|>"}), the official
                                           JSONGPT2Tokenizer's ids without BOS; per story the same

The texts are generated here (made-up words, no text taken from elsewhere) and mix what the
JSON escaping and the BPE must get right: quotes, backslashes, newlines and tabs, accented and CJK
letters, astral characters, a literal <|endoftext|>.

Usage: .venv/bin/python tests/tools/make_loss_text_fixtures.py   (uses data/gpt2, no network)
"""
import json
import os
import random

import pyarrow as pa
import pyarrow.parquet as pq

from gpt2_tiktoken import ROOT, gpt2_encoding  # this folder

OUT = os.path.join(ROOT, "tests", "fixtures", "loss_text")
COMMIT = "0123456789abcdef0123456789abcdef01234567"


SYLLABLES = ["ka", "lo", "mi", "ren", "tha", "vos", "qu", "el", "dra", "sin", "or", "pe"]
EXTRAS = [", ", ". ", ".\n", "\n\n", ' "', '" ', "'s ", " \u00e9t\u00e9 ", " \u65e5\u672c ", " \U0001F642 ",
          "\t", " \\ ", " -- ", "; ", "! ", "? ", " 1923 ", " <|endoftext|> "]


def book(rng, words):
    out = []
    for _ in range(words):
        out.append("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3))))
        out.append(rng.choice(EXTRAS) if rng.random() < 0.25 else " ")
    return "".join(out).strip()


def main():
    rng = random.Random(20261128)
    enc = gpt2_encoding()
    ids = lambda text: enc.encode(json.dumps(text)[1:-1], allowed_special={"<|endoftext|>"})
    # Lengths around the tests' --seq-len 96: some books shorter (skipped), some much longer.
    words = [150, 40, 90, 20, 300, 70, 130]
    books = [book(rng, w) for w in words]
    titles = [f"Book {i}" for i in range(len(books))]
    snap = os.path.join(OUT, "hub", "datasets--deepmind--pg19")
    os.makedirs(os.path.join(snap, "refs"), exist_ok=True)
    open(os.path.join(snap, "refs", "main"), "w").write(COMMIT)
    data = os.path.join(snap, "snapshots", COMMIT, "data")
    os.makedirs(data, exist_ok=True)
    for shard, (lo, hi) in enumerate([(0, 4), (4, len(books))]):
        table = pa.table({"short_book_title": titles[lo:hi], "publication_date": [1900 + i for i in range(lo, hi)],
                          "url": [f"https://example.org/{i}" for i in range(lo, hi)], "text": books[lo:hi]})
        pq.write_table(table, os.path.join(data, f"test-{shard:05d}-of-00002.parquet"))

    # NarrativeQA: questions repeat their story; foxeval reads each story once (document.id).
    stories = [book(rng, w) for w in [120, 160]]
    rows = []
    for q, s in enumerate([0, 0, 1, 0, 1]):
        rows.append({"document": {"id": f"story{s}", "kind": "gutenberg", "url": "", "file_size": len(stories[s]),
                                  "word_count": 0, "start": "", "end": "", "summary": {"text": "", "tokens": []},
                                  "text": stories[s]},
                     "question": {"text": f"question {q}?", "tokens": []}, "answers": []})
    snap = os.path.join(OUT, "hub", "datasets--deepmind--narrativeqa")
    os.makedirs(os.path.join(snap, "refs"), exist_ok=True)
    open(os.path.join(snap, "refs", "main"), "w").write(COMMIT)
    data = os.path.join(snap, "snapshots", COMMIT, "data")
    os.makedirs(data, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), os.path.join(data, "test-00000-of-00001.parquet"))

    # The same books as a folder: a.jsonl holds books 0..5, b.txt book 6 (one file, one document).
    folder = os.path.join(OUT, "folder")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "a.jsonl"), "w") as f:
        for t in books[:-1]:
            f.write(json.dumps({"id": 0, "text": t}) + "\n")
    with open(os.path.join(folder, "b.txt"), "w", encoding="utf-8", newline="") as f:
        f.write(books[-1])

    golden = {"about": "tiktoken gpt2 encode(json.dumps(text)[1:-1], allowed_special={'<|endoftext|>'}), no BOS",
              "pg19_json_gpt2_ids": [ids(t) for t in books],
              "narrativeqa_json_gpt2_ids": [ids(t) for t in stories]}
    with open(os.path.join(OUT, "golden.json"), "w") as f:
        json.dump(golden, f)
    print("wrote", OUT, [len(g) for g in golden["pg19_json_gpt2_ids"]], [len(g) for g in golden["narrativeqa_json_gpt2_ids"]])


if __name__ == "__main__":
    main()
