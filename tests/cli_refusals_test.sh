#!/usr/bin/env bash
# Refusals that say the way out, as a user meets them: `--resume` of a journal or state made with
# other settings names what differs and what to do (rerun with them, delete the file, or another
# --out); `check` of the same tokens read from zarr and from .npy says why it counts as other data
# and how to compare anyway.
# Usage: tests/cli_refusals_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
fox=tests/fixtures/official/fox_pro

# ---- a state file made with other settings (loss: the runner's reducer mode)
L=(loss --model $fox --data data/default/tokens.npy --bos-id 0 --seq-len 256 --batch-size 1)
"$FOXEVAL" "${L[@]}" --out "$tmp/l.json" --stop-after 2 >/dev/null 2>&1
[ $? -eq 3 ] && [ -f "$tmp/l.json.state.json" ] && ok || bad "--stop-after 2 leaves a state"
expect_error "resume with another --bos-id" "bos_id" "$FOXEVAL" loss --model $fox --data data/default/tokens.npy --bos-id 1 --seq-len 256 --batch-size 1 --out "$tmp/l.json" --resume
grep -qF "refusing to resume" "$tmp/err" && grep -qF "To continue it, rerun with the settings it was made with; to start this run afresh, delete $tmp/l.json.state.json or give another --out" "$tmp/err" \
  && ok || { bad "the refused --resume says what to do"; cat "$tmp/err" >&2; }
expect_error "no --resume" "pass --resume to continue it, or delete it" "$FOXEVAL" "${L[@]}" --out "$tmp/l.json"

# ---- a journal made with other settings (niah: the runner's record mode)
model=../shared/fixtures/trained/fox_pro_tiny_pg
hay=../shared/data/PaulGrahamEssays
if [ -d $model ] && [ -d $hay ]; then
  N=(niah run --model $model --haystack $hay --lengths 300 --depths 0,50,100 --device cpu)
  "$FOXEVAL" "${N[@]}" --max-new-tokens 4 --out "$tmp/n.json" --stop-after 1 >/dev/null 2>&1
  [ $? -eq 3 ] && ok || bad "niah --stop-after 1 exits 3"
  expect_error "niah: resume with another --max-new-tokens" "max_new_tokens" "$FOXEVAL" "${N[@]}" --max-new-tokens 5 \
    --out "$tmp/n.json" --resume
  grep -qF "delete $tmp/n.json.journal.jsonl or give another --out" "$tmp/err" && ok || { bad "niah: the way out"; cat "$tmp/err" >&2; }

  # ---- check: the same tokens from zarr and from .npy
  Z=(loss --model $model --bos-id 50256)
  expect_ok "loss from zarr" "$FOXEVAL" "${Z[@]}" --data tests/fixtures/zarr/u2_lz4_shuffle.zarr --out "$tmp/z.json"
  expect_ok "loss from .npy" "$FOXEVAL" "${Z[@]}" --data tests/fixtures/zarr/u2_lz4_shuffle.npy --out "$tmp/y.json"
  "$FOXEVAL" check "$tmp/z.json" --baseline "$tmp/y.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ $rc -eq 2 ] && grep -qF "the baseline read npy data while the result read zarr: a data digest covers the files as stored" "$tmp/err" \
    && grep -qF "If both hold the same tokens, compare with --ignore-settings" "$tmp/err" && ok \
    || { bad "check: zarr vs .npy says why (exit $rc)"; cat "$tmp/err" >&2; }
  expect_ok "check --ignore-settings" "$FOXEVAL" check "$tmp/z.json" --baseline "$tmp/y.json" --ignore-settings
  grep -q ', 0 out of tolerance' "$tmp/out" && ok || { bad "zarr and .npy: the same losses"; cat "$tmp/out" >&2; }
  # Other data in the same format gets no such note.
  expect_ok "loss from other zarr" "$FOXEVAL" "${Z[@]}" --data tests/fixtures/zarr/u2_zlib.zarr --out "$tmp/w.json"
  "$FOXEVAL" check "$tmp/w.json" --baseline "$tmp/z.json" >"$tmp/out" 2>"$tmp/err"
  grep -q "other data" "$tmp/err" && ! grep -q "stored both ways" "$tmp/err" && ok || { bad "zarr vs zarr: other data, no format note"; cat "$tmp/err" >&2; }
else
  echo "note: $model or $hay is missing; the niah and check refusals are not tested" >&2
fi

echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]
