#!/usr/bin/env python3
"""foxeval's own rendition of the official NIAH prompt builder, for tests.

Follows eval/niah/prompt.py of zhixuan-lin/forgetting-transformer@883f260 (Prompter with
tokenizer_type "Huggingface" = the JSONGPT2Tokenizer of src/forgetting_transformer/tokenizer.py,
loaded with add_bos_token=True), with tiktoken's gpt2 encoding standing in for the Hugging Face
GPT-2 BPE (equal on these texts: tests/test_tokenizer.cpp). Which calls add BOS and which decode
skips it is the benchmark's quirk and is kept here step by step. The one intended difference
from the official script: the haystack files are taken in sorted order (glob's order depends on
the filesystem).

Usage: niah_reference.py --haystack DIR --mode standard|easy --lengths 300,600 --depths 0,50,100 --out DIR
Writes Huggingface_len_{L}_depth_{D*100}_prompts.json exactly as prompt.py writes them.
"""
import argparse
import glob
import json
import os

import tiktoken
import tiktoken.load
from tiktoken_ext.openai_public import r50k_pat_str

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
DEFS = os.path.join(ROOT, "tasks", "niah")
# tiktoken's gpt2 encoding built from the bundled GPT-2 files (no network).
ENC = tiktoken.Encoding(
    name="gpt2", pat_str=r50k_pat_str, special_tokens={"<|endoftext|>": 50256}, explicit_n_vocab=50257,
    mergeable_ranks=tiktoken.load.data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=os.path.join(ROOT, "data", "gpt2", "vocab.bpe"),
        encoder_json_file=os.path.join(ROOT, "data", "gpt2", "encoder.json")))
BOS = 50256


def encode(text, add_bos):
    # JSONGPT2Tokenizer.prepare_for_tokenization: json.dumps(text)[1:-1]; the Hugging Face
    # tokenizer then splits on the special token, so a literal <|endoftext|> becomes 50256.
    ids = ENC.encode(json.dumps(text)[1:-1], allowed_special={"<|endoftext|>"})
    return ([BOS] if add_bos else []) + ids


def decode(ids):
    # skip_special_tokens=True; GPT2Tokenizer decodes bytes with errors="replace";
    # then JSONGPT2Tokenizer.decode's json.loads with its best-effort fallback.
    text = b"".join(ENC.decode_single_token_bytes(t) for t in ids if t != BOS).decode("utf-8", errors="replace")
    try:
        return json.loads(f'"{text}"')
    except json.JSONDecodeError:
        return text.encode().decode("unicode_escape", "ignore")


def read_context(haystack, max_len):
    context = ""
    while len(encode(context, True)) < max_len:  # get_context_length_in_tokens: with BOS
        for file in sorted(glob.glob(f"{haystack}/*.txt")):
            with open(file, "r", encoding="utf-8") as f:
                context += f.read()
    return context


def encode_and_trim(context, length):
    tokens = encode(context, True)  # get_tokens_from_context: with BOS
    if len(tokens) > length:
        context = decode(tokens[:length])  # BOS skipped
    return context


def insert_needle(context, needle, depth, length, buffer):
    tokens_needle = encode(needle, False)  # encode_text_to_tokens: no BOS
    tokens_context = encode(context, False)
    length -= buffer
    if len(tokens_context) + len(tokens_needle) > length:
        tokens_context = tokens_context[:length - len(tokens_needle)]
    if depth == 100:
        new = tokens_context + tokens_needle
    else:
        point = int(len(tokens_context) * (depth / 100))
        new = tokens_context[:point]
        period = encode(".", False)
        while new and new[-1] not in period:
            point -= 1
            new = tokens_context[:point]
        new += tokens_needle + tokens_context[point:]
    return decode(new)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--haystack", required=True)
    ap.add_argument("--mode", required=True)
    ap.add_argument("--lengths", required=True)
    ap.add_argument("--depths", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    mode = json.load(open(os.path.join(DEFS, f"{a.mode}.json")))
    prompt = json.load(open(os.path.join(DEFS, "prompt.json")))
    lengths = [int(x) for x in a.lengths.split(",")]
    depths = [int(x) for x in a.depths.split(",")]
    os.makedirs(a.out, exist_ok=True)
    haystack = read_context(a.haystack, max(lengths))
    suffix = prompt["question_suffix"].replace("{question}", mode["retrieval_question"])
    for length in lengths:
        trimmed = encode_and_trim(haystack, length)
        for depth in depths:
            context = insert_needle(trimmed, mode["needle"], depth, length, prompt["final_context_length_buffer"])
            messages = [{"role": "system", "content": ""}, {"role": "user", "content": context + suffix}]
            name = f"{prompt['file_prefix']}_len_{length}_depth_{int(depth * 100)}_prompts.json"
            with open(os.path.join(a.out, name), "w") as f:
                json.dump(messages, f)


if __name__ == "__main__":
    main()
