#!/usr/bin/env python3
"""Anchor for `foxeval bench recurrent`: the OFFICIAL Mamba-2, HGRN2 and DeltaNet model code
(forgetting-transformer) computing per-token loss on the official GPU kernels, as the official
eval/per_token_loss/run_per_token_loss.py runs it: fp32 weights, `torch.autocast("cuda",
torch.bfloat16)`, `torch.no_grad()`, `model(input_ids=..., labels=...)`, whose `loss` is the
per-token loss (fla's FusedCrossEntropyLoss, reduction 'none'; labels not shifted).

  PYTHONPATH=.devdata/anchor/wheels/einops-0.8.2-py3-none-any.whl \
  python3 scripts/bench_recurrent_anchor.py --official-src .devdata/anchor/official_src/src \
      --fla-src .devdata/anchor/fla_src --mamba-src .devdata/anchor/mamba_src \
      --models mamba2=/tmp/ckpt-mamba2,hgrn2=/tmp/ckpt-hgrn2,delta_net=/tmp/ckpt-delta_net \
      [--seq-lens 16384,65536] [--repeats 2] [--warmup 1] \
      [--causal-conv1d .devdata/anchor/causal_conv1d_pkg] --out anchor.json

Kernels: Mamba-2 takes its fast path (`cuda_kernels_forward`): mamba_ssm's Triton
`mamba_chunk_scan_combined` (SSD) and gated RMSNorm; HGRN2 fla's `chunk_gla`; DeltaNet fla's
`chunk_delta_rule`; all three fla's Triton RMSNorm/FusedCrossEntropyLoss. The sources are archived
(.devdata/anchor/{official_src/src,fla_src,mamba_src}, each with a COMMIT file the JSON records):
mamba_ssm is v2.2.2, the version the official requirements-dev.txt and REPRODUCE.md pin
(`mamba-ssm==2.2.2`), only its Python files under mamba_ssm/ops/triton.

Input, per length T: one row of T token ids from splitmix64(--seed) (id = output % vocab, the
same sequence `foxeval bench recurrent` makes, so the mean losses can be compared); input =
[BOS] + row[:T-1], labels = row (the official eval's window layout). Time: --warmup untimed
forwards (Triton compiles and autotunes), then the median of --repeats forwards, each between
torch.cuda.synchronize() calls; peak = torch.cuda.max_memory_allocated over the timed forwards
(reset before each; fp32 weights included, as in the official eval). Out of memory gives a row
with "error".

Shims (each listed in the JSON), the least that lets this code run here:
  1. `mamba_ssm` is a bare package object whose __path__ is the archived mamba_ssm folder: its real
     __init__ imports selective_scan_cuda and the Mamba modules (CUDA extensions not built here),
     none of which the loss path uses; the Triton modules then import as in the real package.
  2. `causal_conv1d` (the CUDA extension package, causal-conv1d==1.4.0 in the official
     requirements) is a stand-in module whose causal_conv1d_fn / causal_conv1d_update are
     F.conv1d / a rolling sum in fp32, output in the input's dtype (the extension also
     accumulates in fp32). Both the official Mamba-2 (its fast path requires the two names,
     otherwise it falls back to the pure-PyTorch path with the dt clamp and the chunk bug) and
     fla's ShortConvolution (DeltaNet; it refuses to run without them) call it. Its time is
     counted in the anchor's forward; the JSON gives it separately (`shim_conv_s`, the same calls
     timed alone) so it can be taken out.
     With --causal-conv1d DIR there is no stand-in: DIR (first on sys.path) holds the REAL
     package, causal_conv1d/ and the compiled causal_conv1d_cuda*.so (causal-conv1d 1.4.0 built
     for the GPU machine, how in DIR/BUILD.txt, which the JSON records); causal_conv1d_cuda must
     import from DIR. Its causal_conv1d_fn is wrapped only to record the calls' shapes, layouts
     and dtypes; the same calls replayed alone on the extension are `conv_s` (no `shim_conv_s`).
  3. `pytest` stand-in and einops from the wheel (scripts/official_anchor.py).

--check (CPU, TRITON_INTERPRET=1: Triton's interpreter runs the same kernels with numpy) runs
the tiny official fixtures (../shared/fixtures/official/{mamba2,mamba2_multichunk,hgrn2,
delta_net}) and compares the anchor's per-token loss with the loss of the fixture's logits:
in fp32 (no autocast) against `logits_fp32_kernels` (Mamba-2: the kernels' semantics) or
`logits_fp32` (tolerance 2e-5 mean / 2e-4 max), else (DeltaNet) against `logits_bf16` within the
official code's own bf16 noise (5e-3 mean / 3e-2 max); on the CPU in fp32 too (the interpreter's
bf16 arithmetic works on raw bits), with fla's fp32 refusal in chunk_delta_rule skipped.
"""
import argparse
import gc
import importlib
import os
import statistics
import sys
import time
import types

