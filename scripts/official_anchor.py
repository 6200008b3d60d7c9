"""Loading the archived OFFICIAL model code (forgetting-transformer, flash-linear-attention,
mamba_ssm) for the anchor scripts (bench_generate_anchor.py, bench_recurrent_anchor.py) under
the GPU machine's PyTorch and transformers 5: the archive folders, their COMMIT files, and the
small stand-ins the 2024 code needs there. Nothing here is foxeval's model code.
"""
import argparse
import json
import os
import sys
import types

MASK64 = (1 << 64) - 1


def read_commit(folder, flag):
    """The commit an archived source folder was taken at (its COMMIT file), for the results."""
    path = os.path.join(folder, "COMMIT")
    if not os.path.isfile(path):
        sys.exit(f"{flag} {folder}: no COMMIT file (write the archived commit there: README, "
                 "'HF generate anchor')")
    with open(path) as f:
        return f.read().strip()


def require_einops():
    try:
        import einops  # noqa: F401
    except ImportError:
        sys.exit("einops is not importable: the official model code needs it; put its wheel on "
                 "PYTHONPATH (README, 'HF generate anchor')")


def stub_pytest():
    """Shim: the official token_shift.py imports pytest at module level for its own tests only;
    an empty stand-in when pytest is not installed."""
    try:
        import pytest  # noqa: F401
    except ImportError:
        stub = types.ModuleType("pytest")
        stub.mark = types.SimpleNamespace(parametrize=lambda *a, **k: (lambda f: f))
        sys.modules["pytest"] = stub


def add_official_src(official_src):
    """The official `src` folder on sys.path (after the einops and pytest checks)."""
    require_einops()
    stub_pytest()
    if not os.path.isdir(os.path.join(official_src, "forgetting_transformer")):
        sys.exit(f"--official-src {official_src}: no forgetting_transformer package inside")
    sys.path.insert(0, official_src)


def add_fla_src(fla_src):
    if not os.path.isdir(os.path.join(fla_src, "fla")):
        sys.exit(f"--fla-src {fla_src}: no fla package inside")
    sys.path.insert(0, fla_src)


def restore_rope(model):
    """Recompute what transformers 5 `from_pretrained` leaves uninitialised: it builds the model
    on the meta device, so non-persistent buffers (RoPE's `inv_freq`) hold garbage. Any other
    non-persistent buffer is refused rather than left wrong."""
    for name, module in model.named_modules():
        for buffer in getattr(module, "_non_persistent_buffers_set", ()):
            if getattr(module, buffer) is None:
                continue
            # the official RotaryEmbedding (and fla's, for the Transformer) computes it in _compute_inv_freq
            if not (buffer == "inv_freq" and hasattr(module, "_compute_inv_freq")):
                sys.exit(f"{name}.{buffer}: a non-persistent buffer that from_pretrained does not load "
                         "and this anchor does not know how to rebuild")
            module.inv_freq = module._compute_inv_freq(device=module.inv_freq.device)
            module._seq_len_cached, module._cos_cached, module._sin_cached = 0, None, None


