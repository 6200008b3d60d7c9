#!/usr/bin/env python3
"""Anchor for `foxeval bench prefill` (Transformer families): the OFFICIAL model code
(forgetting-transformer) computing per-token loss as eval/per_token_loss runs it: fp32 weights,
`torch.autocast("cuda", torch.bfloat16)`, `torch.no_grad()`, `model(input_ids=..., labels=...)`,
whose `loss` is the per-token loss (fla's FusedCrossEntropyLoss, reduction 'none').

  PYTHONPATH=.devdata/anchor/wheels/einops-0.8.2-py3-none-any.whl \
  python3 scripts/bench_prefill_anchor.py --official-src .devdata/anchor/official_src/src \
      --fla-src .devdata/anchor/fla_src \
      --models transformer_pro=/tmp/ckpt-transformer_pro,transformer_swa=/tmp/ckpt-transformer_swa \
      [--seq-lens 16384,65536] [--repeats 2] [--warmup 1] --out anchor.json

Families: transformer_pro (`forgetting_transformer-project_fox` without a forget gate: the official
Triton forgetting-attention kernel), transformer_swa (`transformer-project_fox` with `window_size`:
the official layer calls flash_attn_func(q, k, v, causal=True, window_size=(W - 1, 0))).

flash-attn is not installed on the GPU machine (no network, no build), so `flash_attn` is a stand-in
module (listed in the JSON's shims): flash_attn_func is PyTorch's FlexAttention (compiled, Triton) with
flash-attn's rule as its block mask, query i sees keys i-W+1..i (causal only without a window); it
computes the same softmax attention, skipping key blocks outside the window as flash-attn does, so
its time is of the same kind, not flash-attn's own. --check runs the official tiny fixtures (their
reference.safetensors, fp32, no autocast) through the same stand-in on the GPU and compares per-token
losses with `logits_fp32` (2e-5 mean / 2e-4 max): the stand-in and the loading are what was timed.

Input, per length T: splitmix64(--seed) ids % vocab, input [BOS] + row[:T-1], labels row (the
official eval's layout; random weights, so only the time compares). Time: --warmup untimed forwards (Triton compiles), then the median of
--repeats forwards between torch.cuda.synchronize() calls; peak = max_memory_allocated over them.
"""
import argparse
import gc
import importlib
import importlib.machinery
import os
import statistics
import sys
import types

import torch
import torch.nn.functional as F

import official_anchor  # shared loading of the archived official code (this folder)
from official_anchor import (anchor_result, load_checked, read_commit, splitmix64_ids,
                             timed_forwards, token_loss)

FAMILIES = {  # family: (model_type, official module, CausalLM class)
    "transformer_pro": ("forgetting_transformer-project_fox",
                        "forgetting_transformer.model.forgetting_transformer.modeling_forgetting_transformer",
                        "ForgettingTransformerForCausalLM"),
    "transformer_swa": ("transformer-project_fox", "forgetting_transformer.model.transformer.modeling_transformer",
                        "TransformerForCausalLM"),
}
SHIMS = [
    "flash_attn: stand-in module; flash_attn_func(q, k, v, causal=True, window_size=(W-1, 0)) = "
    "torch.nn.attention.flex_attention (torch.compile) with the block mask kv <= q and q - kv < W "
    "(flash-attn's rule), [B, T, H, D] in and out, Tq = Tk only; flash_attn_varlen_func and bert_padding "
    "refuse (padding is never used here)",
    "pytest: empty stand-in when not installed (imported by the official token_shift.py for its tests)",
    "einops: from the carried wheel",
    "transformers 5 from_pretrained: RoPE's inv_freq recomputed (official_anchor.restore_rope)",
]
def install_flash_attn_stand_in():
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    compiled = torch.compile(flex_attention, dynamic=False)
    masks = {}

    def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1), **unused):
        if not causal or window_size[1] not in (0, -1) or q.shape[1] != k.shape[1] or dropout_p:
            raise NotImplementedError(f"flash_attn stand-in: causal prefill only (causal={causal}, "
                                      f"window_size={window_size}, Tq={q.shape[1]}, Tk={k.shape[1]})")
        T, left = q.shape[1], window_size[0]
        key = (T, left, q.device)
        if key not in masks:
            def rule(b, h, qi, ki):
                inside = ki <= qi
                return inside & (qi - ki <= left) if left >= 0 else inside
            masks[key] = create_block_mask(rule, B=None, H=None, Q_LEN=T, KV_LEN=T, device=q.device)
        o = compiled(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), block_mask=masks[key],
                     scale=softmax_scale)
        return o.transpose(1, 2)

    def refuse(*args, **kwargs):
        raise NotImplementedError("flash_attn stand-in: padded (varlen) attention is not used by this anchor")

    mod = types.ModuleType("flash_attn")
    mod.flash_attn_func, mod.flash_attn_varlen_func = flash_attn_func, refuse
    pad = types.ModuleType("flash_attn.bert_padding")
    pad.index_first_axis = pad.pad_input = pad.unpad_input = refuse
    mod.bert_padding = pad
    # transformers 5 asks importlib.util.find_spec("flash_attn") while it imports (activations ->
    # hub_kernels): a module without __spec__ raises there. With a spec and no installed metadata,
    # transformers counts flash_attn as absent, and the official code still imports the stand-in.
    mod.__spec__ = importlib.machinery.ModuleSpec("flash_attn", None)
    pad.__spec__ = importlib.machinery.ModuleSpec("flash_attn.bert_padding", None)
    sys.modules["flash_attn"], sys.modules["flash_attn.bert_padding"] = mod, pad


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    official_anchor.add_timing_args(ap, FAMILIES, "FAMILY=DIR,... (transformer_pro, transformer_swa)",
                                    "untimed forwards first (compiles)",
                                    "compare with the fixtures' logits_fp32 instead of timing "
                                    "(each DIR an official fixture with reference.safetensors)")
    a = official_anchor.parse_timing_args(ap)
    if not torch.cuda.is_available():
        ap.error("needs a CUDA device (the official kernels are Triton, the stand-in FlexAttention)")
    return a


