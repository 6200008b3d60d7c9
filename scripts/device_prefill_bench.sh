#!/usr/bin/env bash
# On the GPU machine, after `source scripts/device_build.sh foxeval`: `foxeval bench prefill` on
# random paper-size (760M) FoX (Pro) and Transformer (Pro) checkpoints, bf16, batch 1: seconds per
# document and the stage table, written to OUTDIR/prefill-<gpu>.json.
# Usage: scripts/device_prefill_bench.sh OUTDIR [SEQ_LENS]   (default 65536,16384)
#   AB=1 also runs the 64k rows with FOXEVAL_FUSED_PROJ=0 (separate input projections) first.
set -euo pipefail
out="$1"; lens="${2:-65536,16384}"
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="$here/build-gpu/foxeval"
mkdir -p "$out"
for fam in fox_pro transformer_pro; do
  [ -d "/tmp/ckpt-$fam" ] || python3 "$here/scripts/make_random_checkpoint.py" "$fam" "/tmp/ckpt-$fam" --bf16 >/dev/null
done
models="fox_pro=/tmp/ckpt-fox_pro,transformer_pro=/tmp/ckpt-transformer_pro"
if [ "${AB:-0}" = 1 ]; then
  echo "== separate input projections (FOXEVAL_FUSED_PROJ=0)"
  FOXEVAL_FUSED_PROJ=0 "$bin" bench prefill --models "$models" --seq-lens 65536 --repeats 2 \
    --device cuda --dtype bfloat16 --out "$out/prefill-separate-proj.json" 2>"$out/prefill-separate-proj.log" | grep -v "^    "
fi
echo "== bench prefill"
"$bin" bench prefill --models "$models" --seq-lens "$lens" --device cuda --dtype bfloat16 \
  --out "$out/prefill.json" 2>"$out/prefill.log"
