#!/usr/bin/env python3
"""Anchor for Samba in `foxeval bench prefill`: the OFFICIAL Samba (forgetting-transformer
883f260 model/samba with flash-linear-attention 1c5937ee's MambaMixer) computing per-token loss
as the official eval/per_token_loss runs a model: fp32 weights, `torch.autocast("cuda",
torch.bfloat16)`, `torch.no_grad()`, `model(input_ids=..., labels=...)` (per-token loss, fla's
FusedCrossEntropyLoss, labels not shifted).

  PYTHONPATH=.devdata/anchor/wheels/einops-0.8.2-py3-none-any.whl \
  python3 scripts/bench_samba_anchor.py --official-src .devdata/anchor/official_src/src \
      --fla-src .devdata/anchor/fla_src --model /tmp/ckpt-samba [--seq-lens 16384,65536] \
      [--repeats 1] [--warmup 0] --out anchor-samba.json

What runs, and why (each in the JSON):
  * Mamba layers: fla's MambaMixer takes its fast path only with mamba_ssm's CUDA extension
    (selective_scan_cuda) and causal_conv1d built; the GPU machine has neither, so it runs its
    pure-PyTorch slow_forward (a Python loop over the tokens; `fast_path` in the JSON says which ran).
    It is the official code as a user without those extensions runs it, not the speed of the kernels.
  * Attention layers: flash_attn is not installed there; a stand-in `flash_attn_func` with
    flash-attn's window rule (window_size=(W-1, 0): query i sees keys i-W+1..i) computes it with
    torch's scaled_dot_product_attention over query blocks of 2048 against their key window (never
    a T x T mask). The padding entry points (varlen, bert_padding) are not used by the loss and raise.
  * pytest stand-in and einops from the wheel (scripts/official_anchor.py); RoPE's inv_freq rebuilt
    after transformers 5 from_pretrained.
Input per length T: the splitmix64 ids of scripts/bench_recurrent_anchor.py (seed --seed), input
[BOS] + row[:T-1], labels row. Time: --warmup untimed forwards, then the median of --repeats, each
between torch.cuda.synchronize() calls; peak = torch.cuda.max_memory_allocated (fp32 weights included).
"""
import argparse
import datetime
import gc
import importlib
import importlib.machinery
import importlib.util
import json
import os
import statistics
import sys
import time
import types

import torch
import torch.nn.functional as F

import official_anchor  # this folder
from official_anchor import int_list, read_commit, restore_rope

BLOCK = 2048


def flash_attn_stand_in():
    def flash_attn_func(q, k, v, causal=False, window_size=(-1, -1), **kwargs):
        if not causal or window_size[1] not in (0, -1) or kwargs.get("dropout_p", 0.0):
            raise NotImplementedError(f"flash_attn stand-in: causal={causal}, window_size={window_size}, {kwargs}")
        left = window_size[0]
        qh, kh, vh = (x.transpose(1, 2) for x in (q, k, v))  # [B, H, T, D]
        T = qh.shape[2]
        out = torch.empty_like(qh)
        for i0 in range(0, T, BLOCK):
            i1 = min(T, i0 + BLOCK)
            lo = 0 if left < 0 else max(0, i0 - left)
            qi = torch.arange(i0, i1, device=q.device)[:, None]
            kj = torch.arange(lo, i1, device=q.device)[None, :]
            mask = kj <= qi
            if left >= 0:
                mask &= kj >= qi - left
            out[:, :, i0:i1] = F.scaled_dot_product_attention(qh[:, :, i0:i1], kh[:, :, lo:i1], vh[:, :, lo:i1],
                                                              attn_mask=mask)
        return out.transpose(1, 2)

    def not_used(*args, **kwargs):
        raise NotImplementedError("flash_attn stand-in: the padding path is not used by the loss")

    fa, bp = types.ModuleType("flash_attn"), types.ModuleType("flash_attn.bert_padding")
    fa.flash_attn_func, fa.flash_attn_varlen_func = flash_attn_func, not_used
    bp.index_first_axis = bp.pad_input = bp.unpad_input = not_used
    fa.bert_padding = bp
    # transformers 5 calls importlib.util.find_spec("flash_attn") while importing: a module without
    # __spec__ raises there; with a spec and no installed metadata it counts flash_attn as absent.
    fa.__spec__ = importlib.machinery.ModuleSpec("flash_attn", None)
    bp.__spec__ = importlib.machinery.ModuleSpec("flash_attn.bert_padding", None)
    sys.modules["flash_attn"], sys.modules["flash_attn.bert_padding"] = fa, bp
    return flash_attn_func


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--official-src", required=True)
    ap.add_argument("--fla-src", required=True)
    ap.add_argument("--model", required=True, help="a samba-project_fox checkpoint folder")
    ap.add_argument("--seq-lens", type=int_list(2), default=[16384, 65536])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.repeats < 1 or a.warmup < 0:
        ap.error("--repeats must be >= 1 and --warmup >= 0")
    if not a.device.startswith("cuda"):
        ap.error(f"--device {a.device}: a timing anchor (fla's norms and loss are Triton kernels)")
    return a


