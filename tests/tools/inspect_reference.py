#!/usr/bin/env python3
"""Goldens for `foxeval inspect` (tests/test_inspect.cpp): the OFFICIAL FoX model code
(forgetting-transformer 883f260) run on the CPU in fp32, its own log_fgate taken where the layer
hands it to the attention kernel, and the statistics foxeval reports computed from it here, in
numpy, by their definitions (tasks/inspect/gate_stats.h): exact quantiles (sorted values), reach by
brute force over every (query, key) pair.

  PYTHONPATH=/tmp/inspect/pylib TRITON_INTERPRET=1 .venv/bin/python tests/tools/inspect_reference.py \
      --official-src /tmp/inspect/src tests/fixtures/inspect

--official-src: the official repository's `src` folder (git archive of 883f260). PYTHONPATH must
hold einops and transformers (pip install --target). TRITON_INTERPRET=1 runs the official Triton
helpers (RMSNorm, group norm, token shift) on the CPU with Triton's interpreter.

Shim: the Triton forgetting_attention kernel has no CPU path; it is replaced by the official test's
own reference math (ops/forgetting_attention.py, test_op: softmax(q k^T * scale + c_i - c_j),
causal) in fp32, and the call's arguments q, k, log_fgate are recorded. fla_utils' device context
(torch.<device>.device(index), which torch.cpu lacks) is a null context; Triton's autotuner
times nothing (the first config runs) and the interpreter's scalar-to-int goes through indexing
(NumPy >= 2.4), as scripts/bench_recurrent_anchor.py's CPU check does; glu_linear's jiterator
(CUDA-only) gated units are the same formulas in torch. Nothing else is changed.
The forward is checked against the fixture's official logits (bf16 ones: within bf16 noise).

Writes OUT_DIR/<case>.safetensors (log_fgate per layer [B, H, T]; the attention head's q, k) and
OUT_DIR/<case>.json (input ids, statistics per layer and head over all rows, the attention
probabilities of one head on a span).
"""
import argparse
import contextlib
import json
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SHARED = os.path.abspath(os.path.join(ROOT, "..", "shared", "fixtures"))

TOLERANCES = [5.0, 10.0]
GATE_THRESHOLDS = [0.9, 0.99, 0.999]
GATE_QUANTILES = [0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99]
REACH_QUANTILES = [0.1, 0.5, 0.9]

# case: (checkpoint folder under ../shared/fixtures, how its rows are read, (layer, head, begin, end) of the attention golden)
CASES = {
    "fox_pro": ("official/fox_pro", "input_ids", (1, 2, 0, 48)),
    "fox_llama": ("official/fox_llama", "input_ids", (0, 1, 40, 100)),
    "fox_pro_tiny_pg": ("trained/fox_pro_tiny_pg", "rows", (3, 1, 100, 196)),
}


def rank(q, n):
    return max(1, math.ceil(q * n))


def key(v):
    """The JSON key foxeval writes for a number ({} of fmt: shortest repr, integers without .0)."""
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def head_stats(x):
    """x: [rows, T] float64 log gates of one head. Statistics as gate_stats.h defines them."""
    flat = x.reshape(-1)
    n = flat.size
    a = np.exp(flat)
    srt = np.sort(a)
    out = {
        "n": n,
        "mean": float(a.mean()),
        "mean_log_gate": float(flat.mean()),
        "frac_above": {key(p): float(np.sum(flat > math.log(p)) / n) for p in GATE_THRESHOLDS},
        "quantiles": {key(q): float(srt[rank(q, n) - 1]) for q in GATE_QUANTILES},
        "reach": {},
    }
    for tau in TOLERANCES:
        reach, censored, pruned, pairs = [], 0, 0, 0
        for row in x:
            c = np.cumsum(row)  # in order, float64
            T = c.size
            # idx_i = #{j < i : c_j > c_i + tau}, by brute force over the pairs
            above = c[None, :] > (c[:, None] + tau)
            above &= np.tril(np.ones((T, T), dtype=bool), -1)
            idx = above.sum(1)
            pos = np.arange(T)
            pruned += int(idx.sum())
            pairs += T * (T + 1) // 2
            censored += int((idx == 0).sum())
            reach.extend(np.where(idx == 0, np.inf, pos - idx + 1).tolist())
        reach = np.sort(np.array(reach))
        m = reach.size
        quant = {}
        for q in REACH_QUANTILES:
            v = reach[rank(q, m) - 1]
            quant[key(q)] = None if np.isinf(v) else int(v)
        out["reach"][key(tau)] = {"quantiles": quant, "censored_fraction": censored / m, "prunable_fraction": pruned / pairs,
                                  "queries": m, "censored": censored, "pruned": pruned}
    return out


def load_official(src):
    sys.path.insert(0, src)
    try:
        import pytest  # noqa: F401
    except ImportError:  # the official token_shift.py imports it for its own tests only
        import types
        stub = types.ModuleType("pytest")
        stub.mark = types.SimpleNamespace(parametrize=lambda *a, **k: (lambda f: f))
        sys.modules["pytest"] = stub
    import forgetting_transformer.model.forgetting_transformer.fla_utils as fla_utils
    import forgetting_transformer.model.forgetting_transformer.modeling_forgetting_transformer as mft
    # fla_utils enters torch.<device>.device(index) around each Triton call; torch.cpu has none.
    fla_utils.custom_device_ctx = lambda index: contextlib.nullcontext()
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
    from triton_interpreter import patch_triton_interpreter  # shared with scripts/bench_recurrent_anchor.py
    patch_triton_interpreter()
    # glu_linear's gated units are CUDA jiterator kernels: the same formulas (fp32 inside, result in
    # the input dtype) in torch.
    import forgetting_transformer.model.forgetting_transformer.glu_linear as glu
    glu.glu_fwd = lambda x, y: (y.float() * torch.sigmoid(x.float())).to(x.dtype)
    glu.swiglu_fwd = lambda x, y: (x.float() * y.float() * torch.sigmoid(x.float())).to(x.dtype)
    from forgetting_transformer.model.forgetting_transformer import ForgettingTransformerForCausalLM
    return mft, ForgettingTransformerForCausalLM


