#!/usr/bin/env bash
# On the GPU machine: the prefill attention tests under compute-sanitizer, memcheck then
# racecheck (shared-memory hazards between the producer, the consumers and TMA), with the
# persistent Hopper kernel's grid capped at 3 CTAs (FOXEVAL_FA_CTAS) so that every CTA runs many
# tiles and the Q, K/V and tile rings wrap; each tool within SECS seconds (default 200; racecheck
# takes ~100 s on an H100). Builds foxeval_tests first (scripts/device_build.sh; carry .deps).
# FILTER (a doctest -tc filter) and CAP (environment words) pick other tests, e.g.
# FILTER='glu_gemm cuda: two CTAs*' CAP= for the gate_up GEMM (its test caps its own grid).
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=/dev/null
source "$here/scripts/device_build.sh" foxeval_tests >/dev/null 2>&1 || { echo "build failed"; exit 1; }
san="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
for tool in memcheck racecheck; do
  # shellcheck disable=SC2086  # CAP may hold several VAR=value words
  env ${CAP-FOXEVAL_FA_CTAS=3} timeout "${SECS:-200}" "$san" --tool "$tool" "$here/build-gpu/foxeval_tests" \
    -tc="${FILTER:-forgetting attention cuda: prefill matches fp64}" 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard|test cases" | head -5
  echo "$tool rc=${PIPESTATUS[0]}"
done
