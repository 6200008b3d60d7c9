#!/usr/bin/env bash
# Transformer (SWA) (transformer-project_fox with window_size) wherever a family goes, on the CPU
# with the official tiny fixture (W = 32): `info` names it and its window, `inspect gates` records
# the hard window (no decay), `bench prefill` and `bench generate` run
# it (the decoding state's bytes flat past the window), and a window in FoX's own config or a window
# below 1 exit 2 naming the field. The numbers are checked in tests/test_transformer_swa.cpp.
# Usage: tests/cli_swa_test.sh path/to/foxeval   (run from the repository root)
PY=.venv/bin/python
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
swa=tests/fixtures/official/transformer_swa

expect_ok "info" "$FOXEVAL" info --model $swa
grep -q "Transformer (SWA)" "$tmp/out" && grep -q "window_size" "$tmp/out" && ok || bad "info names the family and its window"

expect_ok "inspect gates" "$FOXEVAL" inspect gates --model $swa --data tests/fixtures/loss/tokens.npy --tokens 640 \
  --bos-id 0 --out "$tmp/g.json"
$PY - "$tmp/g.json" <<'PYEOF' && ok || bad "inspect gates records the hard window"
import json, sys
d = json.load(open(sys.argv[1]))["decay"]
assert d["kind"] == "none" and d["window_size"] == 32 and "hard window of W = 32" in d["what"], d
PYEOF

expect_ok "bench prefill" "$FOXEVAL" bench prefill --models swa=$swa --seq-lens 100 --repeats 1 --warmup 0 --device cpu \
  --out "$tmp/p.json"
$PY - "$tmp/p.json" <<'PYEOF' && ok || bad "bench prefill row"
import json, sys
r = json.load(open(sys.argv[1]))["rows"][0]
assert r["family"] == "Transformer (SWA)" and r["seq_len"] == 100 and r["repeats_bit_identical"], r
PYEOF

expect_ok "bench generate" "$FOXEVAL" bench generate --model $swa --device cpu --batch 1 --prompt-len 20,60,200 \
  --new-tokens 4 --bandwidth-gbs 50 --out "$tmp/gen.json"
$PY - "$tmp/gen.json" <<'PYEOF' && ok || bad "bench generate: every request decoded, state flat past the window"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert [x["prompt_len"] for x in rows] == [20, 60, 200], rows
assert all(x["generated_tokens"] == 4 for x in rows), rows
# a ring of 32 positions a layer: the same bytes for a 60- and a 200-token context, fewer for 20
assert rows[1]["state_bytes"] == rows[2]["state_bytes"] > rows[0]["state_bytes"], [x["state_bytes"] for x in rows]
PYEOF

mkdir -p "$tmp/fox" "$tmp/w0"
cp tests/fixtures/official/fox_llama/model.safetensors "$tmp/fox/"
$PY -c "import json,sys; c=json.load(open(sys.argv[1])); c['window_size']=2048; json.dump(c, open(sys.argv[2], 'w'))" \
  tests/fixtures/official/fox_llama/config.json "$tmp/fox/config.json"
expect_error "window in FoX's config" "never applies it" "$FOXEVAL" info --model "$tmp/fox"
"$FOXEVAL" info --model "$tmp/fox" >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "exit 2 for FoX's window"
cp $swa/model.safetensors "$tmp/w0/"
$PY -c "import json,sys; c=json.load(open(sys.argv[1])); c['window_size']=0; json.dump(c, open(sys.argv[2], 'w'))" \
  $swa/config.json "$tmp/w0/config.json"
expect_error "window 0" 'field "window_size" = 0 must be a whole number >= 1' "$FOXEVAL" info --model "$tmp/w0"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