import torch
import torch.nn.functional as F

import official_anchor  # shared loading of the archived official code (this folder)
from official_anchor import (anchor_result, load_checked, read_commit, splitmix64_ids,
                             timed_forwards, token_loss)

FAMILIES = {  # family: (model_type, official module, CausalLM class)
    "mamba2": ("mamba2-project_fox", "forgetting_transformer.model.mamba2.modeling_mamba2", "Mamba2ForCausalLM"),
    "hgrn2": ("hgrn2-project_fox", "forgetting_transformer.model.hgrn2.modeling_hgrn2", "HGRN2ForCausalLM"),
    "delta_net": ("delta_net-project_fox", "forgetting_transformer.model.delta_net.modeling_delta_net",
                  "DeltaNetForCausalLM"),
}
SHIMS = [
    "mamba_ssm: a bare package object with __path__ = the archived mamba_ssm (v2.2.2) folder; its __init__ "
    "(selective_scan_cuda, Mamba modules: CUDA extensions, unused by the loss) is not run; only "
    "mamba_ssm/ops/triton modules are imported",
    "causal_conv1d: stand-in module; causal_conv1d_fn = depthwise F.conv1d (padding K-1, first T outputs) "
    "+ optional SiLU in fp32, output in the input dtype; causal_conv1d_update = rolling state + the same "
    "sum in fp32. Used by Mamba-2's fast path (needs both names) and fla's ShortConvolution (DeltaNet). "
    "Its time is inside the forward; shim_conv_s gives it alone",
    "pytest: empty stand-in when not installed (imported by the official token_shift.py for its tests)",
    "einops: from the carried wheel",
    "transformers 5 from_pretrained: non-persistent buffers checked (none in these models)",
]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    official_anchor.add_timing_args(ap, FAMILIES, "FAMILY=DIR,... (mamba2, hgrn2, delta_net)",
                                    "untimed forwards first (compiles, autotunes)",
                                    "compare with the fixtures' logits instead of timing "
                                    "(each DIR an official fixture with reference.safetensors; CPU: TRITON_INTERPRET=1)")
    ap.add_argument("--mamba-src", required=True, help="archived mamba_ssm Python sources (with COMMIT)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--causal-conv1d", metavar="DIR", help="the real causal_conv1d package (causal_conv1d/, "
                    "causal_conv1d_cuda*.so, BUILD.txt) instead of the stand-in (shim 2)")
    a = official_anchor.parse_timing_args(ap)
    if not a.check and not a.device.startswith("cuda"):
        ap.error(f"--device {a.device}: timings need a CUDA device (the official kernels are Triton)")
    if a.device == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        ap.error("--device cpu runs the Triton kernels in Triton's interpreter: set TRITON_INTERPRET=1")
    if a.causal_conv1d and not a.device.startswith("cuda"):
        ap.error(f"--causal-conv1d with --device {a.device}: the extension's kernels need a CUDA device")
    if a.causal_conv1d and not os.path.isdir(a.causal_conv1d):
        ap.error(f"--causal-conv1d {a.causal_conv1d}: no such folder")
    return a


