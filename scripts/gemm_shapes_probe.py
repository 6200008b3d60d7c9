#!/usr/bin/env python3
"""Times the 760M models' prefill GEMMs (bf16, M tokens) in PyTorch on the GPU machine, with
cuBLAS and with cuBLASLt as torch's preferred BLAS, and names the kernel each one runs.

A probe for the prefill stage table's slow projections (o_proj, 1536 -> 1536, runs below the
other GEMMs); test tooling only, never used at run time. Prints a table and writes JSON.
  python3 scripts/gemm_shapes_probe.py [--out FILE] [--tokens 65536]
"""
import argparse
import json

import torch

from bench_attention_anchor import time_ms  # CUDA events, 3 warm-up calls, the median (scripts/)

SHAPES = [  # (K, N): in -> out features
    (1536, 1536),   # o_proj
    (1536, 6168),   # Transformer (Pro) fused q, k, v, output gate, shift logits
    (1536, 6144),
    (1536, 7168),   # gate_up
    (3584, 1536),   # down
    (1536, 50304),  # LM head
]


def kernel_name(fn):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events()
             if e.device_type == torch.autograd.DeviceType.CUDA and not e.name.startswith("Memset")]
    return names[0] if names else "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=65536)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    torch.manual_seed(0)
    rows = []
    backends = ["cublas", "cublaslt"]
    for M in (args.tokens, 32768, 16384, 8192, 4096, 2048):
        for K, N in SHAPES:
            if M != args.tokens and (K, N) not in ((1536, 1536), (1536, 7168), (3584, 1536)):
                continue
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16) / K ** 0.5
            fn = lambda: torch.nn.functional.linear(x, w)  # noqa: E731
            ref = None
            for be in backends:
                torch.backends.cuda.preferred_blas_library(be)
                ms = time_ms(fn, args.repeats)
                y = fn()
                same = None if ref is None else bool(torch.equal(y, ref))
                ref = y if ref is None else ref
                row = dict(M=M, K=K, N=N, backend=be, ms=ms, tflops=2 * M * K * N / ms / 1e9,
                           kernel=kernel_name(fn)[:110], same_bits_as_cublas=same)
                rows.append(row)
                print(f"M={M:6d} {K:5d}->{N:5d} {be:8s} {ms:8.3f} ms {row['tflops']:6.1f} TF/s "
                      f"same={same} {row['kernel']}", flush=True)
            del x, w, ref
    torch.backends.cuda.preferred_blas_library("cublas")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
