#!/usr/bin/env bash
# `foxeval loss --text` end to end on the CPU: a folder of .jsonl + .txt and PG-19-like parquet shards
# in a hub cache layout give the same result (the same text, digest and numbers); the tokens are
# cached beside the output and read back on a rerun; --stop-after + --resume equals one run;
# --pack; the table per corpus; refusals (exit 2, naming the field, the file or the flag).
# The numbers against the official recipe and tiktoken are checked in tests/test_loss_text.cpp.
# Usage: tests/cli_loss_text_test.sh path/to/foxeval   (run from the repository root)
PY=.venv/bin/python
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
trained=../shared/fixtures/trained/fox_pro_tiny_pg
fix=tests/fixtures/loss_text
offline_hub "$fix"
common=(--model $trained --seq-len 256 --batch-size 2)

expect_ok "text folder" "$FOXEVAL" loss "${common[@]}" --text $fix/folder --out "$tmp/folder.json"
grep -q "documents skipped	3" "$tmp/out" && ok || bad "folder: 3 documents shorter than 256 tokens skipped"
ls "$tmp"/folder.json.tokens-*.bin >/dev/null 2>&1 && ok || bad "token cache beside the output"
expect_ok "text hub" "$FOXEVAL" loss "${common[@]}" --text hf:deepmind/pg19:test --out "$tmp/hub.json"
grep -q "hub cache" "$tmp/err" && ok || bad "hub: found in the hub cache"
expect_ok "text hub again" "$FOXEVAL" loss "${common[@]}" --text hf:deepmind/pg19:test --out "$tmp/hub.json"
grep -q "read from .*hub.json.tokens-" "$tmp/err" && ok || bad "rerun reads the cached tokens"
"$FOXEVAL" loss "${common[@]}" --text hf:deepmind/pg19:test --out "$tmp/resumed.json" --stop-after 2 >"$tmp/out" 2>"$tmp/err"
[ $? -eq 3 ] && ok || bad "--stop-after exits 3"
expect_ok "resume" "$FOXEVAL" loss "${common[@]}" --text hf:deepmind/pg19:test --out "$tmp/resumed.json" --resume
grep -q "read from" "$tmp/err" && ok || bad "resume reads the cached tokens"
for i in 0 1; do
  expect_ok "shard $i" "$FOXEVAL" loss "${common[@]}" --text hf:deepmind/pg19:test --num-shards 2 --shard-index $i --out "$tmp/part$i.json"
done
expect_ok "merge" "$FOXEVAL" merge --out "$tmp/merged.json" "$tmp/part0.json" "$tmp/part1.json"
expect_ok "pack" "$FOXEVAL" loss "${common[@]}" --text hf:deepmind/pg19:test --pack --out "$tmp/pack.json"
expect_ok "narrativeqa" "$FOXEVAL" loss "${common[@]}" --text hf:deepmind/narrativeqa:test --out "$tmp/nqa.json"
grep -q "3 repeats of a document dropped" "$tmp/err" && ok || bad "narrativeqa: stories read once"
$PY - "$tmp" <<'PYEOF' && ok || bad "results"
import json, sys
d = sys.argv[1]
folder, hub, resumed, pack, nqa, merged = (json.load(open(f"{d}/{n}.json")) for n in ["folder", "hub", "resumed", "pack", "nqa", "merged"])
assert folder["val/loss_per_token"] == hub["val/loss_per_token"] == resumed["val/loss_per_token"] == merged["val/loss_per_token"]
assert merged["documents_skipped"] == 3 and merged["rows"] == 4 and merged["tokens_dropped"] == hub["tokens_dropped"], merged
assert folder["identity"]["data_digest"] == hub["identity"]["data_digest"]
assert hub["windows"] == 4 and hub["rows"] == 4 and hub["documents_skipped"] == 3, hub
assert hub["header"]["task"] == "loss" and hub["identity"]["text"]["source"]["dataset"] == "deepmind/pg19"
assert pack["identity"]["text"]["pack"] is True and pack["rows"] == 7 and pack["documents_skipped"] == 0, pack
assert nqa["windows"] == 2 and nqa["identity"]["text"]["source"]["field"] == "document.text", nqa["identity"]
PYEOF
expect_ok "table per corpus" "$FOXEVAL" table "$tmp/hub.json" "$tmp/nqa.json"
grep -q "Loss on deepmind/pg19:test" "$tmp/out" && grep -q "Loss on deepmind/narrativeqa:test" "$tmp/out" && ok || bad "a table per corpus"
expect_ok "plot" "$FOXEVAL" plot loss "$tmp/hub.json" "$tmp/nqa.json" --label PG-19 --label NarrativeQA --train-length 128 -o "$tmp/l.svg"
grep -q 'stroke-dasharray="6 4"' "$tmp/l.svg" && grep -q "training length 128" "$tmp/l.svg" && ok || bad "plot marks the training length"

expect_error "no field" "has no field 'body'" "$FOXEVAL" loss "${common[@]}" --text hf:deepmind/pg19:test --text-field body --out "$tmp/x.json"
expect_error "no split" "datasets.load_dataset('deepmind/pg19', split='train')" "$FOXEVAL" loss "${common[@]}" --text hf:deepmind/pg19:train --out "$tmp/x.json"
expect_error "no seq-len" "--text needs --seq-len" "$FOXEVAL" loss --model $trained --text $fix/folder --out "$tmp/x.json"
expect_error "too long" "none of the 7 documents has --seq-len 4096 tokens" "$FOXEVAL" loss --model $trained --seq-len 4096 --text $fix/folder --out "$tmp/x.json"
expect_error "both" "excludes" "$FOXEVAL" loss "${common[@]}" --text $fix/folder --data tests/fixtures/loss/tokens.npy --out "$tmp/x.json"
expect_error "neither" "--data or --text" "$FOXEVAL" loss "${common[@]}" --out "$tmp/x.json"
expect_error "pack without text" "--pack requires --text" "$FOXEVAL" loss "${common[@]}" --data tests/fixtures/loss/tokens.npy --pack --out "$tmp/x.json"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
