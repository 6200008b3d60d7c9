#!/usr/bin/env bash
# CI's regression check on scores: every task end to end on CPU (scripts/e2e_tasks.sh), each result
# held against its committed baseline (the tasks' TaskDef::baselines) with `foxeval check` (default tolerances, tasks/results/check.h).
# A change that moves any score fails here with check's table; scripts/update_baselines.sh is the
# one way to accept new numbers.   Usage: tests/cli_baselines_test.sh path/to/foxeval
set -u
FOXEVAL="$1"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
if ! scripts/e2e_tasks.sh "$tmp" "$FOXEVAL" 2>"$tmp/e2e.log"; then
  cat "$tmp/e2e.log" >&2
  echo "0 passed, 1 failed"; exit 1
fi
check() {
  if "$FOXEVAL" check "$tmp/$1" --baseline "results/baseline/$2" >"$tmp/check.out" 2>&1; then pass=$((pass + 1))
  else fail=$((fail + 1)); echo "FAILED: $1 against results/baseline/$2" >&2; cat "$tmp/check.out" >&2; fi
}
# Every baseline the tasks define (scripts/e2e_tasks.sh wrote which result stands for which).
while IFS=$'\t' read -r baseline result; do check "$result" "$baseline"; done <"$tmp/baselines.tsv"
# Every committed baseline is some task's: a baseline no task runs any more would pass unchecked.
for f in results/baseline/*.json; do
  grep -q "^$(basename "$f")"$'\t' "$tmp/baselines.tsv" || { fail=$((fail + 1)); echo "FAILED: $f: no task's baseline run" >&2; }
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
