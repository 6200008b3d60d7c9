#!/usr/bin/env python3
"""Writes a tiny random FoX (LLaMA) checkpoint with GPT-2's vocabulary: the smoke suite's second
model for the tasks that prompt with GPT-2 text (tasks/suite/presets/smoke.yaml), made at test time
instead of committing 26 MB of weights.

The layers are the official fox_llama fixture's (tests/fixtures/official/fox_llama: hidden 64, 2
layers, 4 heads, the official code's random init); the embeddings and the output head are new
[50257, 64] matrices, uniform from SplitMix64 with a fixed seed: plain integer arithmetic, so every
numpy and machine writes the same bytes (the suite's baseline records the model's digest). The
output head is scaled so logits spread by a few units: greedy picks are far from ties. No tokenizer
files: foxeval then reads its bundled GPT-2 files (data/gpt2), whose ids these are.

Usage: tests/tools/make_random_gpt2_model.py OUT_DIR   (run from the repository root; .venv's numpy)
"""
import json
import os
import struct
import sys

import numpy as np

SOURCE = "tests/fixtures/official/fox_llama"
VOCAB, EOS = 50257, 50256
SEED = 20261128


def splitmix64(n, seed):
    """n uniform floats in [0, 1) from SplitMix64 (Vigna), counter-based: value i of stream `seed`."""
    with np.errstate(over="ignore"):
        z = (np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) + np.uint64(seed)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32", (name, t["dtype"])
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype="<f4").reshape(t["shape"])
    return out


def write_safetensors(path, tensors):
    header, offset, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for name in sorted(tensors):
        b = np.ascontiguousarray(tensors[name], dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    os.replace(tmp, path)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    config = json.load(open(os.path.join(SOURCE, "config.json")))
    hidden = config["hidden_size"]
    config.update({"vocab_size": VOCAB, "bos_token_id": EOS, "eos_token_id": EOS, "tie_word_embeddings": False})
    weights = read_safetensors(os.path.join(SOURCE, "model.safetensors"))
    # Embeddings of unit scale (the first RMSNorm sees them as they are); the head spreads logits
    # by about sqrt(hidden) x 0.29 x 2 ~ 4.6 over normalized hidden states.
    weights["model.embeddings.weight"] = (splitmix64(VOCAB * hidden, SEED) * 2 - 1).reshape(VOCAB, hidden).astype(np.float32)
    weights["lm_head.weight"] = (splitmix64(VOCAB * hidden, SEED + 1) - 0.5).reshape(VOCAB, hidden).astype(np.float32)
    write_safetensors(os.path.join(out, "model.safetensors"), weights)
    tmp = os.path.join(out, "config.json.tmp")
    with open(tmp, "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, os.path.join(out, "config.json"))


if __name__ == "__main__":
    main()