def replay_seconds(call, device, repeats):
    """Median seconds of `repeats` runs of call() (one untimed run first), synchronized around each."""
    times = []
    for _ in range(repeats + 1):
        torch.cuda.synchronize(device)
        start = time.perf_counter()
        call()
        torch.cuda.synchronize(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:])


class ConvShim:
    """Shim 2: the causal_conv1d package (a CUDA extension) as F.conv1d in fp32. Records the shapes
    it was called with while `recording`, to time the same calls alone afterwards."""

    def __init__(self):
        self.recording = False
        self.calls = []

    def fn(self, x, weight, bias=None, seq_idx=None, initial_states=None, return_final_states=False,
           final_states_out=None, activation=None):
        # causal-conv1d 1.4.0: x (B, D, L), weight (D, K), bias (D,); out (B, D, L) in x's dtype
        if seq_idx is not None or initial_states is not None or return_final_states or final_states_out is not None:
            raise NotImplementedError("causal_conv1d shim: seq_idx / initial or final states are not needed "
                                      "by the loss path and not implemented")
        if activation not in (None, "silu", "swish"):
            raise NotImplementedError(f"causal_conv1d shim: activation {activation}")
        if self.recording:
            self.calls.append((tuple(x.shape), x.dtype, tuple(weight.shape), bias is not None, activation))
        D, K = weight.shape
        with torch.autocast(device_type=x.device.type, enabled=False):
            out = F.conv1d(x.float(), weight.float().unsqueeze(1), None if bias is None else bias.float(),
                           padding=K - 1, groups=D)[..., :x.shape[-1]]
            if activation is not None:
                out = F.silu(out)
        return out.to(x.dtype)

    def update(self, x, conv_state, weight, bias=None, activation=None, cache_seqlens=None):
        # one step: x (B, D); conv_state (B, D, K) shifted left by one and x appended, in place
        if cache_seqlens is not None:
            raise NotImplementedError("causal_conv1d shim: cache_seqlens")
        if activation not in (None, "silu", "swish"):
            raise NotImplementedError(f"causal_conv1d shim: activation {activation}")
        conv_state.copy_(torch.roll(conv_state, shifts=-1, dims=-1))
        conv_state[:, :, -1] = x
        out = (conv_state.float() * weight.float()).sum(-1)
        if bias is not None:
            out = out + bias.float()
        if activation is not None:
            out = F.silu(out)
        return out.to(x.dtype)

    def time_recorded(self, device, repeats=3):
        """Seconds the recorded calls take alone (median of `repeats` per call, summed)."""
        total = 0.0
        for shape, dtype, wshape, has_bias, activation in self.calls:
            B, D, L = shape
            x = torch.randn(B, L, D, device=device, dtype=dtype).transpose(1, 2)  # the callers' layout
            w = torch.randn(*wshape, device=device)
            b = torch.randn(wshape[0], device=device) if has_bias else None
            total += replay_seconds(lambda: self.fn(x, w, b, activation=activation), device, repeats)
            del x, w, b
        return total


