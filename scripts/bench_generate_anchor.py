#!/usr/bin/env python3
"""Anchor for `foxeval bench decode`: the OFFICIAL model code (forgetting-transformer) decoding with
Hugging Face `generate(do_sample=False, use_cache=True)` under bf16 autocast, as the official
`eval/niah/pred.py` and `eval/longbench/pred.py` call it (fp32 weights, one `generate` per prompt,
attention mask of ones).

  PYTHONPATH=.devdata/anchor/wheels/einops-0.8.2-py3-none-any.whl \
  python3 scripts/bench_generate_anchor.py --official-src .devdata/anchor/official_src/src \
      --model /tmp/ckpt/fox_pro_760m [--batch 1,16] [--context 1024,8192,32768] [--new-tokens 64] \
      [--out generate-anchor.json]

Nothing here is foxeval: the sources are archived from their repositories (README: "HF generate
anchor"); each folder holds a COMMIT file that the results record.

Timing, per (batch, context): random prompt ids (BOS first); one untimed `generate` of --new-tokens
tokens (Triton compiles; it also checks that the cache is used: the prompt once, then one token per
step); then --repeats times `generate` with max_new_tokens=1 (t_1: the prefill) and with
max_new_tokens=N (t_N), EOS disabled so every row makes N tokens; medians. decode tokens/s =
batch*(N-1)/(t_N - t_1), ms per step = (t_N - t_1)/(N-1), prefill tokens/s = batch*context/t_1,
peak memory of the N-token call. Out of memory gives a row with "error".

--check compares, for each (batch, context), `generate` with the cache against greedy decoding by
full forwards without a cache (tokens must be equal, or differ first where the top-2 logits are
closer than twice the measured difference: a near tie) and the cached step logits against one
no-cache forward over the generated sequence (max |difference| <= --check-tol * max |logit|).
On CPU the official Triton/jiterator ops cannot run: --attention-fallback torch replaces them
(attention, RMS/group norms, gated norm, token shift, rotary, GLUs) by plain torch code, fp32
only, for the check only: timings are refused with it.

Shims for transformers 5 (the official code was written for 4.x), each the smallest that works
(4 and 5 live in scripts/official_anchor.py, shared with bench_recurrent_anchor.py):
  1. the model class gets GenerationMixin: PreTrainedModel no longer provides `generate` (4.50+);
  2. `_supports_default_dynamic_cache() -> False`: otherwise `generate` makes a DynamicCache, which
     the official forward refuses (it asserts its own FgateDynamicCache). With None the official
     forward builds FgateDynamicCache with its token-shift states, as under 4.x;
  3. FgateDynamicCache's `super().__init__()` reaches `Cache.__init__(layers=[])`: the 5.x base
     class requires a layer list (the official cache keeps its own per-layer lists);
  4. `pytest` (imported at module level by the official token_shift.py for its tests) gets an
     empty stand-in when it is not installed;
  5. RoPE's `inv_freq` is recomputed after loading (the official method): 5.x `from_pretrained`
     builds the model on the meta device and leaves this non-persistent buffer uninitialised
     (garbage: Transformer (Pro) logits were off by 47% before this).
"""
import argparse
import datetime
import gc
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import official_anchor  # shared loading of the archived official code (this folder)
from official_anchor import int_list, read_commit, restore_rope

