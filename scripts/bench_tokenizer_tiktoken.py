#!/usr/bin/env python3
"""Single-thread speed of tiktoken's gpt2 `encode_ordinary` on JSON-escaped text, the baseline
for `foxeval bench tokenizer` (same files, same escaping json.dumps(text)[1:-1], same MB = 1e6
bytes of escaped text, median of --repeats runs after one warm-up).

  .venv/bin/python scripts/bench_tokenizer_tiktoken.py ESSAYS/*.txt   (ESSAYS: the NIAH haystack in ../shared/data)
  build/foxeval bench tokenizer --file ESSAYS/*.txt

Builds the encoding from the bundled data/gpt2 files, so it needs no network.
"""
import argparse
import json
import os
import statistics
import time

import tiktoken
import tiktoken.load
from tiktoken_ext.openai_public import r50k_pat_str

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def gpt2_encoding():
    gpt2 = os.path.join(ROOT, "data", "gpt2")
    ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=os.path.join(gpt2, "vocab.bpe"),
        encoder_json_file=os.path.join(gpt2, "encoder.json"))
    return tiktoken.Encoding(name="gpt2", pat_str=r50k_pat_str, mergeable_ranks=ranks,
                             special_tokens={"<|endoftext|>": 50256}, explicit_n_vocab=50257)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json", help="also write the results to this JSON file")
    args = ap.parse_args()

    enc = gpt2_encoding()
    texts = []
    for f in args.files:
        with open(f, encoding="utf-8") as fh:
            texts.append(json.dumps(fh.read())[1:-1])
    nbytes = sum(len(t.encode("utf-8")) for t in texts)
    tokens = sum(len(enc.encode_ordinary(t)) for t in texts)  # also the warm-up

    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        for t in texts:
            enc.encode_ordinary(t)
        times.append(time.perf_counter() - t0)
    s = statistics.median(times)
    print("%d files, %.3f MB JSON-escaped, %d tokens; 1 thread, median of %d"
          % (len(texts), nbytes / 1e6, tokens, args.repeats))
    print("tiktoken %s encode_ordinary: %.4f s, %.2f MB/s, %.0f tokens/s"
          % (tiktoken.__version__, s, nbytes / 1e6 / s, tokens / s))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"benchmark": "tokenizer", "implementation": "tiktoken " + tiktoken.__version__,
                       "threads": 1, "repeats": args.repeats, "files": args.files,
                       "escaped_bytes": nbytes, "tokens": tokens, "median_s": s,
                       "mb_per_s_escaped": nbytes / 1e6 / s, "tokens_per_s": tokens / s},
                      fh, indent=2)


if __name__ == "__main__":
    main()
