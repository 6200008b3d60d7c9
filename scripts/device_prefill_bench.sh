#!/usr/bin/env bash
# On the GPU machine, after `source scripts/device_build.sh foxeval`: `foxeval bench prefill` on
# random paper-size (760M) FoX (Pro) and Transformer (Pro) checkpoints, bf16, batch 1: seconds per
# document and the stage table, written to OUTDIR/prefill.json. nvidia-smi samples the SM clock and
# board power beside the bench (OUTDIR/gpu-clocks.csv), and scripts/gpu_clock_join.py adds them to
# each row (gpu_during_timed_repeats): at 64k these models run at the H100's 700 W power cap.
# Usage: scripts/device_prefill_bench.sh OUTDIR [SEQ_LENS]   (default 65536,16384)
#   AB=1 also runs the 64k rows with FOXEVAL_FUSED_PROJ=0 (separate input projections) first.
#   SWAPPED=1 also runs the 64k rows with Transformer (Pro) first (OUTDIR/prefill-swapped.json).
set -euo pipefail
out="$1"; lens="${2:-65536,16384}"
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="$here/build-gpu/foxeval"
mkdir -p "$out"
for fam in fox_pro transformer_pro; do
  [ -d "/tmp/ckpt-$fam" ] || python3 "$here/scripts/make_random_checkpoint.py" "$fam" "/tmp/ckpt-$fam" --bf16 >/dev/null
done
fox="fox_pro=/tmp/ckpt-fox_pro"; tpro="transformer_pro=/tmp/ckpt-transformer_pro"
logger=""
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active --format=csv,noheader,nounits \
    -lms 100 >"$out/gpu-clocks.csv" 2>/dev/null &
  logger=$!
  trap 'kill $logger 2>/dev/null || true' EXIT
fi
if [ "${AB:-0}" = 1 ]; then
  echo "== separate input projections (FOXEVAL_FUSED_PROJ=0)"
  FOXEVAL_FUSED_PROJ=0 "$bin" bench prefill --models "$fox,$tpro" --seq-lens 65536 --repeats 2 \
    --device cuda --dtype bfloat16 --out "$out/prefill-separate-proj.json" 2>"$out/prefill-separate-proj.log" | grep -v "^    "
fi
echo "== bench prefill"
"$bin" bench prefill --models "$fox,$tpro" --seq-lens "$lens" --device cuda --dtype bfloat16 \
  --out "$out/prefill.json" 2>"$out/prefill.log"
if [ "${SWAPPED:-0}" = 1 ]; then
  echo "== bench prefill, Transformer (Pro) first"
  "$bin" bench prefill --models "$tpro,$fox" --seq-lens 65536 --repeats 5 --device cuda --dtype bfloat16 \
    --out "$out/prefill-swapped.json" 2>"$out/prefill-swapped.log" | grep -v "^    "
fi
if [ -n "$logger" ]; then
  sleep 0.3; kill "$logger" 2>/dev/null || true; wait "$logger" 2>/dev/null || true
  for f in prefill prefill-swapped prefill-separate-proj; do
    if [ -f "$out/$f.json" ]; then python3 "$here/scripts/gpu_clock_join.py" "$out/$f.json" "$out/gpu-clocks.csv"; fi
  done
  python3 - "$out"/prefill*.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    for r in json.load(open(path))["rows"]:
        g = r.get("gpu_during_timed_repeats", {})
        print(f"{path.rsplit('/', 1)[-1]:28s} {r['model']:16s} {r['seq_len']:6d} {r['seconds_per_document']:.4f} s/doc  "
              f"SM {g.get('sm_clock_mhz_median', '-')} MHz (min {g.get('sm_clock_mhz_min', '-')}), "
              f"{g.get('power_w_median', '-')} W, power-capped {g.get('power_capped_fraction', '-')}")
PY
fi
