#!/usr/bin/env bash
# Identity by content and the run's announcement, end to end: a run without --device/--dtype says
# what it chose; `check` passes the same model and data under other paths and refuses (exit 2,
# naming model or data) other content under the same path; --resume refuses a state whose model or
# data changed; generate --prompt-file prints one block per prompt; --help states the defaults.
# Usage: tests/cli_identity_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
fox=tests/fixtures/official/fox_pro
data=data/default/tokens.npy

# Overwrites one byte of FILE at offset SIZE-BACK with 0x5a (a token id, a weight's lowest byte).
poke() { local size; size=$(stat -c %s "$1"); printf '\x5a' | dd of="$1" bs=1 seek=$((size - $2)) conv=notrunc status=none; }

# ---- the announcement: no --device/--dtype given, both said ----
expect_ok "loss with the defaults" "$FOXEVAL" loss --model $fox --data $data --bos-id 0 --seq-len 512 --out "$tmp/a.json"
line="$(grep '^\[foxeval\] model ' "$tmp/err")"
[ "$(grep -c '^\[foxeval\] model ' "$tmp/err")" -eq 1 ] && ok || bad "one announcement line"
if ! command -v nvidia-smi >/dev/null 2>&1; then
  case "$line" in *"device cpu, dtype float32, threads "[0-9]*" (device auto: no CUDA device; dtype auto: float32 on the CPU; threads: "*) ok ;;
    *) bad "announcement names device and dtype and how auto chose them: $line" ;; esac
fi
case "$line" in *"(sha256:"*"hashed): FoX (Pro), 174.3K parameters"*"settings --seq-len 512 --bos-id 0"*) ok ;;
  *) bad "announcement names digest, family, size and settings: $line" ;; esac
grep -q '"model_digest": "sha256:' "$tmp/a.json" && grep -q '"data_digest": "sha256:' "$tmp/a.json" &&
  ok || bad "the result records the model's and the data's digests"
if ! command -v nvidia-smi >/dev/null 2>&1; then
  expect_error "--device cuda without a GPU" "CUDA was asked for" "$FOXEVAL" loss --model $fox --data $data --bos-id 0 \
    --out "$tmp/x.json" --device cuda
  "$FOXEVAL" loss --model $fox --data $data --bos-id 0 --out "$tmp/x.json" --device cuda >/dev/null 2>&1
  [ $? -eq 2 ] && ok || bad "--device cuda without a GPU exits 2"
fi

# ---- check: the same content by other paths passes ----
mkdir -p "$tmp/elsewhere"
cp -r $fox "$tmp/elsewhere/model"
cp $data "$tmp/elsewhere/tokens.npy"
expect_ok "moved copies" "$FOXEVAL" loss --model "$tmp/elsewhere/model" --data "$tmp/elsewhere/tokens.npy" --bos-id 0 \
  --seq-len 512 --out "$tmp/moved.json"
expect_ok "check: same content by other paths passes" "$FOXEVAL" check "$tmp/moved.json" --baseline "$tmp/a.json"

# changed_is_refused WHAT DIGEST SAYS: a loss run on the (poked) copy in $tmp/elsewhere, written to
# $tmp/WHAT2.json, is refused by check against moved.json: exit 2, naming DIGEST and saying SAYS.
changed_is_refused() {
  local what="$1" digest="$2" says="$3"
  expect_ok "changed $what" "$FOXEVAL" loss --model "$tmp/elsewhere/model" --data "$tmp/elsewhere/tokens.npy" --bos-id 0 \
    --seq-len 512 --out "$tmp/${what}2.json"
  expect_error "check: other $what, same path" "$digest" "$FOXEVAL" check "$tmp/${what}2.json" --baseline "$tmp/moved.json"
  "$FOXEVAL" check "$tmp/${what}2.json" --baseline "$tmp/moved.json" >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] && ok || bad "exit 2"
  grep -q "$says" "$tmp/err" && ok || bad "check says: $says"
}

# ---- check: other data under the same path ----
poke "$tmp/elsewhere/tokens.npy" 2
changed_is_refused data data_digest "other data"

# ---- check: other weights under the same path ----
cp $data "$tmp/elsewhere/tokens.npy"
poke "$tmp/elsewhere/model/model.safetensors" 4
changed_is_refused model model_digest "other model"

# ---- --resume refuses a state whose data or model changed ----
cp -r $fox "$tmp/m3"; cp $data "$tmp/d3.npy"
run3=(loss --model "$tmp/m3" --data "$tmp/d3.npy" --bos-id 0 --seq-len 256 --batch-size 1)
"$FOXEVAL" "${run3[@]}" --out "$tmp/r3.json" --stop-after 1 >/dev/null 2>&1
[ $? -eq 3 ] && ok || bad "--stop-after exits 3"
poke "$tmp/d3.npy" 2
expect_error "--resume: other data" "data_digest" "$FOXEVAL" "${run3[@]}" --out "$tmp/r3.json" --resume
cp $data "$tmp/d3.npy"
poke "$tmp/m3/model.safetensors" 4
expect_error "--resume: other weights" "model_digest" "$FOXEVAL" "${run3[@]}" --out "$tmp/r3.json" --resume
cp $fox/model.safetensors "$tmp/m3/model.safetensors"
expect_ok "--resume: the same content continues" "$FOXEVAL" "${run3[@]}" --out "$tmp/r3.json" --resume

