#!/usr/bin/env bash
# The binary end to end: subcommands, exit codes and error messages that name the flag/file.
# Usage: tests/cli_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
fox=tests/fixtures/official/fox_pro

expect_ok "info" "$FOXEVAL" info --model $fox
grep -q "FoX (Pro)" "$tmp/out" && ok || bad "info prints the family"
expect_ok "info --json" "$FOXEVAL" info --model $fox --json
expect_error "unknown model dir" "no config.json" "$FOXEVAL" info --model "$tmp"
mkdir -p "$tmp/unknown" && cp $fox/model.safetensors "$tmp/unknown/" &&
  sed 's/forgetting_transformer-project_fox/llama/' $fox/config.json >"$tmp/unknown/config.json"
expect_error "unknown model_type" 'unknown model_type "llama"' "$FOXEVAL" info --model "$tmp/unknown"

expect_ok "loss" "$FOXEVAL" loss --model $fox --data data/default/tokens.npy --bos-id 0 --seq-len 512 --out "$tmp/r.json"
grep -q '"val/loss_avg_len_512"' "$tmp/r.json" && ok || bad "loss writes val/loss_avg_len_512"
expect_error "bad --dtype" "--dtype" "$FOXEVAL" loss --model $fox --data data/default/tokens.npy --out "$tmp/x.json" --dtype fp8
expect_error "bad --bos-id" "--bos-id" "$FOXEVAL" loss --model $fox --data data/default/tokens.npy --out "$tmp/x.json"
expect_error "missing data" "nope.npy" "$FOXEVAL" loss --model $fox --data "$tmp/nope.npy" --bos-id 0 --out "$tmp/x.json"
if ! command -v nvidia-smi >/dev/null 2>&1; then
  expect_error "cuda without a GPU" "CUDA was asked for" "$FOXEVAL" loss --model $fox --data data/default/tokens.npy \
    --bos-id 0 --out "$tmp/x.json" --device cuda
fi

# Stop part-way (state saved, exit 3), resume, and get the uninterrupted numbers.
"$FOXEVAL" loss --model $fox --data data/default/tokens.npy --bos-id 0 --seq-len 256 --out "$tmp/a.json" >/dev/null 2>&1
"$FOXEVAL" loss --model $fox --data data/default/tokens.npy --bos-id 0 --seq-len 256 --out "$tmp/b.json" --stop-after 5 >/dev/null 2>&1
[ $? -eq 3 ] && [ -f "$tmp/b.json.state.json" ] && ok || bad "--stop-after saves the state and exits 3"
"$FOXEVAL" loss --model $fox --data data/default/tokens.npy --bos-id 0 --seq-len 256 --out "$tmp/b.json" --resume >/dev/null 2>&1
cmp -s <(grep -v elapsed_s "$tmp/a.json" | grep -v -e tokens_per_s -e seconds_per -e data_wait_s -e "\"date\"") <(grep -v elapsed_s "$tmp/b.json" | grep -v -e tokens_per_s -e seconds_per -e data_wait_s -e "\"date\"") \
  && ok || bad "resumed result equals the uninterrupted one"

