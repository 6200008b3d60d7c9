#!/usr/bin/env bash
# On the GPU machine: the attention kernel's A/B loop in one device call. Builds foxeval and its
# tests, runs the attention kernel's fp64 and same-bits tests, then `bench attention` under each
# environment setting given (e.g. "FOXEVAL_FA_PERSIST=0"; "" is the default), ROUNDS times
# interleaved (default 2), so every variant sees the same GPU state. Prints the prefill rows
# (ms: fox gated, fox ungated, cuDNN) and keeps each run's JSON in OUTDIR as ab-<round>-<i>.json.
# Usage: scripts/device_attention_ab.sh OUTDIR [SETTING...]   (carry .deps, from scripts/gpu_deps.sh)
set -uo pipefail
out="$1"; shift
here="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/device_lib.sh
source "$here/scripts/device_lib.sh"
device_build_and_test "$out" attention-tests.log 'forgetting attention cuda*'
# One round of one setting: `bench attention` and its prefill rows on a line.
one_run() {
  local f="$out/ab-$1-$2.json"
  # shellcheck disable=SC2086  # a setting may hold several VAR=value words
  env $3 timeout 90 "$here/build-gpu/foxeval" bench attention --out "$f" >/dev/null 2>&1
  python3 - "$f" "round $1 [${3:-default}]" <<'PY'
import json, sys
try:
    rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["mode"] == "prefill"]
except (OSError, ValueError) as e:
    print(sys.argv[2], "| no result:", e); sys.exit()
cells = [f'{r["batch"]}x{r["seqlen"]}x{r["heads"]}x{r["head_dim"]}: {r["fox_ms"]:.3f}/{r["fox_nogate_ms"]:.3f}/{r["sdpa_default_ms"]:.3f}' for r in rows]
print(sys.argv[2], "|", " | ".join(cells))
PY
}
device_ab_rounds one_run "$@"
