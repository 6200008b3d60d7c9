#!/usr/bin/env python3
"""Anchor timings for `foxeval bench attention`: PyTorch SDPA per backend and, when its file is
given, the official Triton Forgetting Attention kernel, on the issue's prefill shapes.

Runs on the GPU machine (PyTorch + Triton preinstalled); the official kernel is not part of
foxeval: pass the path of `ops/forgetting_attention.py` from the official repository.

  python3 scripts/bench_attention_anchor.py [--official PATH] [--out anchors.json]

Timing: CUDA events around each call, 3 warm-up calls, median of --iters. FLOPs are counted as
4*B*H*T*T*D/2 (causal), as in `foxeval bench attention`.
"""
import argparse
import datetime
import importlib.util
import json
import math
import statistics
import sys
import types

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = [(1, 16384, 16, 128), (4, 4096, 24, 64), (1, 16384, 24, 64), (1, 65536, 24, 64)]


def load_official(path):
    try:
        import einops  # noqa: F401
    except ImportError:  # the kernel only needs rearrange, and only when head_first=False
        stub = types.ModuleType("einops")
        stub.rearrange = None
        sys.modules["einops"] = stub
    spec = importlib.util.spec_from_file_location("official_fa", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.forgetting_attention


def time_ms(fn, iters):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--official", help="path of the official ops/forgetting_attention.py")
    ap.add_argument("--out", default="attention-anchors.json")
    ap.add_argument("--iters", type=int, default=10)
    args = ap.parse_args()
    official = load_official(args.official) if args.official else None
    torch.manual_seed(0)
    rows = []
    print(f"{'B x T x H x D':>22} {'impl':>10} {'ms':>9} {'TFLOP/s':>8}")
    for B, T, H, D in SHAPES:
        q, k, v = (torch.randn(B, H, T, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        log_f = F.logsigmoid(torch.randn(B, H, T, device="cuda") + 3.0)
        flops = 4.0 * B * H * T * T * D / 2
        impls = {}
        for name, backend in [("sdpa_flash", SDPBackend.FLASH_ATTENTION), ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION),
                              ("sdpa_efficient", SDPBackend.EFFICIENT_ATTENTION)]:
            def run(backend=backend):
                with sdpa_kernel(backend):
                    F.scaled_dot_product_attention(q, k, v, is_causal=True)
            impls[name] = run
        impls["sdpa_default"] = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
        if official is not None:
            impls["official"] = lambda: official(q, k, v, log_f, head_first=True, sm_scale=1 / math.sqrt(D))
        row = {"batch": B, "seqlen": T, "heads": H, "head_dim": D}
        for name, fn in impls.items():
            try:
                ms = time_ms(fn, args.iters)
            except Exception as e:  # a backend that refuses the shape: say so, keep going
                print(f"{B}x{T}x{H}x{D:>4} {name:>14}: unavailable ({str(e).splitlines()[0][:80]})")
                continue
            row[f"{name}_ms"] = round(ms, 4)
            row[f"{name}_tflops"] = round(flops / ms / 1e9, 1)
            print(f"{f'{B}x{T}x{H}x{D}':>22} {name:>14} {ms:9.3f} {flops / ms / 1e9:8.1f}")
        rows.append(row)
    out = {"gpu": torch.cuda.get_device_name(), "date": datetime.date.today().isoformat(),
           "torch": torch.__version__, "rows": rows}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