# A real SIGTERM mid-run: state saved, exit 3, and --resume gives the uninterrupted numbers.
# 64 documents (the default tokens repeated 16 times) so the run lasts a few seconds.
big="$tmp/big.npy"
hdr="{'descr': '<u2', 'fortran_order': False, 'shape': (64, 1024), }"
while [ $(( (10 + ${#hdr} + 1) % 64 )) -ne 0 ]; do hdr="$hdr "; done
{ printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( (${#hdr} + 1) % 256 )))\\x$(printf %02x $(( (${#hdr} + 1) / 256 )))";
  printf '%s\n' "$hdr"; for i in $(seq 16); do tail -c 8192 data/default/tokens.npy; done; } >"$big"
args=(loss --model $fox --data "$big" --bos-id 0 --seq-len 1024)
"$FOXEVAL" "${args[@]}" --out "$tmp/full.json" >/dev/null 2>&1 || bad "64-document run"
# --save-every 1: the first state save (about a second into the loop) says the run is mid-way.
"$FOXEVAL" "${args[@]}" --out "$tmp/killed.json" --save-every 1 >/dev/null 2>"$tmp/killed.err" &
pid=$!
for _ in $(seq 300); do [ -f "$tmp/killed.json.state.json" ] && break; sleep 0.1; done
kill -TERM $pid; wait $pid; rc=$?
if [ $rc -eq 3 ] && [ -f "$tmp/killed.json.state.json" ]; then
  ok
  "$FOXEVAL" "${args[@]}" --out "$tmp/killed.json" --resume >/dev/null 2>&1 || bad "resume after SIGTERM"
  cmp -s <(grep -v elapsed_s "$tmp/full.json" | grep -v -e tokens_per_s -e seconds_per -e data_wait_s -e "\"date\"") \
         <(grep -v elapsed_s "$tmp/killed.json" | grep -v -e tokens_per_s -e seconds_per -e data_wait_s -e "\"date\"") \
    && ok || bad "SIGTERM + --resume equals the uninterrupted run"
elif [ $rc -eq 0 ]; then
  echo "note: the run finished before SIGTERM arrived; signal path not exercised" >&2
else
  bad "SIGTERM: exit $rc (want 3) or no state file"; cat "$tmp/killed.err" >&2
fi

# Two shards from launcher variables, merged.
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 "$FOXEVAL" loss --model $fox --data data/default/tokens.npy --bos-id 0 --seq-len 256 \
    --out "$tmp/part$r.json" >/dev/null 2>&1 || bad "shard $r"
done
expect_ok "merge" "$FOXEVAL" merge --out "$tmp/m.json" "$tmp/part0.json" "$tmp/part1.json"
diff <(grep -A3 '"val/loss_avg_len_1024"' "$tmp/a.json" | head -1) <(grep -A3 '"val/loss_avg_len_1024"' "$tmp/m.json" | head -1) >/dev/null \
  && ok || bad "merged equals one run"

if [ -f data/gpt2/encoder.json ] && "$FOXEVAL" tokenize --help >/dev/null 2>&1; then
  out="$("$FOXEVAL" tokenize --text 'Hello  world!')"
  [ "$out" = "[50256, 15496, 220, 995, 0]" ] && ok || bad "tokenize (got $out)"
  out="$("$FOXEVAL" detokenize --ids 15496,220,995,0)"
  [ "$out" = "Hello  world!" ] && ok || bad "detokenize (got $out)"
fi

expect_ok "generate" "$FOXEVAL" generate --model $fox --prompt-ids 1,2,3 --max-new-tokens 5 --json
grep -q '"generated_ids"' "$tmp/out" && ok || bad "generate --json prints generated_ids"
expect_error "generate bad ids" "--prompt-ids" "$FOXEVAL" generate --model $fox --prompt-ids 1,x --max-new-tokens 5
expect_error "generate empty id item" "empty list item" "$FOXEVAL" generate --model $fox --prompt-ids 1,,3 --max-new-tokens 5
expect_error "generate trailing comma" "empty list item" "$FOXEVAL" generate --model $fox --prompt-ids 1,2, --max-new-tokens 5
# --prompt-file: a blank or non-UTF-8 line is refused with exit 2, naming file:line (before the model loads)
printf 'a first prompt\n\nthird\n' >"$tmp/blank.txt"
"$FOXEVAL" generate --model $fox --prompt-file "$tmp/blank.txt" --max-new-tokens 2 >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -qF "blank.txt:2: empty line" "$tmp/err" && ok || { bad "generate --prompt-file blank line (rc $rc)"; cat "$tmp/err" >&2; }
printf 'fine\nfine too\nbad \xff byte\n' >"$tmp/bytes.txt"
"$FOXEVAL" generate --model $fox --prompt-file "$tmp/bytes.txt" --max-new-tokens 2 >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -qF "bytes.txt:3: not UTF-8 (byte 5 of the line)" "$tmp/err" && ok || { bad "generate --prompt-file bad UTF-8 (rc $rc)"; cat "$tmp/err" >&2; }

# Regression check against the committed baseline of the default run.
"$FOXEVAL" loss --model $fox --data data/default/tokens.npy --bos-id 0 --out "$tmp/default.json" >/dev/null 2>&1
expect_ok "check vs baseline" "$FOXEVAL" check "$tmp/default.json" --baseline results/baseline/default-loss.json
sed 's/"val\/loss_avg_len_1024": [0-9][0-9.eE+-]*/"val\/loss_avg_len_1024": 9.0/' "$tmp/default.json" >"$tmp/regressed.json"
if "$FOXEVAL" check "$tmp/regressed.json" --baseline results/baseline/default-loss.json >"$tmp/out" 2>&1; then
  bad "check must fail on a regressed metric"
else
  grep -q "val/loss_avg_len_1024 .* WORSENED" "$tmp/out" && ok || bad "check names the worsened metric"
fi
# By direction: a lower loss is an improvement, still a change (exit 1) unless --fail-on worse.
sed 's/"val\/loss_avg_len_1024": [0-9][0-9.eE+-]*/"val\/loss_avg_len_1024": 1.0/' "$tmp/default.json" >"$tmp/improved.json"
"$FOXEVAL" check "$tmp/improved.json" --baseline results/baseline/default-loss.json >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q "val/loss_avg_len_1024 .* improved" "$tmp/out" && ok || bad "check reports an improvement (exit 1, got $rc)"
expect_ok "check --fail-on worse passes an improvement" "$FOXEVAL" check "$tmp/improved.json" \
  --baseline results/baseline/default-loss.json --fail-on worse
"$FOXEVAL" check "$tmp/regressed.json" --baseline results/baseline/default-loss.json --fail-on worse >/dev/null 2>&1
[ $? -eq 1 ] && ok || bad "check --fail-on worse fails a worsened metric"
# A per-position curve names its worst position.
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); c=r["val/loss_per_token"]; c[7]+=0.5; c[300]-=0.9; c[517]+=2.0
json.dump(r,open(sys.argv[2],"w"))' "$tmp/default.json" "$tmp/curve.json"
"$FOXEVAL" check "$tmp/curve.json" --baseline results/baseline/default-loss.json >"$tmp/out" 2>&1
grep -q "val/loss_per_token\[517\] .* WORSENED" "$tmp/out" && ok || bad "check names the curve's worst position"

# Other settings: refused with exit 2, naming the setting; --ignore-settings compares anyway.
sed 's/"seq_len": 1024/"seq_len": 512/' "$tmp/default.json" >"$tmp/other.json"
"$FOXEVAL" check "$tmp/other.json" --baseline results/baseline/default-loss.json >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "seq_len: 1024 vs 512" "$tmp/err" && ok || bad "check refuses other settings (exit 2, got $rc)"
"$FOXEVAL" check "$tmp/other.json" --baseline results/baseline/default-loss.json --ignore-settings >/dev/null 2>&1
[ $? -ne 2 ] && ok || bad "check --ignore-settings compares"
expect_error "check --tol" "--tol x: expected METRIC=ABS" "$FOXEVAL" check "$tmp/default.json" --baseline results/baseline/default-loss.json --tol x

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
