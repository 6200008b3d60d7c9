#!/usr/bin/env python3
"""Held-out Mamba-2 fixtures with the kernels' semantics: tests/fixtures/mamba2_kernels/.

The official Mamba-2 code (forgetting-transformer 883f260) makes four random checkpoints whose
configs differ from the shared fixtures' (chunk sizes 32..256, 3 layers, expand 1, biases on,
conv bias off, tied embeddings, a finite time_step_limit as mamba_ssm's dt_limit, a raised
time_step_min), then computes each one's per-token loss on mamba_ssm v2.2.2's Triton kernels
(`cuda_kernels_forward`: mamba_chunk_scan_combined, the gated RMSNorm) run by Triton's
interpreter on the CPU in fp32: the paper's semantics (no dt clamp at time_step_min; dt bounded
only by a time_step_limit other than (0, inf)), by the kernels themselves rather than by our
reading of them. Every parameter is perturbed off its init constants (norm weights of 1, D of 1,
zero biases) so that each enters the loss.

Each folder: config.json + model.safetensors (official names, F32; the tied case saves no
lm_head) and reference.safetensors with `input_ids` [1, T] (BOS 0 first) and
`token_loss_kernels` [1, T-1] F64 (loss of ids[1:] given ids[:-1]).

The official code, fla and mamba_ssm are read from archived sources (never committed; the README's
"HF generate anchor" section and scripts/device_recurrent_bench.sh say how to archive them), with
scripts/bench_recurrent_anchor.py's shims (its --check runs the same path on the shared fixtures):

  TRITON_INTERPRET=1 PYTHONPATH=.devdata/anchor/wheels/einops-0.8.2-py3-none-any.whl \\
  .venv/bin/python tests/tools/make_mamba2_kernel_fixtures.py --official-src .devdata/anchor/official_src/src \\
      --fla-src .devdata/anchor/fla_src --mamba-src .devdata/anchor/mamba_src --out tests/fixtures/mamba2_kernels

Needs transformers 5 (5.17.0 made them) and triton (torch's). About 30 s.
"""
import argparse
import os
import sys
import types

import torch
from safetensors.torch import save_file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import bench_recurrent_anchor as anchor  # noqa: E402  (the shims, shared)

# name: (seed, T, config). T spans several chunks in each case.
CASES = {
    "small_chunks": (11, 300, dict(hidden_size=48, num_heads=6, head_dim=16, state_size=8, conv_kernel=3,
                                   chunk_size=64, use_bias=True, use_conv_bias=False, num_hidden_layers=3)),
    "dt_limit": (12, 400, dict(hidden_size=64, num_heads=4, head_dim=32, state_size=16, chunk_size=128,
                               time_step_limit=(0.002, 0.05), num_hidden_layers=2)),
    "tied_step_min": (13, 520, dict(hidden_size=32, num_heads=2, head_dim=32, state_size=32, chunk_size=256,
                                    tie_word_embeddings=True, time_step_min=0.01, time_step_max=0.2,
                                    num_hidden_layers=2)),
    "expand1_limit": (14, 200, dict(hidden_size=64, expand=1, num_heads=8, head_dim=8, state_size=4, chunk_size=32,
                                    time_step_limit=(0.0, 0.03), num_hidden_layers=2)),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--official-src", required=True)
    ap.add_argument("--fla-src", required=True)
    ap.add_argument("--mamba-src", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if os.environ.get("TRITON_INTERPRET") != "1":
        sys.exit("set TRITON_INTERPRET=1: the Triton kernels run in the interpreter on the CPU")
    ns = types.SimpleNamespace(official_src=a.official_src, fla_src=a.fla_src, mamba_src=a.mamba_src,
                               models=[("mamba2", None)])
    cls = anchor.import_official(ns, anchor.ConvShim())["mamba2"]
    anchor.cpu_allocations_for_check()  # the kernel path on the CPU (see its docstring)
    # transformers 5 wants the tied-weights map as {target: source} (the official class has a list)
    cls._tied_weights_keys = {"lm_head.weight": "backbone.embeddings.weight"}
    from forgetting_transformer.model.mamba2.configuration_mamba2 import Mamba2Config
    for name, (seed, T, kw) in CASES.items():
        torch.manual_seed(seed)
        config = Mamba2Config(vocab_size=256, n_groups=1, bos_token_id=0, eos_token_id=0, pad_token_id=0, **kw)
        model = cls(config).float().eval()
        with torch.no_grad():
            for p in model.parameters():
                p.add_(0.05 * torch.randn_like(p))
        if config.tie_word_embeddings:
            assert model.lm_head.weight.data_ptr() == model.backbone.embeddings.weight.data_ptr()
        out = os.path.join(a.out, name)
        model.save_pretrained(out)
        ids = torch.randint(1, 256, (1, T))
        ids[:, 0] = 0
        with torch.no_grad():  # the official loss: fla's FusedCrossEntropyLoss, reduction 'none'
            loss = model(input_ids=ids[:, :-1], labels=ids[:, 1:]).loss.double().view(1, T - 1)
        save_file({"input_ids": ids.contiguous(), "token_loss_kernels": loss.contiguous()},
                  os.path.join(out, "reference.safetensors"))
        print(f"{name}: T={T}, mean loss {loss.mean().item():.5f}")


if __name__ == "__main__":
    main()
