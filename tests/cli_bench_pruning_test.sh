#!/usr/bin/env bash
# `foxeval bench pruning` where no CUDA GPU is (CI, this machine): a clear refusal (exit 2), and the
# flags refused before anything loads; and header.pruning of a task run with and without pruning. The bench itself runs on the GPU machine
# (scripts/device_pruning_bench.sh).
# Usage: tests/cli_bench_pruning_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
fx=tests/fixtures/official/fox_pro

exit_code() { "$@" >/dev/null 2>&1; echo $?; }
if nvidia-smi -L >/dev/null 2>&1; then
  echo "a GPU is here: the no-CUDA refusal is not tested (scripts/device_pruning_bench.sh runs the bench)"
else
  expect_error "no CUDA" "bench pruning needs a CUDA GPU" "$FOXEVAL" bench pruning --model "$fx" --seq-len 64 --out "$tmp/x.json"
  [ "$(exit_code "$FOXEVAL" bench pruning --model "$fx" --seq-len 64 --out "$tmp/x.json")" = 2 ] && ok || bad "no CUDA exits 2"
  expect_error "explicit CPU" "bench pruning needs a CUDA GPU (--device cpu)" "$FOXEVAL" bench pruning --model "$fx" \
    --device cpu --out "$tmp/x.json"
  # Lists with a leading minus are taken (the refusal is the missing GPU, not the flags).
  expect_error "negative levels parse" "needs a CUDA GPU" "$FOXEVAL" bench pruning --model "$fx" --levels=-4,0,8 \
    --tolerances=-12,-3 --out "$tmp/x.json"
fi
expect_error "missing --model" "--model is required" "$FOXEVAL" bench pruning --out "$tmp/x.json"
expect_error "no checkpoint" "no config.json there" "$FOXEVAL" bench pruning --model "$tmp/nope" --out "$tmp/x.json"
expect_error "bad --seq-len" "--seq-len" "$FOXEVAL" bench pruning --model "$fx" --seq-len 1 --out "$tmp/x.json"
expect_error "bad --documents" "--documents" "$FOXEVAL" bench pruning --model "$fx" --documents 0 --out "$tmp/x.json"
expect_error "bad --levels" "--levels: 'x' is not a number" "$FOXEVAL" bench pruning --model "$fx" --levels 1,x \
  --out "$tmp/x.json"
expect_error "empty --levels item" "--levels: '' is not a number" "$FOXEVAL" bench pruning --model "$fx" --levels 1,,2 \
  --out "$tmp/x.json"
expect_error "--levels out of range" "--levels: 40 is outside" "$FOXEVAL" bench pruning --model "$fx" --levels 40 \
  --out "$tmp/x.json"
expect_error "positive tolerance" "--tolerances: 1 must be in [-80, 0)" "$FOXEVAL" bench pruning --model "$fx" \
  --tolerances 1 --out "$tmp/x.json"
expect_error "bad --dtype" "--dtype" "$FOXEVAL" bench pruning --model "$fx" --dtype int8 --out "$tmp/x.json"
[ "$(exit_code "$FOXEVAL" bench pruning --model "$fx" --documents 0 --out "$tmp/x.json")" = 2 ] && ok || bad "bad flag exits 2"
[ ! -e "$tmp/x.json" ] && ok || bad "no result written by a refused run"

# header.pruning of a task result: present with the tolerance when pruning is on (nothing counted on
# the CPU's exact path), absent when it is off.
expect_ok "loss with pruning" "$FOXEVAL" loss --model "$fx" --data data/default/tokens.npy --bos-id 0 --seq-len 512 \
  --log-pruning-tolerance -10 --out "$tmp/on.json"
flat="$(tr -d ' \n' <"$tmp/on.json")"
for field in '"pruning":{' '"log_tolerance":-10.0' '"key_blocks":0' '"skipped_fraction":null'; do
  grep -qF -- "$field" <<<"$flat" && ok || bad "header.pruning has $field"
done
expect_ok "loss without pruning" "$FOXEVAL" loss --model "$fx" --data data/default/tokens.npy --bos-id 0 --seq-len 512 \
  --out "$tmp/off.json"
grep -qF '"pruning"' "$tmp/off.json" && bad "no header.pruning with pruning off" || ok

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
