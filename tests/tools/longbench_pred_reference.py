#!/usr/bin/env python3
"""LongBench prompts as the official pred.py builds them, for foxeval's parity tests.

A rendition of eval/longbench/pred.py (zhixuan-lin/forgetting-transformer @ 883f260) prompt and
truncation steps with the checkpoints' tokenizer (src/forgetting_transformer/tokenizer.py,
JSONGPT2Tokenizer with add_bos_token=True, clean_up_tokenization_spaces=False), written for foxeval
without `transformers`: GPT-2 BPE is tiktoken's gpt2 built from the bundled data/gpt2 files.

  prompt = dataset2prompt[task].format(**record)
  ids = [50256] + bpe(json.dumps(prompt)[1:-1])          (<|endoftext|> in the text -> 50256)
  if len(ids) > max_length:
      half = int(max_length / 2)
      prompt = decode(ids[:half]) + decode(ids[-half:])  (skip_special_tokens=True)
      ids = [50256] + bpe(json.dumps(prompt)[1:-1])
  decode(ids) = json.loads('"' + bytes(ids).decode("utf-8", "replace") + '"'), falling back to
                text.encode().decode("unicode_escape", "ignore")

Usage:
  longbench_pred_reference.py records   # writes the synthetic records tests/fixtures/longbench/data/
  longbench_pred_reference.py prompts --max-length 300   # writes tests/fixtures/longbench/prompts_300.jsonl
  longbench_pred_reference.py sweep     # writes tests/fixtures/longbench/prompts_sweep.jsonl (cuts through surrogates)
"""
import argparse
import json
import os
import random
import warnings

import tiktoken
import tiktoken.load
from tiktoken_ext.openai_public import r50k_pat_str

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPT2 = os.path.join(ROOT, "data", "gpt2")
CONFIG = os.path.join(ROOT, "tasks", "longbench", "config")
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "longbench")
DATA = os.path.join(FIXTURES, "data")
EOT = 50256
TASKS = ["qasper", "multifieldqa_en", "multifieldqa_zh", "trec", "samsum", "lcc", "repobench-p", "gov_report"]


def gpt2_encoding():
    ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=os.path.join(GPT2, "vocab.bpe"), encoder_json_file=os.path.join(GPT2, "encoder.json"))
    return tiktoken.Encoding(name="gpt2", pat_str=r50k_pat_str, mergeable_ranks=ranks,
                             special_tokens={"<|endoftext|>": EOT}, explicit_n_vocab=50257)


ENC = gpt2_encoding()


def encode(text):
    # JSONGPT2Tokenizer.prepare_for_tokenization, then GPT-2 BPE; the slow HF tokenizer splits on
    # the special token first, as tiktoken's allowed_special does.
    escaped = json.dumps(text)[1:-1]
    return [EOT] + ENC.encode(escaped, allowed_special={"<|endoftext|>"})


def decode(ids):
    # skip_special_tokens=True drops every <|endoftext|>; byte-level decode with errors="replace".
    text = ENC.decode_bytes([i for i in ids if i != EOT]).decode("utf-8", errors="replace")
    try:
        return json.loads(f'"{text}"')
    except json.JSONDecodeError:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return text.encode().decode("unicode_escape", "ignore")


def prompt_ids(prompt, max_length):
    ids = encode(prompt)
    if len(ids) > max_length:
        half = int(max_length / 2)
        prompt = decode(ids[:half]) + decode(ids[-half:])
        ids = encode(prompt)
    return ids


# ---- synthetic records (our own text: no LongBench data is committed) ---------------------------

WORDS = ("the model forgets what it no longer needs while attention keeps every token within reach of a "
         "query so long documents become a test of what is kept and what is dropped").split()
SPICE = ["\n", "\n\n", "\t", '"quoted"', "back\\slash", "{braces}", "{{double}}", "caf\u00e9", "na\u00efve",
         "\u65e5\u672c\u8a9e", "\u4e2d\u6587\u6587\u672c", "\U0001F642", "\U0001F680\U0001F680", "\u00a0",
         "<|endoftext|>", "\x00", "\x7f", "e\u0301", "\u2028", "'s", "  ", "\r\n", "\\u00e9 literal"]