class Recorder:
    """Stands in for the Triton kernel: records its arguments, returns the official test's reference output."""

    def __init__(self):
        self.calls = []

    def __call__(self, q, k, v, log_fgate, *, head_first=False, seq_start=None, sm_scale=None, adaptive_threshold=None):
        assert head_first and seq_start is None and adaptive_threshold is None
        self.calls.append((q.detach().clone(), k.detach().clone(), log_fgate.detach().clone()))
        T = q.shape[2]
        p = torch.matmul(q, k.transpose(2, 3)) * sm_scale
        p = p.float()
        log_lambda = torch.cumsum(log_fgate, dim=-1)
        p = p + (log_lambda[..., :, None] - log_lambda[..., None, :])
        mask = torch.tril(torch.ones((T, T)))
        p[:, :, mask == 0] = float("-inf")
        p = torch.softmax(p.float(), dim=-1).to(q.dtype)
        return torch.matmul(p, v)


def restore_rope(model):
    for module in model.modules():
        if hasattr(module, "_compute_inv_freq") and getattr(module, "inv_freq", None) is not None:
            module.inv_freq = module._compute_inv_freq(device=module.inv_freq.device)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--official-src", required=True)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("out_dir")
    args = ap.parse_args()
    if os.environ.get("TRITON_INTERPRET") != "1":
        sys.exit("set TRITON_INTERPRET=1 (the official Triton helpers then run on the CPU)")
    from safetensors.torch import load_file, save_file
    mft, LM = load_official(args.official_src)
    os.makedirs(args.out_dir, exist_ok=True)
    torch.manual_seed(0)
    for name in args.cases.split(","):
        folder, kind, (att_layer, att_head, begin, end) = CASES[name]
        ckpt = os.path.join(SHARED, folder)
        ref = load_file(os.path.join(ckpt, "reference.safetensors"))
        if kind == "input_ids":
            ids = ref["input_ids"].long()
        else:  # held-out rows: the loss protocol's input [bos] + row[:-1]
            rows = ref["rows"].long()
            ids = torch.cat([torch.full((rows.shape[0], 1), 50256, dtype=torch.long), rows[:, :-1]], 1)
        model = LM.from_pretrained(ckpt, torch_dtype=torch.float32).eval()
        restore_rope(model)
        rec = Recorder()
        mft.forgetting_attention = rec
        with torch.no_grad():
            logits = model(input_ids=ids, use_cache=False).logits.float()
        # The forward must be the official one: its logits against the fixture's (bf16 noise).
        if "logits_bf16" in ref:
            rel = ((logits - ref["logits_bf16"]).norm() / ref["logits_bf16"].norm()).item()
            print(f"{name}: logits vs logits_bf16 relative error {rel:.2e}")
            assert rel < 0.02, rel
        else:
            lp = torch.log_softmax(logits, -1).gather(-1, rows.unsqueeze(-1)).squeeze(-1)
            diff = (-lp - ref["loss_bf16"]).abs().mean().item()
            print(f"{name}: per-token loss vs loss_bf16 mean abs difference {diff:.2e}")
            assert diff < 0.05, diff
        L = len(rec.calls)
        tensors = {f"log_fgate.{l}": rec.calls[l][2].contiguous() for l in range(L)}
        q, k, lf = rec.calls[att_layer]
        tensors["q"] = q[0, att_head].contiguous()
        tensors["k"] = k[0, att_head].contiguous()
        save_file(tensors, os.path.join(args.out_dir, f"{name}.safetensors"))
        stats = []
        for l in range(L):
            x = rec.calls[l][2].double().numpy()  # [B, H, T]
            stats.append([head_stats(x[:, h]) for h in range(x.shape[1])])
        # One head's attention probabilities, recomputed here in float64 from the layer's q, k and gates.
        qd, kd = q[0, att_head].double(), k[0, att_head].double()
        c = torch.from_numpy(np.cumsum(lf[0, att_head].double().numpy()))
        scale = 1.0 / math.sqrt(qd.shape[-1])
        s = qd[begin:end] @ kd[:end].T * scale + c[begin:end, None] - c[None, :end]
        s = s.masked_fill(torch.arange(end)[None, :] > torch.arange(begin, end)[:, None], float("-inf"))
        probs = torch.softmax(s, -1)[:, begin:end]
        decay = torch.exp(c[begin:end, None] - c[None, begin:end])
        golden = {
            "model": folder,
            "input_ids": ids.tolist(),
            "layers": L,
            "stats": stats,
            "attention": {"layer": att_layer, "head": att_head, "row": 0, "begin": begin, "end": end,
                          "probs": [probs[i, :i + 1].tolist() for i in range(end - begin)],
                          "decay": [decay[i, :i + 1].tolist() for i in range(end - begin)]},
            "source": "forgetting-transformer 883f260, CPU fp32, TRITON_INTERPRET=1, tests/tools/inspect_reference.py",
        }
        with open(os.path.join(args.out_dir, f"{name}.json"), "w") as f:
            json.dump(golden, f)
        print(f"{name}: {L} layers, rows {ids.shape[0]} x {ids.shape[1]} tokens")


if __name__ == "__main__":
    main()
