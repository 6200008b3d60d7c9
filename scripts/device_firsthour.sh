#!/usr/bin/env bash
# On the GPU machine: issue #57's checks on CUDA. A niah sweep of a random 760M FoX (Pro) (random
# weights never emit EOS: every cell runs to --max-new-tokens) announces its threads and prints
# progress inside its first group; a SIGINT there (RunInterrupted thrown from the scheduler's progress
# callback, through CUDA-graph decoding) exits 3 with no cell finished, and --resume then gives the
# predictions of an uninterrupted run.
# Usage: scripts/device_firsthour.sh OUTDIR   (carry .devdata/PaulGrahamEssays: the haystack, never committed)
set -uo pipefail
out="$1"; mkdir -p "$out"
here="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=/dev/null
source "$here/scripts/device_lib.sh"
device_build_or_exit "$out" foxeval
fox="$here/build-gpu/foxeval"
ckpt=/tmp/ckpt-fox_pro
[ -d "$ckpt" ] || python3 "$here/scripts/make_random_checkpoint.py" fox_pro "$ckpt" --bf16
N=(niah run --model "$ckpt" --haystack "$here/.devdata/PaulGrahamEssays" --lengths 2000,4000 --depths 0,50,100
  --max-new-tokens 512 --device cuda --dtype bfloat16)
"$fox" "${N[@]}" --threads 4 --out "$out/full.json" >"$out/full.out" 2>"$out/full.err"; echo "uninterrupted rc=$? (want 0)"
grep '^\[foxeval\] model' "$out/full.err" | grep -o 'threads [0-9]*'
FOXEVAL_PROGRESS_SECONDS=0 "$fox" "${N[@]}" --out "$out/cut.json" >/dev/null 2>"$out/cut.err" &
pid=$!
for _ in $(seq 600); do [ "$(grep -c 'new tokens' "$out/cut.err")" -ge 3 ] && break; sleep 0.05; done
kill -INT $pid; wait $pid; echo "interrupted rc=$? (want 3)"; grep -E '^\[niah\] 0/' "$out/cut.err" | head -3; tail -1 "$out/cut.err"
"$fox" "${N[@]}" --out "$out/cut.json" --resume >/dev/null 2>"$out/resume.err"; echo "resumed rc=$? (want 0)"
python3 - "$out/full.json" "$out/cut.json" <<'PY'
import json, sys
a, b = (json.load(open(p))["cells"] for p in sys.argv[1:])
same = [x["prediction"] == y["prediction"] and x["generated_tokens"] == y["generated_tokens"] for x, y in zip(a, b)]
print(f"interrupted + resumed vs uninterrupted: {sum(same)}/{len(same)} cells equal")
PY
echo "done at ${SECONDS}s"
