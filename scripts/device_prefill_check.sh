#!/usr/bin/env bash
# On the GPU machine, one call for the prefill work (issue 32's loop): build foxeval and its tests,
# run the attention kernel's fp64 tests, `bench prefill` in both model orders with the GPU clock
# and power (scripts/device_prefill_bench.sh SWAPPED=1), `bench attention` beside cuDNN, then the
# whole test binary with whatever time is left before DEADLINE seconds (default 560, inside the
# device tool's 600 s a call). OUTDIR gets six files (the device tool returns at most 8): the two
# test logs, prefill.json, prefill-swapped.json, gpu-clocks.csv, attention.json; build.log too
# when the build fails.
# FAMILIES="fox_pro transformer_pro" adds scripts/device_determinism.sh for those families (its
# lines on stdout) before the test binary.
# Usage: scripts/device_prefill_check.sh OUTDIR   (carry .deps, from scripts/gpu_deps.sh)
# The 4 tests that read ../shared/fixtures/trained fail there (shared/ does not travel) unless
# .devdata/trained.tar.xz is carried too (device_restore_fixtures in scripts/device_lib.sh).
set -uo pipefail
out="$1"; deadline="${DEADLINE:-560}"
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
left() { echo $((deadline - SECONDS)); }
# shellcheck source=scripts/device_lib.sh
source "$here/scripts/device_lib.sh"
device_build_or_exit "$out" foxeval foxeval_tests
device_restore_fixtures
tests="$here/build-gpu/foxeval_tests"
timeout 150 "$tests" -tc='forgetting attention cuda*' >"$out/attention-tests.log" 2>&1
echo "attention tests rc=$?"; grep -E "test cases|ERROR" "$out/attention-tests.log" | head -5
SWAPPED=1 timeout 170 "$here/scripts/device_prefill_bench.sh" /tmp/foxeval-prefill 2>&1 | grep -v "^    "
for f in prefill.json prefill-swapped.json gpu-clocks.csv; do cp "/tmp/foxeval-prefill/$f" "$out/" 2>/dev/null; done
timeout 60 "$here/build-gpu/foxeval" bench attention --out "$out/attention.json" 2>/dev/null
if [ -n "${FAMILIES:-}" ]; then  # two identical loss runs per family give the same bits
  # shellcheck disable=SC2086
  timeout 150 "$here/scripts/device_determinism.sh" /tmp/foxeval-det $FAMILIES
  echo "determinism rc=$? (at ${SECONDS}s)"
fi
if [ "$(left)" -gt 20 ]; then
  timeout "$(left)" "$tests" >"$out/all-tests.log" 2>&1
  echo "all tests rc=$? (at ${SECONDS}s)"; grep -E "test cases|ERROR" "$out/all-tests.log" | head -12
else
  echo "no time left for the whole test binary"
fi
