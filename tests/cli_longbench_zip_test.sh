#!/usr/bin/env bash
# `foxeval longbench run --data LongBench/data.zip`, as a user types it with the release's zip and
# with zips made by `zip -r`, `zip -D` (no folder entries) and `zip -0` (stored): predictions equal
# the run from the unzipped folder, line for line, and the result's data digest is the folder's
# (a member is digested by its name and bytes, like its unzipped file). Also with --e.
# Usage: tests/cli_longbench_zip_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
model=../shared/fixtures/trained/fox_pro_tiny_pg
if [ ! -d $model ]; then echo "SKIP: $model is missing"; exit 0; fi
if ! command -v zip >/dev/null; then echo "SKIP: the zip tool is missing (scripts/test.sh installs it)"; exit 0; fi
tasks=qasper,trec,lcc

# LongBench's layout: data/{task}.jsonl, and LongBench-E's data/{task}_e.jsonl (here the same records).
mkdir -p "$tmp/LongBench/data"
for t in qasper trec lcc; do
  cp tests/fixtures/longbench/data/$t.jsonl "$tmp/LongBench/data/"
  cp tests/fixtures/longbench/data/$t.jsonl "$tmp/LongBench/data/${t}_e.jsonl"
done
(cd "$tmp/LongBench" && zip -qr data.zip data && zip -qrD data-D.zip data && zip -qr0 data-0.zip data)

run() { "$FOXEVAL" longbench run --model $model --tasks $tasks --max-length 512 --max-new-tokens 6 "$@"; }
# The same predictions (every task's file, line for line), result.json and data digest.
# (pred.py names them {task}.jsonl also for LongBench-E.)
same_run() {
  local a="$1" b="$2" t
  for t in qasper trec lcc; do cmp -s "$a/$t.jsonl" "$b/$t.jsonl" || { echo "differs: $t.jsonl" >&2; return 1; }; done
  cmp -s "$a/result.json" "$b/result.json" || { echo "differs: result.json" >&2; return 1; }
  [ "$(digest "$a/run.json")" = "$(digest "$b/run.json")" ] || { echo "differs: the data digest" >&2; return 1; }
}
digest() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["header"]["settings"]["data"])' "$1"; }

expect_ok "run from the folder" run --data "$tmp/LongBench/data" --out "$tmp/folder"
[ "$(wc -l <"$tmp/folder/trec.jsonl")" -eq 3 ] && ok || bad "the folder run predicted 3 trec records"
for z in data data-D data-0; do
  expect_ok "run from $z.zip" run --data "$tmp/LongBench/$z.zip" --out "$tmp/$z"
  same_run "$tmp/folder" "$tmp/$z" && ok || bad "$z.zip: the same predictions as the folder"
done
expect_ok "run --e from the folder" run --e --data "$tmp/LongBench/data" --out "$tmp/folder-e"
expect_ok "run --e from data.zip" run --e --data "$tmp/LongBench/data.zip" --out "$tmp/zip-e"
same_run "$tmp/folder-e" "$tmp/zip-e" && ok || bad "--e: data.zip gives the folder's predictions"
grep -q '"0-4k"' "$tmp/zip-e/result.json" && ok || bad "--e from data.zip scores by length"

# The same identity: a run begun on the folder resumes from the zip.
run --data "$tmp/LongBench/data" --out "$tmp/mixed" --stop-after 4 >/dev/null 2>&1
[ $? -eq 3 ] && ok || bad "--stop-after 4 exits 3"
expect_ok "resume from data.zip" run --data "$tmp/LongBench/data.zip" --out "$tmp/mixed" --resume
same_run "$tmp/folder" "$tmp/mixed" && ok || bad "folder run resumed from data.zip equals one run"

# Errors name the archive and the member.
printf '{"input": "q"}\n' >"$tmp/LongBench/data/trec.jsonl"
(cd "$tmp/LongBench" && zip -qr bad.zip data)
expect_error "bad record in a member" "bad.zip:data/trec.jsonl line 1: field 'context' is missing" \
  run --data "$tmp/LongBench/bad.zip" --out "$tmp/bad"

echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]
