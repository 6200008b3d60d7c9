#!/usr/bin/env python3
"""Plain-PyTorch float64 reference for Samba (`samba-project_fox`).

Written for foxeval from the math of the official model code (forgetting-transformer 883f260
model/samba/modeling_samba.py with flash-linear-attention 1c5937ee's MambaMixer slow_forward,
RMSNorm, RotaryEmbedding and swiglu_linear; flash-attn's window rule: query i sees keys
i-W+1..i): token-by-token scan, dense masked softmax, float64 throughout, so it shares no code
with foxeval's blocked scan, CUDA kernel or tiled window attention. It is our reading of the
official math, weaker evidence than the official logits: `check` holds it to the official fixture
first.

Usage:
  samba_reference.py check [FIXTURE_DIR]   # fp64 reference vs the official fixture's logits_fp32
  samba_reference.py make OUT_DIR          # random unseen checkpoints (other windows, GQA/MQA,
                                           # state sizes, conv kernels, depths, biases, tied
                                           # embeddings, attn null) + fp64 logits
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

D = torch.float64
LOG_DECAYS = []  # each Mamba layer's log decay dt * A [B, T, E, N] of the last logits() call


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def mlp_size(hidden, ratio):
    ratio = 4 if ratio is None else ratio
    return 256 * ((int(hidden * ratio * 2 / 3) + 255) // 256)


def mamba(cfg, W, p, h):
    B, T, _ = h.shape
    E, N = int(cfg.get("expand", 2) * cfg["hidden_size"]), cfg.get("state_size", 16)
    rank = cfg.get("time_step_rank", "auto")
    R = math.ceil(cfg["hidden_size"] / 16) if rank == "auto" else rank
    proj = F.linear(h, W[p + "in_proj.weight"], W.get(p + "in_proj.bias"))
    u, z = proj.chunk(2, -1)
    w = W[p + "conv1d.weight"][:, 0, :]  # [E, K]
    K = w.shape[1]
    up = F.pad(u, (0, 0, K - 1, 0))
    conv = sum(up[:, j:j + T] * w[:, j] for j in range(K))
    if p + "conv1d.bias" in W:
        conv = conv + W[p + "conv1d.bias"]
    u = F.silu(conv)
    s = F.linear(u, W[p + "x_proj.weight"])
    r, Bm, Cm = s.split([R, N, N], -1)
    dt = F.softplus(F.linear(r, W[p + "dt_proj.weight"], W[p + "dt_proj.bias"]))  # [B, T, E]
    A = -torch.exp(W[p + "A_log"])  # [E, N]
    LOG_DECAYS.append(dt[..., None] * A)  # log of the decay exp(dt * A), for `inspect gates`
    state = torch.zeros(B, E, N, dtype=D)
    ys = []
    for t in range(T):
        state = torch.exp(dt[:, t, :, None] * A) * state + dt[:, t, :, None] * Bm[:, t, None, :] * u[:, t, :, None]
        ys.append((state * Cm[:, t, None, :]).sum(-1) + W[p + "D"] * u[:, t])
    y = torch.stack(ys, 1) * F.silu(z)
    return F.linear(y, W[p + "out_proj.weight"], W.get(p + "out_proj.bias"))


def rotary(x, base):
    """NeoX rotary of x [B, T, H, Dh] at positions 0..T-1; inv_freq in fp32 as fla's RotaryEmbedding."""
    T, Dh = x.shape[1], x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, Dh, 2, dtype=torch.float32) / Dh))
    freqs = torch.outer(torch.arange(T, dtype=torch.float32), inv_freq).to(D)
    cos, sin = freqs.cos()[None, :, None, :], freqs.sin()[None, :, None, :]
    x0, x1 = x[..., :Dh // 2], x[..., Dh // 2:]
    return torch.cat([x0 * cos - x1 * sin, x0 * sin + x1 * cos], -1)


def attention(cfg, W, p, h):
    B, T, d = h.shape
    attn = cfg["attn"]
    H = attn["num_heads"]
    Hkv = attn.get("num_kv_heads") or H
    Dh, win = d // H, attn["window_size"]
    q = rotary(F.linear(h, W[p + "q_proj.weight"]).view(B, T, H, Dh), cfg.get("rope_base", 500000.0))
    k = rotary(F.linear(h, W[p + "k_proj.weight"]).view(B, T, Hkv, Dh), cfg.get("rope_base", 500000.0))
    v = F.linear(h, W[p + "v_proj.weight"]).view(B, T, Hkv, Dh)
    k, v = k.repeat_interleave(H // Hkv, 2), v.repeat_interleave(H // Hkv, 2)  # official repeat: (h g)
    s = torch.einsum("bihd,bjhd->bhij", q, k) / math.sqrt(Dh)
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    s = s.masked_fill((j > i) | (j <= i - win), float("-inf"))
    o = torch.einsum("bhij,bjhd->bihd", s.softmax(-1), v).reshape(B, T, d)
    return F.linear(o, W[p + "o_proj.weight"])


def logits(cfg, W, ids):
    LOG_DECAYS.clear()
    W = {k: v.to(D) for k, v in W.items()}
    eps, d = cfg.get("norm_eps", 1e-5), cfg["hidden_size"]
    x = W["backbone.embeddings.weight"][ids]
    for l in range(cfg["num_hidden_layers"]):
        p = f"backbone.layers.{l}."
        use_attention = cfg.get("attn") is not None and l % 2 == 1
        h = rms_norm(x, W[p + "mixer_norm.weight"], eps)
        x = x + (attention if use_attention else mamba)(cfg, W, p + "mixer.", h)
        h = rms_norm(x, W[p + "mlp_norm.weight"], eps)
        gate, y = F.linear(h, W[p + "mlp.gate_proj.weight"]).chunk(2, -1)
        x = x + F.linear(F.silu(gate) * y, W[p + "mlp.down_proj.weight"])
    x = rms_norm(x, W["backbone.norm_f.weight"], eps)
    head = W["backbone.embeddings.weight"] if cfg.get("tie_word_embeddings") else W["lm_head.weight"]
    return F.linear(x, head)


def check(folder):
    cfg = json.load(open(os.path.join(folder, "config.json")))
    W = load_file(os.path.join(folder, "model.safetensors"))
    ref = load_file(os.path.join(folder, "reference.safetensors"))
    ours = logits(cfg, W, ref["input_ids"])
    want = ref["logits_fp32"].to(D)
    rel = ((ours - want).norm(dim=-1) / want.norm(dim=-1)).max().item()
    ids = ref["input_ids"]

    def loss(lg):
        return -lg[:, :-1].log_softmax(-1).gather(-1, ids[:, 1:, None])[..., 0]
    dl = (loss(ours) - loss(want)).abs()
    print(f"{folder}: logit rel err max {rel:.2e}; loss diff mean {dl.mean():.2e} max {dl.max():.2e}")
    return rel < 1e-5


# Unseen configs: each size the model reads, away from the fixture's.
UNSEEN = {
    "gqa_window5_bias": {"hidden_size": 64, "num_hidden_layers": 4, "state_size": 4, "conv_kernel": 3,
                         "time_step_rank": "auto", "use_bias": True, "use_conv_bias": False, "rope_base": 10000.0,
                         "attn_hidden_ratio": 2, "mamba_hidden_ratio": 1.5,
                         "attn": {"num_heads": 4, "num_kv_heads": 2, "window_size": 5, "layers": None}},
    "mqa_window48_deep_tied": {"hidden_size": 32, "num_hidden_layers": 5, "state_size": 16, "conv_kernel": 4,
                               "time_step_rank": 3, "expand": 3, "tie_word_embeddings": True,
                               "attn": {"num_heads": 2, "num_kv_heads": 1, "window_size": 48, "layers": None}},
    "all_mamba": {"hidden_size": 32, "num_hidden_layers": 3, "state_size": 12, "conv_kernel": 2, "attn": None},
}


def random_checkpoint(cfg, gen):
    def rnd(*shape, std=0.1):
        return torch.randn(*shape, generator=gen) * std

    d, L, V = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"]
    E, N, K = int(cfg.get("expand", 2) * d), cfg["state_size"], cfg["conv_kernel"]
    rank = cfg.get("time_step_rank", "auto")
    R = math.ceil(d / 16) if rank == "auto" else rank
    attn = cfg.get("attn")
    # Logits of a few units (a tied head reads the embeddings): fp32 rounding, not peaked softmaxes, is what is measured.
    W = {"backbone.embeddings.weight": rnd(V, d, std=0.3 if cfg.get("tie_word_embeddings") else 1.0),
         "backbone.norm_f.weight": 1 + rnd(d)}
    if not cfg.get("tie_word_embeddings"):
        W["lm_head.weight"] = rnd(V, d, std=0.3)
    for l in range(L):
        p = f"backbone.layers.{l}."
        use_attention = attn is not None and l % 2 == 1
        W[p + "mixer_norm.weight"] = 1 + rnd(d)
        W[p + "mlp_norm.weight"] = 1 + rnd(d)
        inter = mlp_size(d, cfg.get("attn_hidden_ratio" if use_attention else "mamba_hidden_ratio"))
        W[p + "mlp.gate_proj.weight"] = rnd(2 * inter, d)
        W[p + "mlp.down_proj.weight"] = rnd(d, inter)
        m = p + "mixer."
        if use_attention:
            H = attn["num_heads"]
            kv = (attn.get("num_kv_heads") or H) * (d // H)
            W[m + "q_proj.weight"], W[m + "k_proj.weight"] = rnd(d, d, std=0.3), rnd(kv, d, std=0.3)
            W[m + "v_proj.weight"], W[m + "o_proj.weight"] = rnd(kv, d, std=0.3), rnd(d, d)
            continue
        W[m + "in_proj.weight"] = rnd(2 * E, d, std=0.3)
        if cfg.get("use_bias"):
            W[m + "in_proj.bias"], W[m + "out_proj.bias"] = rnd(2 * E), rnd(d)
        W[m + "conv1d.weight"] = rnd(E, 1, K, std=0.5)
        if cfg.get("use_conv_bias", True):
            W[m + "conv1d.bias"] = rnd(E)
        W[m + "x_proj.weight"] = rnd(R + 2 * N, E, std=0.3)
        W[m + "dt_proj.weight"] = rnd(E, R, std=R ** -0.5)
        dt = torch.exp(torch.rand(E, generator=gen) * (math.log(0.5) - math.log(0.001)) + math.log(0.001))
        W[m + "dt_proj.bias"] = dt + torch.log(-torch.expm1(-dt))
        W[m + "A_log"] = torch.log(torch.arange(1, N + 1, dtype=torch.float32)).expand(E, N) + rnd(E, N)
        W[m + "D"] = 1 + rnd(E)
        W[m + "out_proj.weight"] = rnd(d, E)
    return W


def make(out):
    gen = torch.Generator().manual_seed(54)
    for name, sizes in UNSEEN.items():
        cfg = {"model_type": "samba-project_fox", "vocab_size": 64, "norm_eps": 1e-5, "hidden_act": "silu",
               "expand": 2, "use_bias": False, "use_conv_bias": True, "tie_word_embeddings": False}
        cfg.update(sizes)
        W = random_checkpoint(cfg, gen)
        ids = torch.randint(0, cfg["vocab_size"], (2, 120), generator=gen)
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
        save_file({k: v.contiguous() for k, v in W.items()}, os.path.join(folder, "model.safetensors"))
        lg = logits(cfg, W, ids)
        # per Mamba layer: the mean log decay over rows, tokens, channels and states
        mean_log_decay = torch.stack([d.mean() for d in LOG_DECAYS])
        save_file({"input_ids": ids, "logits_fp64": lg, "mean_log_decay": mean_log_decay},
                  os.path.join(folder, "reference.safetensors"))
        print(f"{folder}: {sum(v.numel() for v in W.values())} parameters")


if __name__ == "__main__":
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if len(sys.argv) >= 2 and sys.argv[1] == "check":
        ok = check(sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "fixtures", "official", "samba"))
        sys.exit(0 if ok else 1)
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(sys.argv[2])
        sys.exit(0)
    sys.exit(__doc__)