def check_fixture(model, path, device):
    from safetensors.torch import load_file
    ref = load_file(os.path.join(path, "reference.safetensors"))
    if "logits_fp32" not in ref:
        sys.exit(f"{path}/reference.safetensors: no logits_fp32")
    ids = ref["input_ids"].to(device)
    loss = token_loss(model, ids[:, :-1].contiguous(), ids[:, 1:].contiguous(), device, False).cpu().double()
    logits = ref["logits_fp32"][:, :-1].double()
    want = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ref["input_ids"][:, 1:].reshape(-1),
                           reduction="none").view_as(loss)
    diff = (loss - want).abs()
    row = {"fixture": path, "reference": "logits_fp32", "mean_abs_diff": diff.mean().item(),
           "max_abs_diff": diff.max().item(), "tolerance": {"mean": 2e-5, "max": 2e-4}}
    row["ok"] = row["mean_abs_diff"] <= 2e-5 and row["max_abs_diff"] <= 2e-4
    return row


def time_length(model, config, T, a, device):
    ids = splitmix64_ids(a.seed, T, config.vocab_size)
    labels = torch.tensor([ids], dtype=torch.long, device=device)
    inputs = torch.cat([torch.full((1, 1), config.bos_token_id, dtype=torch.long, device=device), labels[:, :-1]], 1)
    times, peak, loss = timed_forwards(model, inputs, labels, device, a.warmup, a.repeats)
    if not torch.isfinite(loss).all():
        raise RuntimeError(f"non-finite per-token loss at T={T}")
    seconds = statistics.median(times)
    return {"seq_len": T, "seconds": seconds, "all_seconds": times, "tokens_per_s": T / seconds,
            "peak_gpu_memory_bytes": peak, "mean_loss": loss.double().mean().item(), "first_ids": ids[:8]}


def main():
    a = parse_args()
    commits = {"official": read_commit(a.official_src, "--official-src"), "fla": read_commit(a.fla_src, "--fla-src")}
    official_anchor.add_official_src(os.path.abspath(a.official_src))
    official_anchor.add_fla_src(os.path.abspath(a.fla_src))
    install_flash_attn_stand_in()  # before the official module reads flash_attn
    import transformers
    import triton
    device = torch.device("cuda")
    rows, failed = [], False
    for family, path in a.models:
        _, module, name = FAMILIES[family]
        model = load_checked(getattr(importlib.import_module(module), name), family, path, device, FAMILIES[family][0])
        cfg = model.config
        n_params = sum(p.numel() for p in model.parameters())
        print(f"{family} from {path}: {n_params / 1e6:.1f}M parameters, window_size "
              f"{getattr(cfg, 'window_size', None)}", flush=True)
        if a.check:
            row = check_fixture(model, path, device)
            failed |= not row["ok"]
            print(f"  per-token loss vs logits_fp32: mean |diff| {row['mean_abs_diff']:.3g}, max "
                  f"{row['max_abs_diff']:.3g} {'ok' if row['ok'] else 'FAILED'}", flush=True)
            row["family"] = family
            rows.append(row)
        else:
            for T in a.seq_lens:
                try:
                    row = time_length(model, cfg, T, a, device)
                    print(f"  T={T}: {row['seconds']:.3f} s ({row['tokens_per_s']:.0f} tok/s), peak "
                          f"{row['peak_gpu_memory_bytes'] / 2**30:.2f} GiB, mean loss {row['mean_loss']:.5f}", flush=True)
                except torch.OutOfMemoryError as e:
                    row = {"seq_len": T, "error": "out of memory: " + str(e).splitlines()[0][:200]}
                    print(f"  T={T}: {row['error']}", flush=True)
                row.update({"family": family, "model": path, "parameters": n_params,
                            "window_size": getattr(cfg, "window_size", None)})
                rows.append(row)
                gc.collect()
                torch.cuda.empty_cache()
        del model
        gc.collect()
        torch.cuda.empty_cache()
    out = anchor_result("prefill-anchor", a, torch.cuda.get_device_name(device), commits, SHIMS, rows,
                        autocast="none (fp32 check)" if a.check else "bfloat16 (fp32 weights), as eval/per_token_loss")
    official_anchor.finish(out, a.out, failed)


if __name__ == "__main__":
    main()
