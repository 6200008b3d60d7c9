#!/usr/bin/env bash
# On the GPU machine: the GPU tests of the one generation engine (#50 item 4), then a short
# same-call look at `foxeval generate` on CUDA (greedy graphed slots and --no-cache side by side in
# fp32: expect equal ids, a near tie of the random fixture aside; one sampled run in bf16).
#   tests: tests/test_slots_cuda.cpp (graph == eager, fused step, out-of-memory halving through
#          generate_until), tests/test_window_attention_cuda.cpp (SWA ring slots in a graph, greedy
#          through generate()), and the CUDA sections of tests/test_generate.cpp (trained FoX on
#          CUDA through the slots; needs .devdata/trained.tar.xz carried) and test_scheduler.cpp.
# Usage: scripts/device_gen.sh OUTDIR   (carry .deps; .devdata/trained.tar.xz for the trained cases)
# Writes OUTDIR/gen-tests.log, OUTDIR/gen-cli.txt (three JSON lines).
set -uo pipefail
out="$1"
here="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/device_lib.sh
source "$here/scripts/device_lib.sh"
mkdir -p "$out"
device_build_or_exit "$out" foxeval foxeval_tests
device_restore_fixtures
echo "== generation engine GPU tests"
device_run_tests "$out" gen-tests.log '*slots cuda*,*window attention cuda*,*Transformer (SWA) cuda*,generate:*,generate_until:*,decode slots*'
echo "== foxeval generate on CUDA (random fox_pro fixture, bf16)"
fix="$here/tests/fixtures/official/fox_pro"
bin="$here/build-gpu/foxeval"
{
  for mode in "" "--no-cache"; do
    "$bin" generate --model "$fix" --device cuda --dtype float32 --prompt-ids 1,2,3,4,5,6,7,8 --max-new-tokens 24 --json $mode
  done
  "$bin" generate --model "$fix" --device cuda --dtype bfloat16 --prompt-ids 3,1,4,1,5 --max-new-tokens 16 --json \
    --temperature 0.9 --top-k 40 --seed 5
} >"$out/gen-cli.txt" 2>&1
echo "cli rc=$?"; cat "$out/gen-cli.txt" | grep -v "^\[" | head -8
