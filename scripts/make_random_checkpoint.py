"""Writes a random-weight checkpoint of a paper-size (760M) config, laid out as a Hugging Face
directory with the official weight names, for speed and memory runs on the GPU machine.

  python3 scripts/make_random_checkpoint.py fox_pro OUT_DIR [--layers N] [--bf16]

Families: fox_pro, fox_llama, transformer_pro, transformer_llama, transformer_swa, mamba2, hgrn2, delta_net, samba.
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
    # configs/experiment/longcrawl64/samba/760m_16b.yaml: attention 12 heads (num_kv_heads null =
    # 12), window 2048, odd layers; Mamba-1 state 16, expand 2, time_step_rank auto = ceil(1536 / 16).
    "samba": {"hidden_size": 1536, "num_hidden_layers": 24, "state_size": 16, "expand": 2, "intermediate_size": 3072,
              "time_step_rank": 96, "attn": {"num_heads": 12, "num_kv_heads": None, "window_size": 2048, "layers": None}},
}


def samba_weights(cfg, gen):
    """Random Samba weights with the official names (modeling_samba.py, fla's MambaMixer): the
    Mamba-1 initialisation's shapes and ranges (A_log = log(1..N), D = 1, dt_proj's bias the inverse
    softplus of dt in [time_step_min, time_step_max])."""
    import math

    def rnd(*shape, std=0.02):
        return torch.randn(*shape, generator=gen) * std

    d, L, V = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"]
    E, N, K, R = int(cfg["expand"] * d), cfg["state_size"], cfg["conv_kernel"], cfg["time_step_rank"]
    attn = cfg.get("attn")
    H = attn["num_heads"] if attn else 0
    kv = (attn.get("num_kv_heads") or H) * (d // H) if attn else 0

    def mlp_size(ratio):
        return 256 * ((int(d * (ratio or 4) * 2 / 3) + 255) // 256)

    W = {"backbone.embeddings.weight": rnd(V, d), "backbone.norm_f.weight": torch.ones(d), "lm_head.weight": rnd(V, d)}
    for l in range(L):
        p = f"backbone.layers.{l}."
        use_attention = attn is not None and l % 2 == 1
        W[p + "mixer_norm.weight"] = torch.ones(d)
        W[p + "mlp_norm.weight"] = torch.ones(d)
        inter = mlp_size(cfg.get("attn_hidden_ratio") if use_attention else cfg.get("mamba_hidden_ratio"))
        W[p + "mlp.gate_proj.weight"] = rnd(2 * inter, d)
        W[p + "mlp.down_proj.weight"] = rnd(d, inter)
        if use_attention:
            W[p + "mixer.q_proj.weight"] = rnd(d, d)
            W[p + "mixer.k_proj.weight"] = rnd(kv, d)
            W[p + "mixer.v_proj.weight"] = rnd(kv, d)
            W[p + "mixer.o_proj.weight"] = rnd(d, d)
            continue
        dt = torch.exp(torch.rand(E, generator=gen) * (math.log(0.1) - math.log(0.001)) + math.log(0.001))
        W[p + "mixer.in_proj.weight"] = rnd(2 * E, d)
        W[p + "mixer.conv1d.weight"] = rnd(E, 1, K, std=0.2)
        W[p + "mixer.conv1d.bias"] = rnd(E)
        W[p + "mixer.x_proj.weight"] = rnd(R + 2 * N, E)
        W[p + "mixer.dt_proj.weight"] = rnd(E, R, std=R ** -0.5)
        W[p + "mixer.dt_proj.bias"] = dt + torch.log(-torch.expm1(-dt))
        W[p + "mixer.A_log"] = torch.log(torch.arange(1, N + 1, dtype=torch.float32)).expand(E, N).contiguous()
        W[p + "mixer.D"] = torch.ones(E)
        W[p + "mixer.out_proj.weight"] = rnd(d, E)
    return W


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
    if a.family == "samba":
        W = samba_weights(cfg, gen)
    elif a.family in ("mamba2", "hgrn2", "delta_net"):
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
