#!/usr/bin/env bash
# On the GPU machine: Nsight Compute on the prefill's glue kernels through `foxeval bench prefill`
# (random 760M checkpoint, bf16, one 64k document, no warm-up): the first LAUNCH_COUNT launches of
# each kernel matching REGEX, under each environment setting given ("" is the default). Builds
# foxeval first. Prints the speed-of-light, memory and warp-state summaries (OUTDIR/ncu-<i>.txt).
# Usage: scripts/device_ncu_prefill.sh OUTDIR FAMILY REGEX [SETTING...]   (carry .deps)
#   FAMILY: fox_pro or transformer_pro; LAUNCH_COUNT (default 1); SEQ_LEN (default 65536).
set -uo pipefail
out="$1"; fam="$2"; regex="$3"; shift 3
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
# shellcheck source=scripts/device_lib.sh
source "$here/scripts/device_lib.sh"
device_build_or_exit "$out" foxeval
[ -d "/tmp/ckpt-$fam" ] || python3 "$here/scripts/make_random_checkpoint.py" "$fam" "/tmp/ckpt-$fam" --bf16 >/dev/null
settings=("$@"); [ ${#settings[@]} -eq 0 ] && settings=("")
for i in "${!settings[@]}"; do
  # shellcheck disable=SC2086  # a setting may hold several VAR=value words
  env ${settings[$i]} timeout 240 ncu --kernel-name "regex:$regex" --launch-count "${LAUNCH_COUNT:-1}" \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
    --section LaunchStats --section SchedulerStats -f -o "/tmp/ncu-$i" \
    "$here/build-gpu/foxeval" bench prefill --models "$fam=/tmp/ckpt-$fam" --seq-lens "${SEQ_LEN:-65536}" \
    --repeats 1 --warmup 0 --device cuda --dtype bfloat16 --out "/tmp/ncu-bench-$i.json" >"$out/ncu-run-$i.log" 2>&1
  echo "[${settings[$i]:-default}] ncu rc=$? (at ${SECONDS}s)"
  ncu -i "/tmp/ncu-$i.ncu-rep" --page details >"$out/ncu-$i.txt" 2>&1
  grep -E "^  [a-z_]|Duration|DRAM Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Issue Slots Busy|No Eligible|Active Warps Per Scheduler|Eligible Warps" "$out/ncu-$i.txt" | head -40
done
echo "done at ${SECONDS}s"