class RealConv:
    """--causal-conv1d DIR: the real causal_conv1d package (the CUDA extension) from DIR. Its
    causal_conv1d_fn is wrapped: while `recording` it notes each call's x shape, layout and dtype
    and the weight / bias dtypes (None for a call with sequence indices or states, which the loss
    path does not make), then calls the real function; the same calls are timed alone afterwards."""

    def __init__(self, folder):
        self.folder = os.path.abspath(folder)
        self.recording = False
        self.calls = []
        self.real_fn = None
        self.build = None  # DIR/BUILD.txt
        self.module = None  # the causal_conv1d_cuda file name

    def install(self):
        """DIR first on sys.path; the real causal_conv1d (and causal_conv1d_cuda) imported from it,
        before fla and the official code import the names."""
        build_txt = os.path.join(self.folder, "BUILD.txt")
        if not os.path.isfile(build_txt):
            sys.exit(f"--causal-conv1d {self.folder}: no BUILD.txt (how the extension was built)")
        with open(build_txt) as f:
            self.build = f.read().strip()
        sys.path.insert(0, self.folder)
        try:
            import causal_conv1d_cuda
        except ImportError as e:
            import sysconfig
            built = sorted(n for n in os.listdir(self.folder) if n.startswith("causal_conv1d_cuda"))
            sys.exit(f"--causal-conv1d {self.folder}: causal_conv1d_cuda does not import ({e}); this Python "
                     f"loads causal_conv1d_cuda{sysconfig.get_config_var('EXT_SUFFIX')}, the folder has "
                     f"{', '.join(built) or 'none'}")
        where = os.path.dirname(os.path.realpath(causal_conv1d_cuda.__file__))
        if where != os.path.realpath(self.folder):
            sys.exit(f"--causal-conv1d {self.folder}: causal_conv1d_cuda was imported from {where}, not from there")
        import causal_conv1d
        where = os.path.dirname(os.path.dirname(os.path.realpath(causal_conv1d.__file__)))
        if where != os.path.realpath(self.folder):
            sys.exit(f"--causal-conv1d {self.folder}: causal_conv1d was imported from {where}, not from there")
        if causal_conv1d.__version__ != "1.4.0":
            sys.exit(f"--causal-conv1d {self.folder}: causal_conv1d {causal_conv1d.__version__}, the official "
                     "requirements pin 1.4.0")
        self.module = os.path.basename(causal_conv1d_cuda.__file__)
        self.real_fn = causal_conv1d.causal_conv1d_fn
        causal_conv1d.causal_conv1d_fn = self.fn  # what `from causal_conv1d import causal_conv1d_fn` gets

    def description(self):
        """The JSON's shim entry for causal_conv1d (BUILD.txt's first line: what was built, how)."""
        return (f"causal_conv1d: the real extension, {self.build.splitlines()[0]} (--causal-conv1d {self.folder}, "
                f"{self.module}; BUILD.txt in causal_conv1d_build); causal_conv1d_fn wrapped only to record the "
                "calls (shapes, layout, dtypes), which are replayed alone on the extension: conv_s")

    def fn(self, x, weight, bias=None, seq_idx=None, initial_states=None, return_final_states=False,
           final_states_out=None, activation=None):
        if self.recording:
            plain = seq_idx is None and initial_states is None and not return_final_states and final_states_out is None
            # the extension's layout choice (csrc/causal_conv1d.cpp): channel-last when stride(1) == 1
            self.calls.append((tuple(x.shape), x.dtype, x.stride(1) == 1 and x.stride(2) > 1, tuple(weight.shape),
                               weight.dtype, None if bias is None else bias.dtype, activation) if plain else None)
        return self.real_fn(x, weight, bias, seq_idx, initial_states, return_final_states, final_states_out,
                            activation)

    def time_recorded(self, device, repeats=3):
        """Seconds the recorded calls take alone on the extension (median of `repeats` per call,
        summed); calls with sequence indices or states (None) are not replayed."""
        total = 0.0
        for call in self.calls:
            if call is None:
                continue
            (B, D, L), dtype, channel_last, wshape, wdtype, bdtype, activation = call
            x = (torch.randn(B, L, D, device=device, dtype=dtype).transpose(1, 2) if channel_last
                 else torch.randn(B, D, L, device=device, dtype=dtype))
            w = torch.randn(*wshape, device=device, dtype=wdtype)
            b = None if bdtype is None else torch.randn(wshape[0], device=device, dtype=bdtype)
            total += replay_seconds(lambda: self.real_fn(x, w, b, activation=activation), device, repeats)
            del x, w, b
        return total


