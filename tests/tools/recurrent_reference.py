#!/usr/bin/env python3
"""Plain-PyTorch float64 reference for the recurrent baselines (Mamba-2, HGRN2, DeltaNet).

Written for foxeval from the math of the official model code (forgetting-transformer 883f260
with flash-linear-attention 1c5937ee): token-by-token recurrences, no chunking, float64
throughout, so it shares no algorithm with the C++ chunked scans it checks. It is weaker
evidence than the official logits (it is our reading of the official math), which is why the
tests check it against the official fixtures first (`check` command).

Usage:
  recurrent_reference.py check                 # fp64 reference vs the official fixtures
  recurrent_reference.py make OUT_DIR          # random unseen checkpoints + fp64 references
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

D = torch.float64


def rms_norm(x, w, eps):
    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return x * w if w is not None else x


def causal_conv(x, w, b):
    """Depthwise causal conv over time. x [B,T,C], w [C,1,K] or [C,K], zero history."""
    w = w.reshape(w.shape[0], -1)
    K = w.shape[1]
    xp = F.pad(x, (0, 0, K - 1, 0))
    out = sum(xp[:, j:j + x.shape[1]] * w[:, j] for j in range(K))
    return out + b if b is not None else out


def swiglu_mlp(x, W, prefix):
    gate, y = F.linear(x, W[prefix + "gate_proj.weight"]).chunk(2, -1)
    return F.linear(F.silu(gate) * y, W[prefix + "down_proj.weight"])


def pad_mask(B, T, seq_start):
    pos = torch.arange(T)[None, :]
    return (pos >= torch.as_tensor(seq_start)[:, None]).to(D)  # [B,T] 1 = real token


# ----------------------------------------------------------------------------- the stack
def block_stack(W, cfg, ids, seq_start, root, final_norm, eps, block):
    """Every family here: the embeddings, h = block(h, "{root}.layers.{l}.", pad mask) per layer, the
    final RMSNorm (weight final_norm)."""
    B, T = ids.shape
    mask = pad_mask(B, T, seq_start)[..., None]
    h = W[root + ".embeddings.weight"][ids]
    for l in range(cfg["num_hidden_layers"]):
        h = block(h, f"{root}.layers.{l}.", mask)
    return rms_norm(h, final_norm, eps)


# ----------------------------------------------------------------------------- Mamba-2
def mamba2_hidden(W, cfg, ids, seq_start):
    B, T = ids.shape
    H, P, N = cfg["num_heads"], cfg["head_dim"], cfg["state_size"]
    G = cfg.get("n_groups", 1)
    E = int(cfg.get("expand", 2) * cfg["hidden_size"])
    eps = cfg.get("layer_norm_epsilon", 1e-5)

    def block(h, p, mask):
        x = rms_norm(h, W[p + "norm.weight"], eps)
        x = x * mask  # the official code zeroes pad inputs of the mixer
        proj = F.linear(x, W[p + "mixer.in_proj.weight"], W.get(p + "mixer.in_proj.bias"))
        z, xBC, dt = proj.split([E, E + 2 * G * N, H], -1)
        xBC = xBC * mask  # (same as the official when in_proj has no bias)
        xBC = F.silu(causal_conv(xBC, W[p + "mixer.conv1d.weight"], W.get(p + "mixer.conv1d.bias")))
        xs, Bm, Cm = xBC.split([E, G * N, G * N], -1)
        xs = (xs * mask).view(B, T, H, P)
        Bm = Bm.view(B, T, G, N).repeat_interleave(H // G, 2)
        Cm = Cm.view(B, T, G, N).repeat_interleave(H // G, 2)
        dt = F.softplus(dt + W[p + "mixer.dt_bias"])  # [B,T,H]
        # the official torch path (which made the fixtures) clamps dt below at time_step_min and
        # ignores time_step_limit; the mamba_ssm CUDA path would not clamp (see models/mamba2).
        dt = dt.clamp(min=cfg.get("time_step_min", 0.001))
        A = -torch.exp(W[p + "mixer.A_log"])
        S = torch.zeros(B, H, P, N, dtype=D)
        ys = []
        for t in range(T):
            S = S * torch.exp(dt[:, t] * A)[..., None, None] + \
                (dt[:, t, :, None] * xs[:, t])[..., None] * Bm[:, t, :, None, :]
            ys.append(torch.einsum("bhpn,bhn->bhp", S, Cm[:, t]) + W[p + "mixer.D"][:, None] * xs[:, t])
        y = torch.stack(ys, 1).reshape(B, T, E)
        y = y * F.silu(z)  # norm_before_gate=False
        y = rms_norm(y.view(B, T, G, E // G), W[p + "mixer.norm.weight"].view(G, E // G), eps).reshape(B, T, E)
        return h + F.linear(y, W[p + "mixer.out_proj.weight"], W.get(p + "mixer.out_proj.bias"))
    return block_stack(W, cfg, ids, seq_start, "backbone", W["backbone.norm_f.weight"], eps, block)


# ----------------------------------------------------------------------------- fla blocks
def fla_hidden(W, cfg, ids, seq_start, attention):
    """fla's block (HGRN2, DeltaNet): attn_norm, the layer's token mixer attention(x, prefix, mask,
    eps) -> [B, T, hidden] before o_proj, residual, mlp_norm, SwiGLU, residual."""
    eps = cfg.get("norm_eps", 1e-6)

    def block(h, p, mask):
        x = rms_norm(h, W[p + "attn_norm.weight"], eps)
        r = h + F.linear(attention(x, p, mask, eps), W[p + "attn.o_proj.weight"])
        return r + swiglu_mlp(rms_norm(r, W[p + "mlp_norm.weight"], eps), W, p + "mlp.")
    return block_stack(W, cfg, ids, seq_start, "model", W["model.norm.weight"], eps, block)


# ----------------------------------------------------------------------------- HGRN2
def hgrn2_hidden(W, cfg, ids, seq_start):
    B, T = ids.shape
    Hd = cfg["hidden_size"]
    er, nh = cfg.get("expand_ratio"), cfg.get("num_heads")
    if er is None:
        er = Hd // nh
    if nh is None:
        nh = Hd // er

    def attention(x, p, mask, eps):
        q = F.linear(x, W[p + "attn.q_proj.weight"])
        f = F.linear(x, W[p + "attn.f_proj.weight"])
        i = F.linear(x, W[p + "attn.i_proj.weight"])
        if cfg.get("use_short_conv", False):
            q = causal_conv(q * mask, W[p + "attn.q_conv1d.weight"], None)
            f = causal_conv(f * mask, W[p + "attn.f_conv1d.weight"], None)
            i = causal_conv(i * mask, W[p + "attn.i_conv1d.weight"], None)
        i = i * mask
        q = F.silu(q)
        # the official block never passes lower_bound to the attention: all layers use 1-sigmoid
        k, g = 1 - torch.sigmoid(f), F.logsigmoid(f)
        g = g * mask
        K, V = er, Hd // nh
        q, k, g = (t.view(B, T, nh, K) for t in (q, k, g))
        i = i.view(B, T, nh, V)
        S = torch.zeros(B, nh, K, V, dtype=D)
        os_ = []
        for t in range(T):
            S = S * torch.exp(g[:, t])[..., None] + k[:, t, :, :, None] * i[:, t, :, None, :]
            os_.append(torch.einsum("bhk,bhkv->bhv", q[:, t] * K ** -0.5, S))
        o = torch.stack(os_, 1).reshape(B, T, Hd)
        return rms_norm(o, W.get(p + "attn.g_norm.weight"), eps)
    return fla_hidden(W, cfg, ids, seq_start, attention)


# ----------------------------------------------------------------------------- DeltaNet
def delta_net_hidden(W, cfg, ids, seq_start):
    B, T = ids.shape
    Hd, nh = cfg["hidden_size"], cfg["num_heads"]
    Kd, Vd = int(Hd * cfg.get("expand_k", 1)), int(Hd * cfg.get("expand_v", 1))
    K, V = Kd // nh, Vd // nh

    def attention(x, p, mask, eps):
        q = F.linear(x, W[p + "attn.q_proj.weight"])
        k = F.linear(x, W[p + "attn.k_proj.weight"])
        v = F.linear(x, W[p + "attn.v_proj.weight"])
        q = F.silu(causal_conv(q * mask, W[p + "attn.q_conv1d.weight"], None))
        k = F.silu(causal_conv(k * mask, W[p + "attn.k_conv1d.weight"], None))
        v = F.silu(causal_conv(v * mask, W[p + "attn.v_conv1d.weight"], None))
        v = v * mask
        q, k = q.view(B, T, nh, K), k.view(B, T, nh, K)
        v = v.view(B, T, nh, V)
        q = q / torch.sqrt(q.pow(2).sum(-1, keepdim=True) + 1e-6)
        k = k / torch.sqrt(k.pow(2).sum(-1, keepdim=True) + 1e-6)
        beta = torch.sigmoid(F.linear(x, W[p + "attn.b_proj.weight"]))  # [B,T,nh]
        S = torch.zeros(B, nh, K, V, dtype=D)
        os_ = []
        for t in range(T):
            kt = k[:, t]
            u = beta[:, t, :, None] * (v[:, t] - torch.einsum("bhkv,bhk->bhv", S, kt))
            S = S + kt[..., None] * u[..., None, :]
            os_.append(torch.einsum("bhk,bhkv->bhv", q[:, t] * K ** -0.5, S))
        o = torch.stack(os_, 1)  # [B,T,nh,V]
        return rms_norm(o, W[p + "attn.o_norm.weight"], eps).reshape(B, T, Vd)
    return fla_hidden(W, cfg, ids, seq_start, attention)


FAMILIES = {
    "mamba2-project_fox": mamba2_hidden,
    "hgrn2-project_fox": hgrn2_hidden,
    "delta_net-project_fox": delta_net_hidden,
}


def load(directory):
    with open(os.path.join(directory, "config.json")) as f:
        cfg = json.load(f)
    W = {k: v.to(D) for k, v in load_file(os.path.join(directory, "model.safetensors")).items()}
    return cfg, W


def logits(directory, ids, seq_start=None):
    cfg, W = load(directory)
    if seq_start is None:
        seq_start = [0] * ids.shape[0]
    with torch.no_grad():
        h = FAMILIES[cfg["model_type"]](W, cfg, ids, seq_start)
        return F.linear(h, W["lm_head.weight"])


def token_loss(lg, ids):
    return F.cross_entropy(lg[:, :-1].reshape(-1, lg.shape[-1]).double(), ids[:, 1:].reshape(-1),
                           reduction="none").view(ids.shape[0], -1)


def check(root):
    for name in ["mamba2", "hgrn2", "delta_net"]:
        d = os.path.join(root, name)
        ref = load_file(os.path.join(d, "reference.safetensors"))
        ids = ref["input_ids"]
        lg = logits(d, ids)
        for key in ["logits_fp32", "logits_bf16"]:
            if key not in ref:
                continue
            r = ref[key].double()
            rel = (lg - r).norm(dim=-1) / r.norm(dim=-1)
            dl = (token_loss(lg, ids) - token_loss(r, ids)).abs()
            print(f"{name:10s} vs {key}: rel max {rel.max():.2e} mean {rel.mean():.2e}  "
                  f"loss diff max {dl.max():.2e} mean {dl.mean():.2e}")
        # left padding: the padded row's real tokens equal the unpadded row
        pad = 5
        ids_p = torch.cat([torch.zeros(1, pad, dtype=ids.dtype) + 7, ids[:1, :40]], 1)
        lp = logits(d, ids_p, [pad])[:, pad:]
        print(f"{name:10s} left-pad max abs diff {(lp - logits(d, ids[:1, :40])).abs().max():.2e}")


# ----------------------------------------------------------------------------- unseen checkpoints
def random_weights(cfg, gen):
    """Random weights with the official names and shapes; scales chosen to exercise the math
    (strong decays, non-trivial gates) rather than to imitate training."""
    def rnd(*shape, std=0.02):
        return torch.randn(*shape, generator=gen, dtype=torch.float32) * std

    def lin(o, i):
        return rnd(o, i, std=i ** -0.5)

    Hd, L, Vc = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"]
    W = {}
    mt = cfg["model_type"]
    if mt == "mamba2-project_fox":
        H, P, N, G = cfg["num_heads"], cfg["head_dim"], cfg["state_size"], cfg["n_groups"]
        E = cfg["expand"] * Hd
        Kc = cfg["conv_kernel"]
        conv_dim = E + 2 * G * N
        W["backbone.embeddings.weight"] = rnd(Vc, Hd, std=1.0)
        for l in range(L):
            p = f"backbone.layers.{l}."
            W[p + "norm.weight"] = 1 + rnd(Hd, std=0.1)
            W[p + "mixer.in_proj.weight"] = lin(E + conv_dim + H, Hd)
            W[p + "mixer.conv1d.weight"] = rnd(conv_dim, 1, Kc, std=0.5)
            W[p + "mixer.conv1d.bias"] = rnd(conv_dim, std=0.1)
            W[p + "mixer.dt_bias"] = torch.linspace(-4, 1, H)
            W[p + "mixer.A_log"] = torch.log(torch.linspace(1, 16, H))
            W[p + "mixer.D"] = 1 + rnd(H, std=0.3)
            W[p + "mixer.norm.weight"] = 1 + rnd(E, std=0.1)
            W[p + "mixer.out_proj.weight"] = lin(Hd, E)
        W["backbone.norm_f.weight"] = 1 + rnd(Hd, std=0.1)
    else:
        W["model.embeddings.weight"] = rnd(Vc, Hd, std=1.0)
        inter = cfg.get("intermediate_size") or 256 * ((int(Hd * cfg.get("hidden_ratio", 4) * 2 / 3) + 255) // 256)
        for l in range(L):
            p = f"model.layers.{l}."
            W[p + "attn_norm.weight"] = 1 + rnd(Hd, std=0.1)
            W[p + "mlp_norm.weight"] = 1 + rnd(Hd, std=0.1)
            W[p + "mlp.gate_proj.weight"] = lin(2 * inter, Hd)
            W[p + "mlp.down_proj.weight"] = lin(Hd, inter)
            W[p + "attn.o_proj.weight"] = lin(Hd, Hd)
            if mt == "hgrn2-project_fox":
                er = cfg["expand_ratio"] or Hd // cfg["num_heads"]
                nh = cfg["num_heads"] or Hd // er
                fd = nh * er
                W[p + "attn.q_proj.weight"] = lin(fd, Hd)
                W[p + "attn.f_proj.weight"] = lin(fd, Hd) * 3  # wide range of decays
                W[p + "attn.i_proj.weight"] = lin(Hd, Hd)
                W[p + "attn.g_norm.weight"] = 1 + rnd(Hd, std=0.1)
                if cfg.get("use_short_conv"):
                    Kc = cfg["conv_size"]
                    for n, dim in (("q", fd), ("f", fd), ("i", Hd)):
                        W[p + f"attn.{n}_conv1d.weight"] = rnd(dim, 1, Kc, std=0.5)
            else:
                nh = cfg["num_heads"]
                Kc = cfg["conv_size"]
                for n in "qkv":
                    W[p + f"attn.{n}_proj.weight"] = lin(Hd, Hd)
                    W[p + f"attn.{n}_conv1d.weight"] = rnd(Hd, 1, Kc, std=0.5)
                W[p + "attn.b_proj.weight"] = lin(nh, Hd) * 2
                W[p + "attn.o_norm.weight"] = 1 + rnd(Hd // nh, std=0.1)
        if mt == "hgrn2-project_fox" and cfg.get("use_lower_bound", True):
            W["model.lower_bounds"] = rnd(L, Hd, std=1.0)
        W["model.norm.weight"] = 1 + rnd(Hd, std=0.1)
    W["lm_head.weight"] = lin(Vc, Hd) * 3
    return W


UNSEEN = {
    "mamba2_h96": {
        "model_type": "mamba2-project_fox", "hidden_size": 96, "num_hidden_layers": 2, "vocab_size": 128,
        "num_heads": 3, "head_dim": 64, "state_size": 32, "n_groups": 1, "expand": 2, "conv_kernel": 4,
        "chunk_size": 256, "layer_norm_epsilon": 1e-5, "use_bias": False, "use_conv_bias": True,
        "hidden_act": "silu", "residual_in_fp32": True, "rms_norm": True, "time_step_min": 0.001,
        "time_step_limit": [0.0, {"__float__": "Infinity"}], "tie_word_embeddings": False,
    },
    "hgrn2_h128": {
        "model_type": "hgrn2-project_fox", "hidden_size": 128, "num_hidden_layers": 2, "vocab_size": 128,
        "attn_mode": "chunk", "num_heads": None, "expand_ratio": 64, "use_short_conv": False, "conv_size": 4,
        "use_lower_bound": True, "hidden_ratio": 2, "intermediate_size": 128, "hidden_act": "swish",
        "elementwise_affine": True, "norm_eps": 1e-6, "tie_word_embeddings": False,
    },
    "hgrn2_conv_h128": {
        "model_type": "hgrn2-project_fox", "hidden_size": 128, "num_hidden_layers": 1, "vocab_size": 128,
        "attn_mode": "chunk", "num_heads": 2, "expand_ratio": None, "use_short_conv": True, "conv_size": 4,
        "use_lower_bound": True, "hidden_ratio": 2, "intermediate_size": 128, "hidden_act": "swish",
        "elementwise_affine": True, "norm_eps": 1e-6, "tie_word_embeddings": False,
    },
    "delta_net_h128": {
        "model_type": "delta_net-project_fox", "hidden_size": 128, "num_hidden_layers": 2, "vocab_size": 128,
        "attn_mode": "chunk", "num_heads": 2, "expand_k": 1, "expand_v": 1, "use_gate": False,
        "use_short_conv": True, "conv_size": 4, "use_beta": True, "use_output_norm": True,
        "hidden_ratio": 2, "intermediate_size": 128, "qk_norm": "l2", "qk_activation": "silu",
        "hidden_act": "swish", "norm_first": False, "norm_eps": 1e-6, "tie_word_embeddings": False,
    },
}


def make(out_root, T=600, seed=1234):
    for name, cfg in UNSEEN.items():
        d = os.path.join(out_root, name)
        os.makedirs(d, exist_ok=True)
        gen = torch.Generator().manual_seed(seed)
        W = random_weights(cfg, gen)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
        # bf16 weights: half the size, and they exercise the bf16 loading path (the reference
        # reads them back from the file, so it computes with exactly these values)
        save_file({k: v.to(torch.bfloat16).contiguous() for k, v in W.items()}, os.path.join(d, "model.safetensors"))
        ids = torch.randint(0, cfg["vocab_size"], (2, T), generator=gen)
        lg = logits(d, ids)
        # per-token losses of the whole rows and the logits of the last 32 positions (< 1 MB)
        save_file({
            "input_ids": ids,
            "token_loss_fp64": token_loss(lg, ids).to(torch.float64),
            "logits_fp64_last": lg[:, -32:].contiguous(),
        }, os.path.join(d, "reference.safetensors"))
        sizes = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
        print(f"{name}: {sizes / 1e6:.2f} MB, loss mean {token_loss(lg, ids).mean():.3f}")


if __name__ == "__main__":
    torch.set_num_threads(2)
    here = os.path.dirname(os.path.abspath(__file__))
    if len(sys.argv) >= 2 and sys.argv[1] == "check":
        check(sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "fixtures", "official"))
    elif len(sys.argv) >= 3 and sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        print(__doc__)
        sys.exit(2)