def text(rng, n_words, spice_rate):
    out = []
    for _ in range(n_words):
        out.append(rng.choice(SPICE) if rng.random() < spice_rate else rng.choice(WORDS))
    return " ".join(out)


def code(rng, n_lines):
    lines = []
    for i in range(n_lines):
        lines.append("    " * rng.randrange(3) + rng.choice(
            ["x = f(y, {})  # note: caf\u00e9".format(i), "return {'a': %d}" % i, "if x > %d:" % i,
             "print(\"line\\n\")", "s = '\u4e2d' * %d" % i, "// comment %d" % i]))
    return "\n".join(lines) + "\n"


def make_records():
    rng = random.Random(20261123)
    os.makedirs(DATA, exist_ok=True)
    for task in TASKS:
        rows = []
        for i in range(3):
            # Lengths: far over a 300-token limit, near it, and short; the first record of a task is long.
            n = [1800, 150, 40][i] if task != "gov_report" else [2500, 400, 60][i]
            spice = 0.02 if i == 0 else 0.3
            if task in ("lcc", "repobench-p"):
                context = code(rng, n // 8)
            elif task == "multifieldqa_zh":
                context = "".join(rng.choice(["\u6587\u7ae0", "\u4f1a\u8bae", "\u3002", "\uff0c", "\U00020000",
                                              "\u95ee\u9898", "\n"]) for _ in range(n))
            else:
                context = text(rng, n, spice)
            rows.append({
                "input": text(rng, 12, 0.2) if task != "lcc" else "",
                "context": context,
                "answers": [text(rng, 5, 0.1), "answer %d" % i],
                "length": len(context.split()),
                "dataset": task,
                "language": "zh" if task.endswith("_zh") else "en",
                "all_classes": ["Abbreviation", "Entity", "Location"] if task == "trec" else None,
                "_id": "%s-%04d-%s" % (task, i, rng.getrandbits(48).to_bytes(6, "big").hex()),
            })
        with open(os.path.join(DATA, task + ".jsonl"), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")


def make_prompts(max_length, out):
    prompts = json.load(open(os.path.join(CONFIG, "dataset2prompt.json"), encoding="utf-8"))
    with open(out, "w", encoding="utf-8") as f:
        for task in TASKS:
            with open(os.path.join(DATA, task + ".jsonl"), encoding="utf-8") as data:
                for index, line in enumerate(data):
                    record = json.loads(line)
                    ids = prompt_ids(prompts[task].format(**record), max_length)
                    f.write(json.dumps({"task": task, "index": index, "_id": record["_id"], "input_ids": ids}) + "\n")


# Limits whose cut splits an astral character's surrogate pair (or an escape) in these records,
# found by sweeping 100..420: the halves then decode to lone surrogates, which Python keeps.
SWEEP_TASKS = ["multifieldqa_zh", "qasper", "samsum"]
SWEEP_LIMITS = [128, 177, 219, 240, 247, 282, 296, 310, 324, 338, 345, 373, 415]


def make_sweep(out):
    prompts = json.load(open(os.path.join(CONFIG, "dataset2prompt.json"), encoding="utf-8"))
    with open(out, "w", encoding="utf-8") as f:
        for task in SWEEP_TASKS:
            records = [json.loads(line) for line in open(os.path.join(DATA, task + ".jsonl"), encoding="utf-8")]
            for max_length in SWEEP_LIMITS:
                for index, record in enumerate(records):
                    ids = prompt_ids(prompts[task].format(**record), max_length)
                    f.write(json.dumps({"max_length": max_length, "task": task, "index": index, "input_ids": ids}) + "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["records", "prompts", "sweep"])
    p.add_argument("--max-length", type=int, default=300)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    if a.what == "records":
        make_records()
    elif a.what == "sweep":
        make_sweep(a.out or os.path.join(FIXTURES, "prompts_sweep.jsonl"))
    else:
        make_prompts(a.max_length, a.out or os.path.join(FIXTURES, "prompts_%d.jsonl" % a.max_length))


if __name__ == "__main__":
    main()
