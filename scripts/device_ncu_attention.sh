#!/usr/bin/env bash
# On the GPU machine, after `source scripts/device_build.sh foxeval`: Nsight Compute on the Hopper
# prefill kernel (head dim 64 by default) through `foxeval bench attention`, one warm-up call per
# variant. Writes OUTDIR/ncu-details.txt (pipes, stalls, occupancy per launch) and
# OUTDIR/ncu-source.csv.gz (per-SASS-instruction stall samples, the kernel is built with -lineinfo).
# Usage: scripts/device_ncu_attention.sh OUTDIR [HEAD_DIM] [LAUNCH_SKIP] [LAUNCH_COUNT]
#   Launch order per shape: gated (warm-up, timed), no gate (2), [B,T,H,D] layout (2); shapes as
#   `bench attention` lists them.
set -euo pipefail
out="$1"; hd="${2:-64}"; skip="${3:-1}"; count="${4:-7}"
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
ncu --kernel-name regex:fa_prefill_ws --launch-skip "$skip" --launch-count "$count" --set full \
  --import-source yes -f -o "$out/fa" "$here/build-gpu/foxeval" bench attention --head-dim "$hd" \
  --warmup 1 --repeats 1 --out "$out/bench-under-ncu.json" >"$out/ncu-run.log" 2>&1 || { tail -20 "$out/ncu-run.log"; exit 1; }
ncu -i "$out/fa.ncu-rep" --page details > "$out/ncu-details.txt"
ncu -i "$out/fa.ncu-rep" --page source --csv --print-source sass 2>&1 | gzip > "$out/ncu-source.csv.gz"
rm -f "$out/fa.ncu-rep"
