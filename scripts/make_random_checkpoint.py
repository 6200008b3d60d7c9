"""Writes a random-weight checkpoint of a paper-size (760M) config, laid out as a Hugging Face
directory with the official weight names, for speed and memory runs on the GPU machine.

  python3 scripts/make_random_checkpoint.py fox_pro OUT_DIR [--layers N] [--bf16]

Families: fox_pro, fox_llama, transformer_pro, transformer_llama, transformer_swa, mamba2, hgrn2, delta_net.
Configs start from the official tiny fixtures' config.json with the paper's 760M sizes
(docs: ../shared/docs/REFERENCE.md). Needs torch + safetensors (both on the GPU machine).
"""
import argparse
import json
import os
import sys

import torch
from safetensors.torch import save_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "tools"))

PAPER_760M = {
    "fox_pro": {"hidden_size": 1536, "num_hidden_layers": 24, "num_heads": 24},
    "fox_llama": {"hidden_size": 1536, "num_hidden_layers": 24, "num_heads": 24},
    "transformer_pro": {"hidden_size": 1536, "num_hidden_layers": 24, "num_heads": 12},
    "transformer_llama": {"hidden_size": 1536, "num_hidden_layers": 24, "num_heads": 24},
    # configs/experiment/longcrawl64/transformer_swa/760m_16b.yaml (hidden_ratio 4, RoPE 500000 as the fixture)
    "transformer_swa": {"hidden_size": 1536, "num_hidden_layers": 24, "num_heads": 12, "window_size": 2048},
    "mamba2": {"hidden_size": 1536, "num_hidden_layers": 48, "num_heads": 48, "head_dim": 64, "state_size": 128,
               "n_groups": 1, "expand": 2},
    "hgrn2": {"hidden_size": 1536, "num_hidden_layers": 24, "expand_ratio": 128, "num_heads": None},
    "delta_net": {"hidden_size": 1536, "num_hidden_layers": 24, "num_heads": 12},
}


def fox_weights(cfg, gen):
    def rnd(*shape, std=0.02):
        return torch.randn(*shape, generator=gen) * std

    d, L, V, H = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"], cfg["num_heads"]
    inter = cfg.get("intermediate_size") or 256 * ((int(d * cfg.get("hidden_ratio", 4) * 2 / 3) + 255) // 256)
    pro = cfg.get("use_k_shift", False)
    W = {"model.embeddings.weight": rnd(V, d), "model.norm.weight": torch.ones(d), "lm_head.weight": rnd(V, d)}
    for l in range(L):
        p = f"model.layers.{l}."
        W[p + "attn_norm.weight"] = torch.ones(d)
        W[p + "mlp_norm.weight"] = torch.ones(d)
        W[p + "mlp.gate_proj.weight"] = rnd(2 * inter, d)
        W[p + "mlp.down_proj.weight"] = rnd(d, inter)
        for n in ("q", "o"):
            W[p + f"attn.{n}_proj.weight"] = rnd(d, d)
        for n in ("k", "v"):
            if cfg.get(f"use_{n}_shift", False):
                W[p + f"attn.{n}_proj.linear.weight"] = rnd(d, d)
                W[p + f"attn.{n}_proj.shift_proj.weight"] = rnd(H, d)
            else:
                W[p + f"attn.{n}_proj.weight"] = rnd(d, d)
        if cfg.get("fgate_type", "none") == "full" and cfg["model_type"].startswith("forgetting"):
            W[p + "attn.fgate_proj.weight"] = rnd(H, d)
            W[p + "attn.fgate_proj.bias"] = torch.full((H,), 3.0)  # forget gates near 0.95
        if pro:
            W[p + "attn.ogate_proj.weight"] = rnd(d, d)
            for n in ("q_norm", "k_norm", "output_norm"):
                W[p + f"attn.{n}.weight"] = torch.ones(d)
    return W


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("family", choices=sorted(PAPER_760M))
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, help="fewer layers (quick runs)")
    ap.add_argument("--bf16", action="store_true", help="store BF16 (half the size; loads the same)")
    a = ap.parse_args()
    with open(os.path.join(ROOT, "tests", "fixtures", "official", a.family, "config.json")) as f:
        cfg = json.load(f)
    cfg.update(PAPER_760M[a.family])
    cfg["vocab_size"] = 50257
    cfg["bos_token_id"] = cfg["eos_token_id"] = 50256
    if a.layers:
        cfg["num_hidden_layers"] = a.layers
    gen = torch.Generator().manual_seed(0)
    if a.family in ("mamba2", "hgrn2", "delta_net"):
        from recurrent_reference import random_weights
        W = random_weights(cfg, gen)
    else:
        W = fox_weights(cfg, gen)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    dtype = torch.bfloat16 if a.bf16 else torch.float32
    save_file({k: v.to(dtype).contiguous() for k, v in W.items()}, os.path.join(a.out, "model.safetensors"))
    n = sum(v.numel() for v in W.values())
    print(f"{a.family}: {n / 1e6:.1f}M parameters -> {a.out}")


if __name__ == "__main__":
    main()