def omegaconf_stand_in():
    """The official SambaConfig tests isinstance(attn, DictConfig) with DictConfig = None when
    omegaconf (a training dependency) is absent, which raises TypeError: give it a class no plain
    dict is an instance of, as omegaconf's would be."""
    if importlib.util.find_spec("omegaconf") is not None:
        return
    oc = types.ModuleType("omegaconf")
    oc.__spec__ = importlib.machinery.ModuleSpec("omegaconf", None)

    class DictConfig:  # never instantiated: config.json gives plain dicts
        pass

    class OmegaConf:
        @staticmethod
        def to_container(x):
            return x

    oc.DictConfig, oc.OmegaConf = DictConfig, OmegaConf
    sys.modules["omegaconf"] = oc


def main():
    a = parse_args()
    commits = {"official": read_commit(a.official_src, "--official-src"), "fla": read_commit(a.fla_src, "--fla-src")}
    official_anchor.add_official_src(os.path.abspath(a.official_src))
    official_anchor.add_fla_src(os.path.abspath(a.fla_src))
    flash_attn_stand_in()
    omegaconf_stand_in()
    modeling = importlib.import_module("forgetting_transformer.model.samba.modeling_samba")
    fla_mamba = importlib.import_module("fla.models.mamba.modeling_mamba")
    from bench_recurrent_anchor import splitmix64_ids  # this folder: the same ids as the recurrent anchor
    import transformers
    device = torch.device(a.device)
    with open(os.path.join(a.model, "config.json")) as f:
        if json.load(f).get("model_type") != "samba-project_fox":
            sys.exit(f"--model {a.model}: not a samba-project_fox checkpoint")
    model, info = modeling.SambaForCausalLM.from_pretrained(a.model, dtype=torch.float32, output_loading_info=True)
    bad = {k: v for k, v in info.items() if k in ("missing_keys", "unexpected_keys", "mismatched_keys") and v}
    if bad:
        sys.exit(f"{a.model}: the official SambaForCausalLM does not match the checkpoint: {bad}")
    restore_rope(model)
    model = model.to(device).eval()
    cfg = model.config
    n_params = sum(p.numel() for p in model.parameters())
    print(f"official Samba from {a.model}: {n_params / 1e6:.1f}M parameters; MambaMixer fast path: "
          f"{fla_mamba.is_fast_path_available}", flush=True)
    rows = []
    for T in a.seq_lens:
        ids = splitmix64_ids(a.seed, T, cfg.vocab_size)
        labels = torch.tensor([ids], dtype=torch.long, device=device)
        inputs = torch.cat([torch.full((1, 1), cfg.bos_token_id, dtype=torch.long, device=device), labels[:, :-1]], 1)

        def run():
            with torch.no_grad(), torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                return model(input_ids=inputs, labels=labels, use_cache=False).loss.float()
        try:
            for _ in range(a.warmup):
                run()
            times, peak, loss = [], 0, None
            for _ in range(a.repeats):
                torch.cuda.synchronize(device)
                torch.cuda.reset_peak_memory_stats(device)
                start = time.perf_counter()
                loss = run()
                torch.cuda.synchronize(device)
                times.append(time.perf_counter() - start)
                peak = max(peak, torch.cuda.max_memory_allocated(device))
            row = {"seq_len": T, "seconds": statistics.median(times), "all_seconds": times,
                   "peak_gpu_memory_bytes": peak, "mean_loss": loss.double().mean().item(), "first_ids": ids[:8]}
            print(f"  T={T}: {row['seconds']:.3f} s/doc, peak {peak / 2**30:.2f} GiB, mean loss {row['mean_loss']:.5f}",
                  flush=True)
        except torch.OutOfMemoryError as e:
            row = {"seq_len": T, "error": "out of memory: " + str(e).splitlines()[0][:200]}
            print(f"  T={T}: {row['error']}", flush=True)
        rows.append(row)
        gc.collect()
        torch.cuda.empty_cache()
    out = {"kind": "samba-anchor", "gpu": torch.cuda.get_device_name(device), "date": datetime.date.today().isoformat(),
           "torch": torch.__version__, "transformers": transformers.__version__, "commits": commits,
           "model": a.model, "parameters": n_params, "mamba_fast_path": bool(fla_mamba.is_fast_path_available),
           "autocast": "bfloat16 (fp32 weights), as eval/per_token_loss", "seed": a.seed,
           "warmup": a.warmup, "repeats": a.repeats,
           "shims": ["flash_attn: stand-in flash_attn_func (window rule, SDPA over query blocks of 2048)",
                     "pytest stand-in, einops from the wheel, RoPE inv_freq rebuilt (scripts/official_anchor.py)"],
           "rows": rows}
    if a.out:
        official_anchor.write_json(a.out, out)


if __name__ == "__main__":
    main()
