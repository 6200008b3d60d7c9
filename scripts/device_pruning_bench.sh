#!/usr/bin/env bash
# On the GPU machine (after `source scripts/device_build.sh foxeval`): FoX's adaptive computation
# pruning on a random 760M FoX (Pro). Runs
#   1. `foxeval bench pruning` at 64k tokens, 2 documents, forget-gate shifts -4..8, tolerances -10
#      and -5 (seconds per document, loss difference, skipped key blocks, the error bound beside the
#      measured one) -> OUTDIR/pruning-ckpt-fox-pro-<gpu>.json (and results/bench/ when OUTDIR is it);
#   2. NIAH with --log-pruning-tolerance -10 and with none on the same checkpoint (a small grid):
#      wall seconds, header.pruning, and whether any cell's prediction or score differs
#      -> OUTDIR/niah-pruning-{on,off}.json, OUTDIR/niah-pruning-compare.txt.
# Needs .devdata/PaulGrahamEssays (the haystack, carried) for step 2; without it step 2 is skipped.
# Total about 3-4 minutes on an H100 (most of it model loads and the 64k forwards).
# Usage: scripts/device_pruning_bench.sh OUTDIR
set -uo pipefail
out="${1:?usage: scripts/device_pruning_bench.sh OUTDIR}"
here="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/device_lib.sh
source "$here/scripts/device_lib.sh"
device_bench_setup "$out" fox_pro
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"

gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -oiE 'h100|h200|a100|b200' | tr 'A-Z' 'a-z')"
t0=$(date +%s.%N)
"$fox" bench pruning --model "$ckpt" --seq-len 65536 --documents 2 --device cuda --dtype bfloat16 \
  --levels=-4,-2,0,2,4,6,8 --tolerances=-10,-5 --out "$out/pruning-ckpt-fox-pro-${gpu:-gpu}.json" \
  2>"$out/bench-pruning.log" | tee "$out/bench-pruning.txt"
rc=${PIPESTATUS[0]}
echo "bench pruning rc=$rc wall_s=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))")" | tee -a "$out/stages.txt"

hay="$here/.devdata/PaulGrahamEssays"
if [ ! -d "$hay" ]; then
  echo "no $hay: NIAH skipped" | tee -a "$out/stages.txt"
  exit 0
fi
# Random weights never emit EOS: every cell generates --max-new-tokens tokens, decoding against the
# whole prompt's cache, so the decode kernel's pruning is exercised at every step.
grid=(--lengths 8000,32000 --depths 10,90 --max-new-tokens 32 --mode standard)
for tol in -10 none; do
  name=$([ "$tol" = none ] && echo off || echo on)
  t0=$(date +%s.%N)
  "$fox" niah run --model "$ckpt" --device cuda --dtype bfloat16 --haystack "$hay" "${grid[@]}" \
    --log-pruning-tolerance "$tol" --out "$out/niah-pruning-$name.json" >"$out/niah-pruning-$name.stdout" \
    2>"$out/niah-pruning-$name.log"
  rc=$?
  echo "niah pruning $name (tolerance $tol) rc=$rc wall_s=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))")" |
    tee -a "$out/stages.txt"
done
python3 - "$out/niah-pruning-on.json" "$out/niah-pruning-off.json" <<'PY' | tee "$out/niah-pruning-compare.txt"
import json, sys
on, off = (json.load(open(p)) for p in sys.argv[1:3])
print("header.pruning (on):", json.dumps(on["header"].get("pruning")))
print("header.pruning (off):", json.dumps(off["header"].get("pruning", "absent")))
print("elapsed_s on %.1f off %.1f" % (on["header"]["elapsed_s"], off["header"]["elapsed_s"]))
cells = {(c["length"], c["depth"]): c for c in off["cells"]}
same_pred = same_score = 0
for c in on["cells"]:
    o = cells[(c["length"], c["depth"])]
    same_pred += c["prediction"] == o["prediction"]
    same_score += c["score"] == o["score"]
    if c["prediction"] != o["prediction"]:
        print("differs at length %s depth %s:\n  on:  %r\n  off: %r" % (c["length"], c["depth"], c["prediction"][:120], o["prediction"][:120]))
n = len(on["cells"])
print("cells %d: predictions equal %d, scores equal %d" % (n, same_pred, same_score))
PY