# ---- old baselines (no content digests) still pass against new runs, with a note ----
expect_ok "the baseline's run" "$FOXEVAL" loss --model $fox --data $data --bos-id 0 --out "$tmp/b.json"
expect_ok "check against the committed baseline" "$FOXEVAL" check "$tmp/b.json" --baseline results/baseline/default-loss.json
grep -q "note:" "$tmp/err" && bad "the committed baseline has content digests: no note expected" || ok
# The same baseline as a foxeval without content digests wrote it.
python3 - results/baseline/default-loss.json "$tmp/old-baseline.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
for where in (b, b["header"]["settings"], b.get("identity", {})):
    for k in ("model_digest", "model_digest_source", "data_digest"):
        where.pop(k, None)
json.dump(b, open(sys.argv[2], "w"))
PY
expect_ok "check against an old baseline" "$FOXEVAL" check "$tmp/b.json" --baseline "$tmp/old-baseline.json"
grep -q "note: the baseline has no model_digest" "$tmp/err" && ok || bad "check notes the older baseline"

# ---- generate --prompt-file: one block per prompt, the prompt shown ----
# (the small trained model of ../shared: GPT-2's vocabulary, as text prompts need)
trained="${FOXEVAL_SHARED:-../shared}/fixtures/trained/fox_pro_tiny_pg"
printf 'The first prompt\nA second one\n' >"$tmp/prompts.txt"
expect_ok "generate --prompt-file" "$FOXEVAL" generate --model "$trained" --prompt-file "$tmp/prompts.txt" --max-new-tokens 3
grep -q '^=== prompt 1 of 2 ===$' "$tmp/out" && grep -q '^=== prompt 2 of 2 ===$' "$tmp/out" &&
  grep -q "prompts.txt line 2: A second one" "$tmp/out" && ok || { bad "generate blocks"; cat "$tmp/out" >&2; }
expect_ok "generate --prompt" "$FOXEVAL" generate --model "$trained" --prompt "Hello" --max-new-tokens 3
! grep -q '^=== prompt' "$tmp/out" && ok || bad "a single --prompt prints only its continuation"
# Sampling: a prompt draws the same whether it runs alone in a slot or beside others, and again;
# --no-cache (the reference path) gives the slots' tokens.
printf 'Once upon a time\nThe cat sat on\nIn the beginning\n' >"$tmp/three.txt"
for bs in 1 3; do
  expect_ok "generate sampled --batch-size $bs" "$FOXEVAL" generate --model "$trained" --prompt-file "$tmp/three.txt" \
    --max-new-tokens 12 --temperature 0.9 --top-k 50 --top-p 0.95 --seed 11 --json --batch-size $bs
  cp "$tmp/out" "$tmp/sampled$bs.jsonl"
done
cmp -s "$tmp/sampled1.jsonl" "$tmp/sampled3.jsonl" && [ "$(wc -l <"$tmp/sampled3.jsonl")" -eq 3 ] && ok ||
  bad "sampling does not depend on --batch-size"
expect_ok "generate sampled --no-cache" "$FOXEVAL" generate --model "$trained" --prompt-file "$tmp/three.txt" \
  --max-new-tokens 12 --temperature 0.9 --top-k 50 --top-p 0.95 --seed 11 --json --no-cache
cmp -s "$tmp/out" "$tmp/sampled3.jsonl" && ok || bad "sampled --no-cache equals the slots"
expect_ok "generate sampled other seed" "$FOXEVAL" generate --model "$trained" --prompt-file "$tmp/three.txt" \
  --max-new-tokens 12 --temperature 0.9 --seed 12 --json
! cmp -s "$tmp/out" "$tmp/sampled3.jsonl" && ok || bad "another seed samples otherwise"

# ---- --help states the defaults ----
expect_ok "loss --help" "$FOXEVAL" loss --help
grep -q "default: auto = this process's GPU" "$tmp/out" && grep -q "default: auto = bfloat16 on a GPU, float32 on the CPU" "$tmp/out" &&
  ok || bad "--help states the device and dtype defaults"
grep -q -- "--batch-size INT:in \[1, 1048576\]=1$" "$tmp/out" && ok || bad "--help states a captured default (=1)"
grep -q -- "--stop-after.*(resume later; default: none)" "$tmp/out" && ok || bad "--help states a sentinel default in words"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
