#!/usr/bin/env bash
# On the GPU machine (after `source scripts/device_build.sh foxeval`): `foxeval bench generate` with a
# random 760M FoX (Pro) in bf16 (random weights; no stop id is given, so every request decodes all its
# tokens): batch 1,4,16,64 x prompts 1024,8192,32768 x 256 new tokens (the command's defaults; shapes
# whose caches do not fit are reported by the scheduler's memory plan, not run), the batch-1
# 32768-token row doubling as the "under 8 GiB" memory check, and Hugging Face `generate` of the
# official code beside it: the rows of results/bench/generate-760m-h100.json (batch 1 and 16,
# measured on the H100 by scripts/bench_generate_anchor.py; rerunning that script takes minutes).
# Usage: [BATCHES=1,4,16,64] [PROMPT_LENS=1024,8192,32768] [ANCHOR=FILE] [REVISION=...] [GPU_MEMORY_FRACTION=0.9] \
#          scripts/device_generate_bench.sh OUTDIR
#   REVISION: the checkout's `git describe --always --dirty --abbrev=12`, recorded in the JSON (the build
#   records what the device copy's .git says, which was seen to lag the checkout; it is kept as
#   build_git_revision).
set -uo pipefail
out="$1"
here="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/device_lib.sh
source "$here/scripts/device_lib.sh"
device_bench_setup "$out" fox_pro
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\+/-/g; s/^-//; s/-$//')"
json="$out/generate-fox_pro-760m-${gpu:-gpu}.json"
t0=$(date +%s)
timeout -s TERM "${BENCH_SECONDS:-240}" "$fox" bench generate --model "$ckpt" --device cuda --dtype bfloat16 \
  --batch "${BATCHES:-1,4,16,64}" --prompt-len "${PROMPT_LENS:-1024,8192,32768}" --new-tokens 256 \
  --memory-check-len 32768 --memory-limit-gib 8 --gpu-memory-fraction "${GPU_MEMORY_FRACTION:-0.9}" --anchor "${ANCHOR:-$here/results/bench/generate-760m-h100.json}" \
  --out "$json" 2>&1 | tee "$out/generate-fox_pro-760m.txt"
rc=${PIPESTATUS[0]}
echo "bench generate rc=$rc wall_s=$(($(date +%s) - t0))"
if [ "$rc" -eq 0 ] && [ -n "${REVISION:-}" ]; then
  python3 - "$json" "$REVISION" <<'PY'
import json, os, sys
path, rev = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
if doc.get("git_revision") != rev:
    doc["build_git_revision"] = doc.get("git_revision")
    doc["git_revision"] = doc["header"]["foxeval_version"] = rev
    doc["git_revision_from"] = "REVISION given to scripts/device_generate_bench.sh"
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(path + ".tmp", path)
PY
fi
exit "$rc"