def import_official(a, conv):
    official_anchor.add_official_src(os.path.abspath(a.official_src))
    official_anchor.add_fla_src(os.path.abspath(a.fla_src))
    mamba_pkg = os.path.join(os.path.abspath(a.mamba_src), "mamba_ssm")
    if not os.path.isfile(os.path.join(mamba_pkg, "ops", "triton", "ssd_combined.py")):
        sys.exit(f"--mamba-src {a.mamba_src}: no mamba_ssm/ops/triton/ssd_combined.py inside")
    if "mamba_ssm" in sys.modules or "causal_conv1d" in sys.modules:
        sys.exit("mamba_ssm or causal_conv1d was imported before the shims")
    pkg = types.ModuleType("mamba_ssm")  # shim 1
    pkg.__path__ = [mamba_pkg]
    sys.modules["mamba_ssm"] = pkg
    if isinstance(conv, RealConv):
        conv.install()  # the real package, no shim 2
    else:
        stand_in = types.ModuleType("causal_conv1d")  # shim 2, before fla and the official code read it
        stand_in.causal_conv1d_fn, stand_in.causal_conv1d_update = conv.fn, conv.update
        sys.modules["causal_conv1d"] = stand_in
    classes = {}
    for family, (model_type, module, name) in FAMILIES.items():
        if family in {f for f, _ in a.models}:
            classes[family] = getattr(importlib.import_module(module), name)
    if "mamba2" in classes:
        mm = importlib.import_module(FAMILIES["mamba2"][1])
        if not mm.is_fast_path_available:
            sys.exit("the official Mamba-2 does not see mamba_ssm/causal_conv1d: it would run its pure-PyTorch "
                     "path, not the kernels")
    return classes


def cpu_allocations_for_check():
    """--check on the CPU only: fla's layer-norm and cross-entropy forwards allocate with
    device="cuda" written out and enter `torch.cuda.device(x.device.index)` (fla/modules/
    layernorm.py, fused_cross_entropy.py); under the interpreter the allocations go to the CPU
    and the device context does nothing (there is no CUDA device to select)."""
    import contextlib
    from triton_interpreter import patch_triton_interpreter  # this folder
    patch_triton_interpreter()
    # The check runs fp32 (the interpreter computes bf16 on raw bits); fla's chunk_delta_rule
    # asserts q is not fp32 before calling ChunkDeltaRuleFunction: the same call without the assert.
    from fla.ops.delta_rule import chunk as delta_chunk
    layer = importlib.import_module("forgetting_transformer.model.delta_net.delta_net_layer")

    def chunk_delta_rule_fp32(q, k, v, beta, scale=None, BT=64, initial_state=None, output_final_state=False):
        scale = k.shape[-1] ** -0.5 if scale is None else scale
        return delta_chunk.ChunkDeltaRuleFunction.apply(q, k, v, beta, BT, scale, initial_state, output_final_state)
    layer.chunk_delta_rule = chunk_delta_rule_fp32
    # The official Mamba2Mixer takes its kernel path only for weights on a CUDA device (otherwise
    # torch_forward: the dt clamp and the chunk bug); the check must run the kernel path.
    mm = importlib.import_module(FAMILIES["mamba2"][1])
    mm.Mamba2Mixer.forward = lambda self, hidden_states, cache_params=None, cache_position=None, attention_mask=None: \
        self.cuda_kernels_forward(hidden_states, cache_params, cache_position, attention_mask)
    real_empty = torch.empty
    torch.cuda.device = lambda index: contextlib.nullcontext()
    # FusedCrossEntropyLoss.forward asserts CUDA tensors before calling its Triton kernel; the
    # same kernel call without the assertion (reduction 'none', what the official models use).
    from fla.modules import fused_cross_entropy as fce

    def cross_entropy_forward(self, input, target):
        if self.reduction != "none" or self.return_z_loss:
            raise NotImplementedError("CPU check: reduction 'none' only")
        loss, _ = fce.cross_entropy_loss(input, target, label_smoothing=self.label_smoothing,
                                         logit_scale=self.logit_scale, lse_square_scale=self.lse_square_scale,
                                         ignore_index=self.ignore_index, inplace_backward=self.inplace_backward,
                                         process_group=self.process_group)
        return loss
    fce.FusedCrossEntropyLoss.forward = cross_entropy_forward
    # fla's swish / swiglu / sigmoid forwards are CUDA jiterator kernels (fla/modules/activations.py):
    # the same formulas (fp32 inside, result in the input dtype) in torch.
    from fla.modules import activations as act
    act.swish_fwd = lambda x: (x.float() * torch.sigmoid(x.float())).to(x.dtype)
    act.sigmoid_fwd = lambda x: torch.sigmoid(x.float()).to(x.dtype)
    act.swiglu_fwd = lambda x, y: (x.float() * y.float() * torch.sigmoid(x.float())).to(x.dtype)

    def empty(*args, device=None, **kwargs):
        if device is not None and str(device).startswith("cuda"):
            device = "cpu"
        return real_empty(*args, device=device, **kwargs)
    torch.empty = empty