FOX_TYPE = "forgetting_transformer-project_fox"
TRANSFORMER_TYPE = "transformer-project_fox"


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--official-src", required=True, help="archived official `src` folder (with COMMIT)")
    ap.add_argument("--fla-src", help="archived flash-linear-attention (with COMMIT); needed by "
                    f"{TRANSFORMER_TYPE} only")
    ap.add_argument("--model", required=True, help="Hugging Face checkpoint folder")
    ap.add_argument("--batch", type=int_list(1), default=[1, 16])
    ap.add_argument("--context", type=int_list(1), default=[1024, 8192, 32768])
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3, help="timed repeats per size (median)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", choices=["bfloat16", "float32"], default="bfloat16",
                    help="autocast dtype (weights stay fp32, as in the official eval); float32 = no "
                    "autocast, only with --attention-fallback torch (the official kernel refuses fp32)")
    ap.add_argument("--attention-fallback", choices=["none", "torch"], default="none",
                    help="torch: replace the CUDA-only official ops by torch code (CPU check only)")
    ap.add_argument("--check", action="store_true", help="check cached generate against no-cache "
                    "greedy decoding instead of timing")
    ap.add_argument("--check-tol", type=float, default=1e-4,
                    help="--check: max |logit difference| / max |logit| (fp32: ~1e-6 is rounding)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="JSON output")
    a = ap.parse_args()
    if a.repeats < 1:
        ap.error("--repeats must be at least 1")
    if a.new_tokens < 2:
        ap.error("--new-tokens must be at least 2 (decode speed needs t_N - t_1)")
    if a.dtype == "float32" and a.attention_fallback != "torch":
        ap.error("--dtype float32 needs --attention-fallback torch: the official kernel refuses fp32")
    if a.attention_fallback == "torch" and a.dtype != "float32":
        ap.error("--attention-fallback torch runs in fp32 only: add --dtype float32")
    if a.attention_fallback == "torch" and not a.check:
        ap.error("--attention-fallback torch is not the official code: it is for --check only, "
                 "never for timings")
    if a.check and min(a.context) < 2:
        ap.error("--check needs --context >= 2: the official forward without a cache fails on a "
                 "1-token input (its token shift takes the decode branch, with no state)")
    if not a.check and not a.device.startswith("cuda"):
        ap.error(f"--device {a.device}: timings need a CUDA device (the official kernels are Triton)")
    return a


def import_official(official_src, fla_src):
    official_anchor.add_official_src(official_src)
    if fla_src:
        official_anchor.add_fla_src(fla_src)
    # Only the FoX package: register_all also imports mamba2/hgrn2/..., which need mamba_ssm.
    from forgetting_transformer.model.forgetting_transformer import modeling_forgetting_transformer
    return modeling_forgetting_transformer


def generate_class(model_type, mfm):
    """The official CausalLM class with the transformers-5 shims 1-3 (see the module docstring)."""
    from transformers import GenerationMixin
    from transformers.cache_utils import Cache

    if model_type == FOX_TYPE:
        class CacheBaseV5(Cache):
            def __init__(self):
                super().__init__(layers=[])

        class FgateDynamicCacheV5(mfm.FgateDynamicCache, CacheBaseV5):
            pass  # the official __init__/update/get_seq_length, with CacheBaseV5 as its super()

        mfm.FgateDynamicCache = FgateDynamicCacheV5  # the name the official forward builds and asserts

        class FoxForGenerate(mfm.ForgettingTransformerForCausalLM, GenerationMixin):
            @classmethod
            def _supports_default_dynamic_cache(cls):
                return False
        return FoxForGenerate
    if model_type == TRANSFORMER_TYPE:
        try:
            import flash_attn  # noqa: F401
        except ImportError:
            sys.exit(f"{TRANSFORMER_TYPE}: the official Transformer (LLaMA) attention is flash_attn's, "
                     "which is not installed here; no anchor without it")
        import fla  # noqa: F401  (the official transformer model imports fla.modules)
        from forgetting_transformer.model.transformer import modeling_transformer as mt

        class TransformerForGenerate(mt.TransformerForCausalLM, GenerationMixin):
            pass  # its forward accepts the DynamicCache that generate makes
        return TransformerForGenerate
    sys.exit(f"model_type '{model_type}': this anchor runs {FOX_TYPE} and {TRANSFORMER_TYPE} only")


def install_torch_fallbacks():
    """--attention-fallback torch: plain torch versions of the official CUDA-only ops (fp32, CPU)."""
    from forgetting_transformer.model.forgetting_transformer import (
        fuse_norm_gate, glu_linear, layernorm, modeling_forgetting_transformer as mfm, rotary)

    def attention(q, k, v, log_fgate, head_first=False, seq_start=None, sm_scale=None,
                  adaptive_threshold=None):
        # Forgetting Attention: softmax(q.k * scale + c_i - c_j) over keys j <= i, c = cumsum log f;
        # queries are the last M of the N keys (decode: M = 1); keys before seq_start are padding.
        if not head_first or adaptive_threshold is not None:
            raise NotImplementedError("torch fallback: head_first=True without pruning only")
        B, H, M, D = q.shape
        N = k.shape[2]
        log_fgate = log_fgate.float()
        key_pos = torch.arange(N, device=q.device)
        if seq_start is not None:
            log_fgate = log_fgate.masked_fill(key_pos[None, None, :] < seq_start[:, None, None], 0.0)
        c = torch.cumsum(log_fgate, dim=-1)
        scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(D)
        s = (q.float() @ k.float().transpose(-1, -2)) * scale + c[:, :, N - M:, None] - c[:, :, None, :]
        query_pos = torch.arange(N - M, N, device=q.device)
        masked = (key_pos[None, :] > query_pos[:, None])[None, None]
        if seq_start is not None:
            masked = masked | (key_pos[None, None, None, :] < seq_start[:, None, None, None])
        s = s.masked_fill(masked, float("-inf"))
        p = torch.softmax(s, dim=-1).nan_to_num(0.0)  # a query before seq_start sees no key: 0
        return (p @ v.float()).to(q.dtype)

    def rms_norm(x, weight, bias, residual=None, eps=1e-5, prenorm=False, residual_in_fp32=False):
        return layernorm.rms_norm_ref(x, weight, bias, residual=residual, eps=eps, prenorm=prenorm)

    def group_norm(x, weight, bias, residual=None, eps=1e-5, prenorm=False, residual_in_fp32=False,
                   is_rms_norm=False, num_groups=1):
        return layernorm.group_norm_ref(x, weight, bias, num_groups, residual=residual, eps=eps,
                                        is_rms_norm=is_rms_norm, prenorm=prenorm)

    def group_norm_gated(x, g, weight, bias, activation="swish", residual=None, prenorm=False,
                         residual_in_fp32=False, is_rms_norm=False, num_groups=1, eps=1e-6):
        if activation != "sigmoid":  # the official reference gates with a sigmoid only
            raise NotImplementedError(f"torch fallback: gated norm activation '{activation}'")
        return fuse_norm_gate.group_norm_gated_ref(x, g, weight, bias, num_groups, residual=residual,
                                                   eps=eps, is_rms_norm=is_rms_norm, prenorm=prenorm)

    def token_shift(x, prev_weight, curr_weight):
        # out_t = prev_weight_t * x_{t-1} + curr_weight_t * x_t, with x_{-1} = 0; x is (B, T, H, D)
        prev = F.pad(x, (0, 0, 0, 0, 1, 0))[:, :-1]
        return (x * curr_weight[..., None].float() + prev * prev_weight[..., None].float()).to(x.dtype)

    def apply_rotary(x, cos, sin, interleaved=False, inplace=False, seqlen_offsets=0, cu_seqlens=None,
                     max_seqlen=None):
        if cu_seqlens is not None:
            raise NotImplementedError("torch fallback: rotary without cu_seqlens only")
        B, T = x.shape[:2]
        offsets = (seqlen_offsets if torch.is_tensor(seqlen_offsets)
                   else torch.full((B,), seqlen_offsets, device=x.device))
        pos = offsets.to(x.device).long()[:, None] + torch.arange(T, device=x.device)[None, :]
        return rotary.apply_rotary_emb_torch(x, cos[pos], sin[pos], interleaved)

    mfm.forgetting_attention = attention
    mfm.token_shift = token_shift
    layernorm.rms_norm = rms_norm
    layernorm.group_norm = group_norm
    fuse_norm_gate.group_norm_gated = group_norm_gated
    rotary.apply_rotary_emb_func = apply_rotary
    glu_linear.swiglu_fwd = lambda x, y: (F.silu(x.float()) * y.float()).to(x.dtype)
    glu_linear.glu_fwd = lambda x, y: (torch.sigmoid(x.float()) * y.float()).to(x.dtype)


class StepLengths:
    """Records the input length of every forward of the inner model: with a working cache,
    `generate` feeds the prompt once, then one token per step."""

    def __init__(self, module):
        self.lengths = []
        self.handle = module.register_forward_pre_hook(self.hook, with_kwargs=True)

    def hook(self, module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        self.lengths.append(int(ids.shape[1]))

    def close(self):
        self.handle.remove()


def autocast(device, dtype):
    if dtype == torch.float32:
        return torch.autocast(device_type=device.type, enabled=False)
    return torch.autocast(device_type=device.type, dtype=dtype)


def generate(model, ids, new_tokens, device, dtype, **extra):
    with autocast(device, dtype):
        return model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                              max_new_tokens=new_tokens, do_sample=False, num_beams=1,
                              eos_token_id=None, use_cache=True, **extra)


def random_prompts(config, batch, context, seed, device):
    g = torch.Generator().manual_seed(seed * 1000003 + batch * 131071 + context)
    ids = torch.randint(0, config.vocab_size, (batch, context), generator=g)
    if config.bos_token_id is not None and 0 <= config.bos_token_id < config.vocab_size:
        ids[:, 0] = config.bos_token_id  # the official prompts start with BOS
    return ids.to(device)


def check_one(model, ids, n, device, dtype, tol):
    B, T = ids.shape
    steps = StepLengths(model.model)
    try:
        out = generate(model, ids, n, device, dtype, return_dict_in_generate=True, output_logits=True)
    finally:
        steps.close()
    cached = out.sequences
    if cached.shape != (B, T + n):
        raise RuntimeError(f"generate returned {tuple(cached.shape)}, expected {(B, T + n)}")
    cached_logits = torch.stack(out.logits, dim=1).float()  # (B, n, V)
    mask = torch.ones(B, T + n, dtype=torch.long, device=device)
    with torch.no_grad(), autocast(device, dtype):
        full = model(input_ids=cached, attention_mask=mask, use_cache=False).logits.float()
        seq = ids
        for _ in range(n):  # greedy decoding by full forwards, no cache
            logits = model(input_ids=seq, attention_mask=torch.ones_like(seq), use_cache=False).logits
            seq = torch.cat([seq, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    diff = (full[:, T - 1:T + n - 1] - cached_logits).abs().max().item()
    same = bool(torch.equal(seq, cached))
    row = {"batch": B, "context": T, "new_tokens": n, "step_lengths_ok": steps.lengths == [T] + [1] * (n - 1),
           "tokens_equal": same, "max_abs_logit_diff": diff,
           "logit_scale": cached_logits.abs().max().item()}
    if not same:
        step = int((seq[:, T:] != cached[:, T:]).any(0).nonzero()[0])
        top2 = full[:, T - 1 + step].topk(2, dim=-1).values
        row["first_token_difference_at"] = step
        row["top2_margin_there"] = (top2[:, 0] - top2[:, 1]).min().item()
        # bf16 on the GPU: a flip between two logits closer than the measured difference is noise
        row["near_tie"] = row["top2_margin_there"] <= 2 * min(diff, tol * row["logit_scale"])
    row["ok"] = (row["step_lengths_ok"] and diff <= tol * row["logit_scale"]
                 and (same or row["near_tie"]))
    return row


def time_one(model, ids, n, device, dtype, repeats):
    B, T = ids.shape
    steps = StepLengths(model.model)
    try:  # warm-up: Triton compiles for these shapes; the cache must be in use
        warm = generate(model, ids, n, device, dtype)
    finally:
        steps.close()
    if warm.shape != (B, T + n):
        raise RuntimeError(f"generate returned {tuple(warm.shape)}, expected {(B, T + n)}")
    if steps.lengths != [T] + [1] * (n - 1):
        raise RuntimeError(f"generate did not decode from the cache: forward input lengths {steps.lengths[:4]}...")
    del warm

    def timed(new_tokens):
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        start = time.perf_counter()
        out = generate(model, ids, new_tokens, device, dtype)
        torch.cuda.synchronize(device)
        seconds = time.perf_counter() - start
        assert out.shape == (B, T + new_tokens)
        return seconds, torch.cuda.max_memory_allocated(device) / 2**30

    t1, tn, peak1, peakn = [], [], 0.0, 0.0
    for _ in range(repeats):
        s, p = timed(1)
        t1.append(s)
        peak1 = max(peak1, p)
        s, p = timed(n)
        tn.append(s)
        peakn = max(peakn, p)
    t1, tn = statistics.median(t1), statistics.median(tn)
    decode = tn - t1
    return {"batch": B, "context": T, "new_tokens": n, "t_1_s": round(t1, 4), "t_n_s": round(tn, 4),
            "decode_tokens_per_s": round(B * (n - 1) / decode, 1) if decode > 0 else None,
            "ms_per_step": round(decode / (n - 1) * 1000, 3),
            "prefill_tokens_per_s": round(B * T / t1, 1),
            "peak_gib_prefill": round(peak1, 2), "peak_gib": round(peakn, 2)}


def main():
    a = parse_args()
    official_commit = read_commit(a.official_src, "--official-src")
    fla_commit = read_commit(a.fla_src, "--fla-src") if a.fla_src else None
    mfm = import_official(os.path.abspath(a.official_src), a.fla_src and os.path.abspath(a.fla_src))
    import transformers
    import triton
    config_path = os.path.join(a.model, "config.json")
    if not os.path.isfile(config_path):
        sys.exit(f"--model {a.model}: no config.json")
    with open(config_path) as f:
        model_type = json.load(f).get("model_type")
    cls = generate_class(model_type, mfm)
    if a.attention_fallback == "torch":
        install_torch_fallbacks()
    device = torch.device(a.device)
    dtype = getattr(torch, a.dtype)
    # fp32 weights whatever the file holds: the official eval loaded with transformers 4.x's fp32 default
    model = cls.from_pretrained(a.model, dtype=torch.float32)
    restore_rope(model)
    model = model.to(device).eval()
    cfg = model.config
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{model_type} from {a.model}: {n_params / 1e6:.1f}M parameters, {cfg.num_hidden_layers} layers, "
          f"hidden {cfg.hidden_size}; transformers {transformers.__version__}, torch {torch.__version__}, "
          f"official {official_commit[:7]}, attention {'torch fallback' if a.attention_fallback == 'torch' else 'official'}")

    rows = []
    failed = False
    if a.check:
        print(f"{'batch':>5} {'context':>7} {'steps':>5} {'tokens':>6} {'max|dlogit|':>12} {'max|logit|':>10} {'ok':>3}")
    else:
        print(f"{'batch':>5} {'context':>7} {'decode tok/s':>12} {'ms/step':>8} {'prefill tok/s':>13} {'peak GiB':>8}")
    for batch in a.batch:
        for context in a.context:
            ids = random_prompts(cfg, batch, context, a.seed, device)
            error = None
            try:
                if a.check:
                    row = check_one(model, ids, a.new_tokens, device, dtype, a.check_tol)
                else:
                    row = time_one(model, ids, a.new_tokens, device, dtype, a.repeats)
            except torch.OutOfMemoryError as e:
                error = "out of memory: " + str(e).splitlines()[0][:200]
            if error is not None:
                row = {"batch": batch, "context": context, "new_tokens": a.new_tokens, "error": error}
                gc.collect()
                if device.type == "cuda":
                    torch.cuda.empty_cache()
                print(f"{batch:>5} {context:>7} {error}")
            elif a.check:
                failed |= not row["ok"]
                extra = "" if row["tokens_equal"] else (
                    f" (first difference at step {row['first_token_difference_at']}, top-2 margin "
                    f"{row['top2_margin_there']:.3g}{': near tie' if row['near_tie'] else ''})")
                print(f"{batch:>5} {context:>7} {str(row['step_lengths_ok']):>5} {str(row['tokens_equal']):>6} "
                      f"{row['max_abs_logit_diff']:12.3g} {row['logit_scale']:10.3g} {'yes' if row['ok'] else 'NO':>3}{extra}")
            else:
                print(f"{batch:>5} {context:>7} {row['decode_tokens_per_s']:>12} {row['ms_per_step']:>8} "
                      f"{row['prefill_tokens_per_s']:>13} {row['peak_gib']:>8}")
            rows.append(row)
            del ids
    out = {"gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
           "date": datetime.date.today().isoformat(), "torch": torch.__version__,
           "transformers": transformers.__version__, "triton": triton.__version__,
           "official_commit": official_commit, "fla_commit": fla_commit,
           "method": "check" if a.check else "timing",
           "attention": "torch fallback" if a.attention_fallback == "torch" else "official",
           "model": {"path": a.model, "model_type": model_type, "parameters": n_params,
                     "layers": cfg.num_hidden_layers, "hidden_size": cfg.hidden_size},
           "dtype": a.dtype, "weights": "float32", "new_tokens": a.new_tokens, "repeats": a.repeats,
           "rows": rows}
    if a.out:
        with open(a.out + ".tmp", "w") as f:
            json.dump(out, f, indent=1)
        os.replace(a.out + ".tmp", a.out)
    if failed:
        sys.exit("check FAILED: cached generate differs from no-cache greedy decoding")


if __name__ == "__main__":
    main()
