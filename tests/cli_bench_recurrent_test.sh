#!/usr/bin/env bash
# `foxeval bench recurrent` on the CPU with the tiny official fixtures: the JSON's fields, the
# token ids shared with scripts/bench_recurrent_anchor.py, the anchor columns, and the errors.
# Usage: tests/cli_bench_recurrent_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
fx=tests/fixtures/official
models="mamba2=$fx/mamba2,hgrn2=$fx/hgrn2,delta_net=$fx/delta_net"
# splitmix64_ids(0, 8, 256) of scripts/official_anchor.py (computed there): the same ids on both sides.
ids0='[175,244,79,236,155,234,225,60]'

anchor_json() {  # $1 = method, $2 = first_ids of the mamba2 row
  cat <<EOF
{"kind": "recurrent-anchor", "method": "$1", "gpu": "test", "rows": [
 {"family": "mamba2", "seq_len": 300, "seconds": 2.0, "mean_loss": 5.5, "peak_gpu_memory_bytes": 1073741824,
  "first_ids": $2},
 {"family": "hgrn2", "seq_len": 300, "error": "out of memory: test"}]}
EOF
}
anchor_json timing "$ids0" >"$tmp/anchor.json"

# 300 tokens: past one Mamba-2 chunk (256).
expect_ok "bench recurrent" "$FOXEVAL" bench recurrent --models "$models" --seq-lens 300 --device cpu --dtype float32 \
  --repeats 1 --warmup 0 --anchor "$tmp/anchor.json" --out "$tmp/r.json"
r="$tmp/r.json"
flat="$(tr -d ' \n' <"$r")"
for field in '"kind":"foxeval-bench-recurrent"' '"git_revision":' '"machine":' '"date":' '"loss_tolerance":0.005' \
             '"impl":"kernel"' '"impl":"aten"' '"family":"delta_net"' '"seq_len":300' '"tokens_per_s":' '"mean_loss":'; do
  grep -qF -- "$field" <<<"$flat" && ok || bad "JSON has $field"
done
# 3 families x 2 impls, each with its own mean loss and time
[ "$(grep -o '"impl":"' <<<"$flat" | wc -l)" -eq 6 ] && ok || bad "six rows"
grep -qF "\"first_ids\":$ids0" <<<"$flat" && ok || bad "token ids equal the anchor script's splitmix64"
# the anchor's mamba2 row beside both impls: ratio = 2.0 s / foxeval's seconds, loss compared
[ "$(grep -o '"ratio_anchor_over_foxeval":' <<<"$flat" | wc -l)" -eq 2 ] && ok || bad "ratio on the two mamba2 rows"
[ "$(grep -o '"mean_loss_agrees":' <<<"$flat" | wc -l)" -eq 2 ] && ok || bad "loss agreement on the two mamba2 rows"
grep -qF '"error":"outofmemory:test"' <<<"$flat" && ok || bad "the anchor's error carried on the hgrn2 rows"
grep -q "anchor .*: no row for delta_net at 300" "$tmp/out" && ok || bad "missing anchor rows named"
grep -qE "^mamba2 +300 kernel .*x (agrees|DIFFERS)" "$tmp/out" && ok || bad "table row with the ratio"
# On the CPU both impls are the exact forms: the same loss to the bit.
python_free_equal() {
  local a b
  a="$(grep -oE '"impl":"kernel".{0,400}' <<<"$flat" | head -1 | grep -oE '"mean_loss":[-0-9.e]+' | head -1)"
  b="$(grep -oE '"impl":"aten".{0,400}' <<<"$flat" | head -1 | grep -oE '"mean_loss":[-0-9.e]+' | head -1)"
  [ -n "$a" ] && [ "$a" = "$b" ]
}
python_free_equal && ok || bad "kernel and aten rows equal on the CPU"

# A seed changes the ids; the anchor's first_ids then refuse the comparison.
expect_error "anchor made from other ids" "first_ids differ" "$FOXEVAL" bench recurrent --models "mamba2=$fx/mamba2" \
  --seq-lens 300 --device cpu --dtype float32 --repeats 1 --warmup 0 --anchor "$tmp/anchor.json" --seed 7 --out "$tmp/x.json"
anchor_json check "$ids0" >"$tmp/check.json"
expect_error "anchor from --check" 'not "timing"' "$FOXEVAL" bench recurrent --models "mamba2=$fx/mamba2" --seq-lens 300 \
  --device cpu --anchor "$tmp/check.json" --out "$tmp/x.json"
echo '{"rows": []}' >"$tmp/other.json"
expect_error "not an anchor" "not a scripts/bench_recurrent_anchor.py result" "$FOXEVAL" bench recurrent \
  --models "mamba2=$fx/mamba2" --device cpu --anchor "$tmp/other.json" --out "$tmp/x.json"
expect_error "missing anchor" "no such file" "$FOXEVAL" bench recurrent --models "mamba2=$fx/mamba2" --device cpu \
  --anchor "$tmp/nope.json" --out "$tmp/x.json"
expect_error "unknown family" "--models" "$FOXEVAL" bench recurrent --models "fox=$fx/fox_pro" --device cpu --out "$tmp/x.json"
expect_error "family/checkpoint mismatch" 'expected "hgrn2-project_fox"' "$FOXEVAL" bench recurrent \
  --models "hgrn2=$fx/mamba2" --device cpu --out "$tmp/x.json"
expect_error "bad --impls" "--impls" "$FOXEVAL" bench recurrent --models "mamba2=$fx/mamba2" --impls triton --device cpu \
  --out "$tmp/x.json"
expect_error "bad --seq-lens" "--seq-lens" "$FOXEVAL" bench recurrent --models "mamba2=$fx/mamba2" --seq-lens 1 \
  --device cpu --out "$tmp/x.json"
expect_error "bad --repeats" "--repeats" "$FOXEVAL" bench recurrent --models "mamba2=$fx/mamba2" --repeats 0 \
  --device cpu --out "$tmp/x.json"
[ ! -e "$tmp/x.json" ] && ok || bad "no result written by a refused run"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