def check_fixture(model, path, device):
    from safetensors.torch import load_file
    ref = load_file(os.path.join(path, "reference.safetensors"))
    key = next((k for k in ("logits_fp32_kernels", "logits_fp32", "logits_bf16") if k in ref), None)
    if key is None:
        sys.exit(f"{path}/reference.safetensors: no logits")
    ids = ref["input_ids"].to(device)
    inputs, labels = ids[:, :-1].contiguous(), ids[:, 1:].contiguous()
    # fp32 where the fixture has fp32 logits; else bf16 autocast as the official eval, except under
    # Triton's interpreter, whose bf16 arithmetic is on the raw uint16 bits (DeltaNet gave inf):
    # there fp32, against the bf16 logits within the bf16 noise.
    bf16 = key == "logits_bf16"
    autocast_bf16 = bf16 and device.type != "cpu"
    loss = token_loss(model, inputs, labels, device, autocast_bf16).cpu().double()
    row = {"fixture": path, "reference": key, "autocast_bf16": autocast_bf16, "shape": list(labels.shape)}
    for k in ("logits_fp32_kernels", "logits_fp32", "logits_bf16"):
        if k not in ref:
            continue
        logits = ref[k][:, :-1].double()
        ref_loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ref["input_ids"][:, 1:].reshape(-1),
                                   reduction="none").view_as(loss)
        diff = (loss - ref_loss).abs()
        row[k] = {"mean_abs_diff": diff.mean().item(), "max_abs_diff": diff.max().item()}
    # fp32: rounding only (1e-5 mean); bf16: the official code's own bf16 noise on these models
    # (fixtures README: per-token loss 0.001-0.004 mean, 0.016 max)
    row["tolerance"] = {"mean": 5e-3, "max": 3e-2} if bf16 else {"mean": 2e-5, "max": 2e-4}
    row["ok"] = (row[key]["mean_abs_diff"] <= row["tolerance"]["mean"]
                 and row[key]["max_abs_diff"] <= row["tolerance"]["max"])
    row["mean_loss"] = loss.mean().item()
    return row


def time_length(model, config, T, a, device, conv):
    ids = splitmix64_ids(a.seed, T, config.vocab_size)
    labels = torch.tensor([ids], dtype=torch.long, device=device)
    bos = config.bos_token_id
    inputs = torch.cat([torch.full((1, 1), bos, dtype=torch.long, device=device), labels[:, :-1]], dim=1)

    def record_first(r):  # the first timed forward's conv calls are recorded (replayed for conv_s)
        conv.recording, conv.calls = r == 0, [] if r == 0 else conv.calls

    def stop_recording(r):
        conv.recording = False

    times, peak, loss = timed_forwards(model, inputs, labels, device, a.warmup, a.repeats, record_first, stop_recording)
    seconds = statistics.median(times)
    if not torch.isfinite(loss).all():
        raise RuntimeError(f"non-finite per-token loss at T={T}")
    conv_s = conv.time_recorded(device) if conv.calls else 0.0
    row = {"seq_len": T, "seconds": seconds, "all_seconds": times, "tokens_per_s": T / seconds,
           "peak_gpu_memory_bytes": peak, "mean_loss": loss.double().mean().item()}
    if isinstance(conv, RealConv):  # the extension: its calls alone, inside `seconds` as in the official run
        row.update({"conv_calls": len(conv.calls), "conv_calls_not_replayed": conv.calls.count(None),
                    "conv_s": conv_s})
    else:
        row.update({"shim_conv_calls": len(conv.calls), "shim_conv_s": conv_s})
    row["first_ids"] = ids[:8]
    return row


