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
mkdir -p "$out"
# shellcheck source=scripts/device_lib.sh
source "$here/scripts/device_lib.sh"
device_build_or_exit "$out" foxeval foxeval_tests
timeout 200 "$here/build-gpu/foxeval_tests" -tc='forgetting attention cuda*' >"$out/attention-tests.log" 2>&1
echo "attention tests rc=$? (at ${SECONDS}s)"; grep -E "test cases|ERROR|FAILED|CHECK" "$out/attention-tests.log" | head -12
settings=("$@"); [ ${#settings[@]} -eq 0 ] && settings=("")
for round in $(seq 1 "${ROUNDS:-2}"); do
  for i in "${!settings[@]}"; do
    f="$out/ab-$round-$i.json"
    # shellcheck disable=SC2086  # a setting may hold several VAR=value words
    env ${settings[$i]} timeout 90 "$here/build-gpu/foxeval" bench attention --out "$f" >/dev/null 2>&1
    python3 - "$f" "round $round [${settings[$i]:-default}]" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["mode"] == "prefill"]
cells = [f'{r["batch"]}x{r["seqlen"]}x{r["heads"]}x{r["head_dim"]}: {r["fox_ms"]:.3f}/{r["fox_nogate_ms"]:.3f}/{r["sdpa_default_ms"]:.3f}' for r in rows]
print(sys.argv[2], "|", " | ".join(cells))
PY
  done
done
echo "done at ${SECONDS}s"
