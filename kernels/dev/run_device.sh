#!/usr/bin/env bash
# On the GPU machine: build the standalone harness, run the tests, compute-sanitizer on a
# small case, and the benchmark. Logs go to $OUT. Usage: bash kernels/dev/run_device.sh [nosan]
# (run with carry [".deps"]; BENCH_ARGS for the bench, TUNE=1 for tile experiments)
set -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
mkdir -p /opt/deps && for f in .deps/*.deb; do dpkg -x "$f" /opt/deps; done
TORCH_PREFIX="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"
export PATH=/usr/local/cuda/bin:$PATH
cxx=g++; [ -x /opt/gcc/bin/g++ ] && cxx=/opt/gcc/bin/g++
t0=$(date +%s)
cmake -S kernels/dev -B build-fa -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=$cxx \
  -DCMAKE_CUDA_HOST_COMPILER=$cxx -DCMAKE_PREFIX_PATH="$TORCH_PREFIX;/opt/deps/usr" > /tmp/cmake.log 2>&1 || { tail -30 /tmp/cmake.log; exit 1; }
cmake --build build-fa -j16 -- -k 0 > $OUT/build.log 2>&1 || grep -E "error|Error" -A3 $OUT/build.log | head -40
[ -x build-fa/fa_tests ] && [ -x build-fa/fa_cli ] || exit 1
echo "build $(( $(date +%s) - t0 )) s"
grep -E "spill|registers" $OUT/build.log | sort | uniq -c | head -20
summ() { grep -E "rel err|diff|ERROR|FAILED|test cases|assertions" | grep -v "^\[doctest\] assertions" | head -40; }
echo "=== tests, default impl"; timeout 120 ./build-fa/fa_tests > $OUT/tests.log 2>&1; summ < $OUT/tests.log
echo "=== tests, wgmma"; FOXEVAL_FA_IMPL=wgmma timeout 60 ./build-fa/fa_tests > $OUT/tests_wg.log 2>&1; summ < $OUT/tests_wg.log
if [ "$1" != "nosan" ]; then
  timeout 120 compute-sanitizer --tool memcheck ./build-fa/fa_tests -tc="*prefill*,*decode*" > $OUT/sanitizer.log 2>&1; echo "sanitizer (default impl) rc=$?"; tail -2 $OUT/sanitizer.log
fi
echo "=== bench default"; timeout 200 ./build-fa/fa_cli bench attention ${BENCH_ARGS:-} --out $OUT/attention-h100.json 2>&1 | tee $OUT/bench.log
# Tile experiments (TUNE=1): wgmma tiles <BN>x<warpgroups> for one head dim.
[ "${TUNE:-0}" = 1 ] && for cd in wgmma:128x1:64 wgmma:64x1:64 wgmma:64x1:128; do impl=${cd%%:*}; rest=${cd#*:}; cfg=${rest%:*}; d=${rest#*:}
  echo "=== $impl cfg $cfg d$d"; FOXEVAL_FA_IMPL=$impl FOXEVAL_FA_WG_CFG=$cfg timeout 30 ./build-fa/fa_tests -tc="*prefill*" 2>&1 | grep -E "rel err|test cases" | grep -E "d$d|test cases"
  FOXEVAL_FA_IMPL=$impl FOXEVAL_FA_WG_CFG=$cfg timeout 100 ./build-fa/fa_cli bench attention --head-dim $d --out /tmp/x.json 2>&1 | grep -v " 32768 " | head -4
done