def main():
    a = parse_args()
    commits = {"official": read_commit(a.official_src, "--official-src"),
               "fla": read_commit(a.fla_src, "--fla-src"), "mamba_ssm": read_commit(a.mamba_src, "--mamba-src")}
    conv = RealConv(a.causal_conv1d) if a.causal_conv1d else ConvShim()
    classes = import_official(a, conv)
    import transformers
    import triton
    device = torch.device(a.device)
    shims = list(SHIMS)
    if isinstance(conv, RealConv):
        shims[1] = conv.description()
    if device.type == "cpu":
        cpu_allocations_for_check()
        shims.append("--check on CPU only: torch.empty(device='cuda') (fla's layer-norm statistics) "
                     "allocates on the CPU, torch.cuda.device(...) is a no-op context, "
                     "FusedCrossEntropyLoss calls its kernel without its CUDA-tensor assertion, fla's "
                     "jiterator swish/swiglu/sigmoid are the same formulas in torch, the "
                     "Triton autotuner takes the first config (no GPU to time them on), and the interpreter's "
                     "int(scalar) goes through .item() (NumPy 2.4 refuses int() of a 1-element array), "
                     "everything runs in fp32, fla's chunk_delta_rule is called without its fp32 refusal, and "
                     "Mamba2Mixer.forward goes to cuda_kernels_forward (the kernel path) whatever the device")
    rows, failed = [], False
    for family, path in a.models:
        model = load_checked(classes[family], family, path, device, FAMILIES[family][0])
        cfg = model.config
        n_params = sum(p.numel() for p in model.parameters())
        print(f"{family} from {path}: {n_params / 1e6:.1f}M parameters, {cfg.num_hidden_layers} layers, "
              f"hidden {cfg.hidden_size}", flush=True)
        if a.check:
            row = check_fixture(model, path, device)
            row["family"] = family
            failed |= not row["ok"]
            key = row["reference"]
            others = "; ".join(f"{k}: mean {row[k]['mean_abs_diff']:.3g} max {row[k]['max_abs_diff']:.3g}"
                               for k in ("logits_fp32_kernels", "logits_fp32", "logits_bf16") if k in row and k != key)
            print(f"  per-token loss vs {key}: mean |diff| {row[key]['mean_abs_diff']:.3g}, max "
                  f"{row[key]['max_abs_diff']:.3g} (tolerance {row['tolerance']['mean']:g} / "
                  f"{row['tolerance']['max']:g}) {'ok' if row['ok'] else 'FAILED'}" + (f"  [{others}]" if others else ""))
            rows.append(row)
        else:
            for T in a.seq_lens:
                try:
                    row = time_length(model, cfg, T, a, device, conv)
                except torch.OutOfMemoryError as e:
                    row = {"seq_len": T, "error": "out of memory: " + str(e).splitlines()[0][:200]}
                row.update({"family": family, "model": path, "parameters": n_params})
                if "error" in row:
                    print(f"  T={T}: {row['error']}", flush=True)
                else:
                    conv_line = (f"conv (extension) {row['conv_s']:.3f} s in {row['conv_calls']} calls"
                                 if "conv_s" in row else
                                 f"conv shim {row['shim_conv_s']:.3f} s in {row['shim_conv_calls']} calls")
                    print(f"  T={T}: {row['seconds']:.3f} s ({row['tokens_per_s']:.0f} tok/s), peak "
                          f"{row['peak_gpu_memory_bytes'] / 2**30:.2f} GiB, mean loss {row['mean_loss']:.5f}, "
                          + conv_line, flush=True)
                rows.append(row)
                gc.collect()
                torch.cuda.empty_cache()
        del model
        gc.collect()
        if device.type == "cuda":
            torch.cuda.empty_cache()
    out = anchor_result("recurrent-anchor", a, torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
                        commits, shims, rows, mamba_ssm_version="2.2.2",
                        triton_interpret=os.environ.get("TRITON_INTERPRET") == "1",
                        autocast="bfloat16 (fp32 weights), as eval/per_token_loss")
    if isinstance(conv, RealConv):
        out["causal_conv1d_build"] = conv.build
    official_anchor.finish(out, a.out, failed)


if __name__ == "__main__":
    main()
