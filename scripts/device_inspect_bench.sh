#!/usr/bin/env bash
# On the GPU machine, after scripts/device_build.sh: `foxeval inspect gates` against `foxeval loss`
# on the same documents (8 of 65536 tokens by default) of a random paper-size (760M) checkpoint,
# bf16. Each command runs twice and the second run counts (the first warms the GPU and the file
# cache). Writes OUTDIR/inspect-FAMILY-<gpu>.json: both tokens/s, their ratio and the runs' outputs.
# Usage: scripts/device_inspect_bench.sh DATA.zarr OUTDIR [FAMILY...]   (default family: fox_pro)
#   TOKENS=524288 (8 x 65536) by default.
set -euo pipefail
data="$1"; out="$2"; shift 2
families=("$@"); [ ${#families[@]} -gt 0 ] || families=(fox_pro)
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="$here/build-gpu/foxeval"
tokens="${TOKENS:-524288}"
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -oE 'H100|H200|A100' | tr 'A-Z' 'a-z' || echo gpu)"
mkdir -p "$out"
for fam in "${families[@]}"; do
  ckpt="/tmp/ckpt-$fam"
  [ -d "$ckpt" ] || python3 "$here/scripts/make_random_checkpoint.py" "$fam" "$ckpt" --bf16
  for run in 1 2; do
    rm -f "$out/bench-loss-$fam.json" "$out/bench-inspect-$fam.json"
    "$bin" loss --model "$ckpt" --data "$data" --device cuda --dtype bfloat16 --tokens "$tokens" \
      --out "$out/bench-loss-$fam.json" 2>"$out/bench-loss-$fam.log" >/dev/null
    "$bin" inspect gates --model "$ckpt" --data "$data" --device cuda --dtype bfloat16 --tokens "$tokens" \
      --out "$out/bench-inspect-$fam.json" 2>"$out/bench-inspect-$fam.log" >/dev/null
  done
  python3 - "$out/bench-loss-$fam.json" "$out/bench-inspect-$fam.json" "$out/inspect-$fam-$gpu.json" "$fam" <<'PYEOF'
import json, os, sys, tempfile
loss, ins, dest, fam = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
run = ins["this_run"]
res = {
    "what": "foxeval inspect gates vs foxeval loss on the same documents, random 760M checkpoint, bf16, second of two runs",
    "family": fam,
    "documents": loss["documents"], "tokens": loss["tokens"],
    "loss_tokens_per_s": loss["tokens_per_s"], "loss_seconds_per_document": loss["seconds_per_document"],
    "inspect_tokens_per_s": run["tokens_per_s"], "inspect_seconds_per_document": run["seconds_per_document"],
    "inspect_over_loss_time": loss["tokens_per_s"] / run["tokens_per_s"],
    "loss_peak_gpu_memory_bytes": loss.get("peak_gpu_memory_bytes"),
    "inspect_peak_gpu_memory_bytes": run.get("peak_gpu_memory_bytes"),
    "loss_header": loss["header"], "inspect_header": ins["header"],
}
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(dest) or ".")
with os.fdopen(fd, "w") as f:
    json.dump(res, f, indent=1)
os.replace(tmp, dest)
print(f"{fam}: loss {res['loss_tokens_per_s']:.0f} tok/s, inspect gates {res['inspect_tokens_per_s']:.0f} tok/s, "
      f"inspect time / loss time = {res['inspect_over_loss_time']:.3f} -> {dest}")
PYEOF
done