def int_list(minimum):
    """An argparse type: comma-separated integers, each at least `minimum`."""
    def parse(text):
        try:
            values = [int(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated integers, got '{text}'")
        if not values or min(values) < minimum:
            raise argparse.ArgumentTypeError(f"expected integers >= {minimum}, got '{text}'")
        return values
    return parse


def splitmix64_ids(seed, n, vocab):
    """n token ids: the splitmix64 sequence from state `seed`, each output % vocab (as bench/bench_common)."""
    state, out = seed & MASK64, []
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        out.append((z ^ (z >> 31)) % vocab)
    return out


def model_list(families):
    """An argparse type: FAMILY=DIR,... with each FAMILY a key of `families`; a list of (family, dir)."""
    def parse(text):
        models = []
        for item in text.split(","):
            family, eq, path = item.partition("=")
            if not eq or family not in families or not path:
                raise argparse.ArgumentTypeError(f"'{item}': expected FAMILY=DIR with FAMILY one of {sorted(families)}")
            models.append((family, path))
        return models
    return parse


def load_checked(cls, family, path, device, model_type_wanted):
    """The official `cls` from the checkpoint folder `path` in fp32 (the official eval loads with the
    fp32 default, whatever the file holds), refusing another model_type or any key it does not match."""
    import torch
    config_path = os.path.join(path, "config.json")
    if not os.path.isfile(config_path):
        sys.exit(f"--models {family}={path}: no config.json")
    with open(config_path) as f:
        model_type = json.load(f).get("model_type")
    if model_type != model_type_wanted:
        sys.exit(f"--models {family}={path}: model_type '{model_type}', expected '{model_type_wanted}'")
    model, info = cls.from_pretrained(path, dtype=torch.float32, output_loading_info=True)
    bad = {k: v for k, v in info.items() if k in ("missing_keys", "unexpected_keys", "mismatched_keys") and v}
    if bad:
        sys.exit(f"{path}: the official {cls.__name__} does not match the checkpoint: {bad}")
    restore_rope(model)
    return model.to(device).eval()


def write_json(path, out):
    """`out` as indented JSON at `path` (its folder made), through a temporary file and a rename."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(out, f, indent=1)
    os.replace(path + ".tmp", path)
    print(f"wrote {path}")


def token_loss(model, inputs, labels, device, bf16):
    """The per-token loss of one forward, under bf16 autocast (fp32 weights) when `bf16`."""
    import torch
    with torch.no_grad(), torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=bf16):
        return model(input_ids=inputs, labels=labels).loss.float()


def timed_forwards(model, inputs, labels, device, warmup, repeats, before=None, after=None):
    """`warmup` untimed bf16 forwards, then `repeats` timed ones (synchronized around each, the peak
    GPU memory reset before each): (their seconds, the peak bytes, the last loss). before(r) and
    after(r) run around repeat r, outside nothing but the synchronization."""
    import time
    import torch
    for _ in range(warmup):
        token_loss(model, inputs, labels, device, True)
    times, peak, loss = [], 0, None
    for r in range(repeats):
        if before:
            before(r)
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        start = time.perf_counter()
        loss = token_loss(model, inputs, labels, device, True)
        torch.cuda.synchronize(device)
        times.append(time.perf_counter() - start)
        peak = max(peak, torch.cuda.max_memory_allocated(device))
        if after:
            after(r)
    return times, peak, loss


def add_timing_args(ap, families, models_help, warmup_help, check_help):
    """The arguments every per-token-loss timing anchor takes: the archived sources, FAMILY=DIR models,
    the lengths, repeats, warm-up forwards, the token seed, --check (against the fixtures) and --out."""
    ap.add_argument("--official-src", required=True, help="archived official `src` folder (with COMMIT)")
    ap.add_argument("--fla-src", required=True, help="archived flash-linear-attention (with COMMIT)")
    ap.add_argument("--models", required=True, type=model_list(families), help=models_help)
    ap.add_argument("--seq-lens", type=int_list(2), default=[16384, 65536])
    ap.add_argument("--repeats", type=int, default=2, help="timed forwards per length (median)")
    ap.add_argument("--warmup", type=int, default=1, help=warmup_help)
    ap.add_argument("--seed", type=int, default=0, help="splitmix64 seed of the token ids")
    ap.add_argument("--check", action="store_true", help=check_help)
    ap.add_argument("--out", help="JSON output")


def parse_timing_args(ap):
    """ap.parse_args() with the counts of add_timing_args checked."""
    a = ap.parse_args()
    if a.repeats < 1 or a.warmup < 0:
        ap.error("--repeats must be >= 1 and --warmup >= 0")
    return a


def finish(out, path, failed):
    """The end of a per-token-loss anchor: its document to `path` (if given), then exit 1 if a check failed."""
    if path:
        write_json(path, out)
    if failed:
        sys.exit("check FAILED: the anchor's per-token loss differs from the fixtures'")


def anchor_result(kind, a, gpu, commits, shims, rows, **extra):
    """An anchor script's JSON: what ran (versions, commits, shims), the token ids and timing rules,
    then `extra` and the rows."""
    import datetime
    import torch
    import transformers
    import triton
    out = {"kind": kind, "method": "check" if getattr(a, "check", False) else "timing", "gpu": gpu,
           "date": datetime.date.today().isoformat(), "torch": torch.__version__, "triton": triton.__version__,
           "transformers": transformers.__version__, "commits": commits, "seed": a.seed,
           "ids": "splitmix64(seed) % vocab_size; input [BOS] + row[:T-1], labels row",
           "warmup": a.warmup, "repeats": a.repeats, "time": "median of repeats, synchronize around each forward",
           "shims": shims}
    out.update(extra)
    out["rows"] = rows
    return out
