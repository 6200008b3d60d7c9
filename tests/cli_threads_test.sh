#!/usr/bin/env bash
# `--threads` as a user types it: the default is the cores this process may use (its affinity
# mask, here narrowed with taskset; its cgroup CPU quota), OMP_NUM_THREADS when set, or the value
# given; the announcement line states it; a bad value is refused; every count gives the same bits.
# Usage: tests/cli_threads_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
unset OMP_NUM_THREADS
fox=tests/fixtures/official/fox_pro
L=(loss --model $fox --data data/default/tokens.npy --bos-id 0 --seq-len 512)
announce() { grep '^\[foxeval\] model ' "$tmp/err"; }

if command -v taskset >/dev/null; then
  expect_ok "one CPU by taskset" taskset -c 0 "$FOXEVAL" "${L[@]}" --out "$tmp/t1.json"
  announce | grep -q 'device cpu, dtype float32, threads 1 (.*threads: the cores this process may use (affinity 1 CPU, ' \
    && ok || { bad "taskset -c 0: threads 1 from the affinity mask"; announce >&2; }
  if [ "$(nproc --all)" -ge 2 ]; then
    expect_ok "two CPUs by taskset" taskset -c 0,1 "$FOXEVAL" "${L[@]}" --out "$tmp/t2.json"
    announce | grep -q 'threads 2 (.*affinity 2 CPUs' && ok || { bad "taskset -c 0,1: threads 2"; announce >&2; }
  fi
else
  echo "note: taskset is missing; the affinity default is not tested" >&2
fi
expect_ok "--threads 3" "$FOXEVAL" "${L[@]}" --out "$tmp/t3.json" --threads 3
announce | grep -q 'dtype float32, threads 3 (device auto: [^;]*; dtype auto: [^;)]*)' && ! announce | grep -q 'threads:' \
  && ok || { bad "--threads 3 is announced, without a reason"; announce >&2; }
expect_ok "OMP_NUM_THREADS" env OMP_NUM_THREADS=2 "$FOXEVAL" "${L[@]}" --out "$tmp/t4.json"
announce | grep -q 'threads 2 (.*threads: OMP_NUM_THREADS=2)' && ok || { bad "OMP_NUM_THREADS=2 is the default"; announce >&2; }
expect_ok "--threads over OMP_NUM_THREADS" env OMP_NUM_THREADS=2 "$FOXEVAL" "${L[@]}" --out "$tmp/t5.json" --threads 1
announce | grep -q 'threads 1 ' && ok || { bad "--threads wins over OMP_NUM_THREADS"; announce >&2; }
# The thread count never changes a bit (models/cpu_threads.h): 1 and 3 threads give the same
# per-token losses (before, 3 threads moved the last bits: a sigmoid range off the vector grid).
if [ -f "$tmp/t1.json" ]; then
  python3 -c '
import json, sys
a, b = (json.load(open(p))["val/loss_per_token"] for p in sys.argv[1:])
sys.exit(a != b)' "$tmp/t1.json" "$tmp/t3.json" && ok || bad "1 and 3 threads: the same bits"
fi
expect_error "--threads 0" "--threads" "$FOXEVAL" "${L[@]}" --out "$tmp/x.json" --threads 0
expect_error "--threads two" "--threads" "$FOXEVAL" "${L[@]}" --out "$tmp/x.json" --threads two
"$FOXEVAL" loss --help | grep -q -- '--threads.*affinity mask and cgroup CPU quota' && ok || bad "loss --help describes --threads"
for cmd in "niah run" "longbench run" "lm-eval run" "generate" "score" "inspect gates"; do
  $FOXEVAL $cmd --help | grep -q -- '--threads' && ok || bad "$cmd --help has --threads"
done

echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]
