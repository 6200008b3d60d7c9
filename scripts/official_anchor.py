"""Loading the archived OFFICIAL model code (forgetting-transformer, flash-linear-attention,
mamba_ssm) for the anchor scripts (bench_generate_anchor.py, bench_recurrent_anchor.py) under
the GPU machine's PyTorch and transformers 5: the archive folders, their COMMIT files, and the
small stand-ins the 2024 code needs there. Nothing here is foxeval's model code.
"""
import argparse
import os
import sys
import types


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
