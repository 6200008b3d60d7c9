#!/usr/bin/env bash
# On the GPU machine, after `source scripts/device_build.sh foxeval`: every `foxeval bench` command
# once, small, after the benchmarks moved from cli/ into the bench/ layer (#50): each must run and
# write a document with the fields the committed results/bench/ documents of its kind have
# (scripts and the README read them). A few minutes on an H100/H200.
# Usage: scripts/device_layout_bench.sh OUTDIR   (then compare OUTDIR/*.json with a run of the
# same commands on the build before the move for the timings: same call, before/after)
set -euo pipefail
out="$1"
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="$here/build-gpu/foxeval"
mkdir -p "$out"
for fam in fox_pro transformer_pro mamba2; do
  [ -d "/tmp/ckpt-$fam" ] || python3 "$here/scripts/make_random_checkpoint.py" "$fam" "/tmp/ckpt-$fam" --bf16 >/dev/null
done
run() { local name="$1"; shift; echo "== bench $name"; "$bin" bench "$name" "$@" --out "$out/$name.json" 2>"$out/$name.log"; }
run attention --quick
run decode --model /tmp/ckpt-fox_pro --batch 1,16 --prompt-len 1024,8192 --device cuda --dtype bfloat16
run generate --model /tmp/ckpt-fox_pro --batch 1,16 --prompt-len 1024,8192 --new-tokens 64 --memory-check-len 8192 \
  --device cuda --dtype bfloat16
run prefill --models "fox_pro=/tmp/ckpt-fox_pro,transformer_pro=/tmp/ckpt-transformer_pro" --seq-lens 16384 \
  --device cuda --dtype bfloat16
run recurrent --models mamba2=/tmp/ckpt-mamba2 --seq-lens 16384 --device cuda --dtype bfloat16
run pruning --model /tmp/ckpt-fox_pro --seq-len 16384 --documents 1 --levels 0,4 --device cuda --dtype bfloat16
# Top-level fields: exactly those each bench wrote before the move (main at 27990eb), so the
# scripts and the README that read results/bench/ read the same documents.
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
common = {"header", "gpu", "date", "git_revision"}
want = {
    "attention": {"gpu", "date", "dtype", "timing", "sdpa_backend", "sdpa_default_backend", "fox_prefill_impl", "flops", "rows"},
    "decode": {"gpu", "date", "model", "family", "num_parameters", "device", "dtype", "steps", "prefill_chunk",
               "bandwidth_bytes_per_s", "bound", "rows"},
    "generate": common | {"machine", "model", "family", "num_parameters", "device", "dtype", "new_tokens",
                          "bandwidth_bytes_per_s", "bandwidth_measured", "bound", "rows", "memory_check"},
    "prefill": common | {"kind", "what", "time", "official_gpu_md", "rows"},
    "recurrent": common | {"kind", "machine", "device", "dtype", "ids", "time", "impls_note", "ratio", "loss_tolerance",
                           "loss_tolerance_why", "rows"},
    "pruning": common | {"kind", "machine", "model", "seq_len", "documents", "ids", "levels_note", "time", "loss_diff",
                         "key_blocks_note", "kernel_check_note", "rows"},
}
bad = 0
for name, fields in want.items():
    d = json.load(open(os.path.join(out, name + ".json")))
    got = set(d)
    errors = [r.get("error") for r in d["rows"] if isinstance(r, dict) and r.get("error")]
    print(f"{name}: missing {sorted(fields - got) or 'none'}, extra {sorted(got - fields) or 'none'}, "
          f"{len(d['rows'])} rows, {len(errors)} with an error {errors[:1]}")
    bad += bool(fields ^ got)
sys.exit(1 if bad else 0)
PY
tar -C "$out" -czf "$out/layout-bench.tgz" --exclude layout-bench.tgz .
