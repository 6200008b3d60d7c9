#!/usr/bin/env bash
# On the GPU machine, after scripts/device_build.sh: `foxeval loss` with random paper-size (760M)
# checkpoints on a zarr array of 65536-token documents, at 65536 and 16384 tokens.
# Usage: scripts/device_loss_bench.sh DATA.zarr OUTDIR FAMILY...   (families: see make_random_checkpoint.py)
set -euo pipefail
data="$1"; out="$2"; shift 2
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
for fam in "$@"; do
  ckpt="/tmp/ckpt-$fam"
  [ -d "$ckpt" ] || python3 "$here/scripts/make_random_checkpoint.py" "$fam" "$ckpt" --bf16
  for len in 65536 16384; do
    echo "== $fam seq_len $len"
    "$here/build-gpu/foxeval" loss --model "$ckpt" --data "$data" --device cuda --dtype bfloat16 \
      --seq-len "$len" --tokens "${TOKENS:-$((6 * 65536))}" --out "$out/loss-$fam-$len.json" 2>"$out/loss-$fam-$len.log" |
      grep -E "s/document|tokens/s|peak|avg_len_$len\b" || { tail -5 "$out/loss-$fam-$len.log"; }
  done
done
