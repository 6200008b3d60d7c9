#!/usr/bin/env bash
# On the GPU machine: build the standalone harness, run the tests, compute-sanitizer on a
# small case, and the benchmark. Logs go to $OUT. Usage: bash kernels/dev/run_device.sh [nosan]
# (run with carry [".deps"]). TEST_IMPLS / BENCH_IMPLS: other prefill kernels (mma, ws)
# to test / bench besides the default; BENCH_ARGS: extra bench flags.
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
summ() { grep -E "rel err|diff|ERROR|FAILED|test cases|assertions|timed out" | grep -v "^\[doctest\] assertions" | head -40; }
echo "=== tests, default impl"; timeout ${TEST_TIMEOUT:-90} ./build-fa/fa_tests > $OUT/tests.log 2>&1; echo "rc=$?"; summ < $OUT/tests.log
for impl in ${TEST_IMPLS:-}; do
  echo "=== tests, $impl"; FOXEVAL_FA_IMPL=$impl timeout ${TEST_TIMEOUT:-90} ./build-fa/fa_tests -tc="*prefill*,*adaptive*" > $OUT/tests_$impl.log 2>&1; echo "rc=$?"; summ < $OUT/tests_$impl.log
done
if [ "$1" != "nosan" ]; then
  timeout 150 compute-sanitizer --tool memcheck ./build-fa/fa_tests -tc="*prefill*,*decode*" > $OUT/sanitizer.log 2>&1; echo "sanitizer (default impl) rc=$?"; tail -2 $OUT/sanitizer.log
  timeout 150 compute-sanitizer --tool racecheck ./build-fa/fa_tests -tc="*prefill*" > $OUT/racecheck.log 2>&1; echo "racecheck rc=$?"; tail -2 $OUT/racecheck.log
fi
echo "=== bench default"; timeout 200 ./build-fa/fa_cli bench attention ${BENCH_ARGS:-} --out $OUT/attention-h100.json 2>&1 | tee $OUT/bench.log
for impl in ${BENCH_IMPLS:-}; do
  echo "=== bench $impl"; FOXEVAL_FA_IMPL=$impl timeout 100 ./build-fa/fa_cli bench attention ${BENCH_ARGS:-} --out /tmp/x.json 2>&1 | grep -v " 32768 "
done
