#!/usr/bin/env bash
# `foxeval longbench` end to end on the tiny trained model (CPU, seconds): prompts equal the Python
# rendition of pred.py, a stopped + resumed run and a 2-shard run merged equal one run, the official
# files score back to the same result.json, and bad input names file, line and field.
# Usage: tests/cli_longbench_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
# The same official files in two folders (the predictions and result.json, byte for byte).
same_official() {
  local a="$1" b="$2" f
  for f in qasper.jsonl trec.jsonl lcc.jsonl result.json qasper.jsonl.done trec.jsonl.done lcc.jsonl.done; do
    cmp -s "$a/$f" "$b/$f" || { echo "differs: $f" >&2; return 1; }
  done
}
fixtures=tests/fixtures/longbench
data=$fixtures/data
model=../shared/fixtures/trained/fox_pro_tiny_pg
tasks=qasper,trec,lcc

# ---- prompts: the ids of every record equal the Python rendition's (tests/tools/longbench_pred_reference.py)
all=qasper,multifieldqa_en,multifieldqa_zh,trec,samsum,lcc,repobench-p,gov_report
expect_ok "prompts" "$FOXEVAL" longbench prompts --data $data --tasks $all --max-length 512 --out "$tmp/prompts.jsonl"
ids() { sed 's/ //g' "$1" | grep -o '"input_ids":\[[0-9,]*\]'; }
cmp -s <(ids "$tmp/prompts.jsonl") <(ids $fixtures/prompts_512.jsonl) && [ "$(wc -l <"$tmp/prompts.jsonl")" -eq 24 ] \
  && ok || bad "prompts equal pred.py's (prompts_512.jsonl)"
head -1 "$tmp/prompts.jsonl" | grep -q '^{"task":"qasper","index":0,"_id":"qasper-0000-' && ok || bad "prompts line fields"

if [ ! -d $model ]; then
  echo "skipping the run tests: $model is missing" >&2
  echo "$pass passed, $fail failed"; [ $fail -eq 0 ]; exit
fi
run_on() { local d="$1"; shift; "$FOXEVAL" longbench run --model $model --data "$d" --tasks $tasks --max-length 512 --max-new-tokens 8 "$@"; }
run=(longbench run --model $model --data $data --tasks $tasks --max-length 512 --max-new-tokens 8)

# ---- one uninterrupted run
expect_ok "run" "$FOXEVAL" "${run[@]}" --out "$tmp/full"
for f in qasper trec lcc; do [ -f "$tmp/full/$f.jsonl.done" ] && [ "$(wc -l <"$tmp/full/$f.jsonl")" -eq 3 ] || bad "$f.jsonl has 3 lines and a .done"; done
ok
head -1 "$tmp/full/trec.jsonl" | grep -q '^{"pred": ".*", "answers": \[".*"\], "all_classes": \["Abbreviation", "Entity", "Location"\], "length": [0-9]*}$' \
  && ok || bad "pred line in pred.py's format"
head -1 "$tmp/full/result.json" | grep -qx '{' && grep -qE '^    "trec": [0-9.]+,?$' "$tmp/full/result.json" && ok || bad "result.json as eval.py (indent 4)"
grep -q '"pred"' "$tmp/full/run.json" && ! [ -e "$tmp/full/run.json.journal.jsonl" ] && ok || bad "run.json written, journal removed"

# ---- stopped part-way (exit 3, journal kept), then --resume: the same files
"$FOXEVAL" "${run[@]}" --out "$tmp/resumed" --stop-after 4 >/dev/null 2>&1
[ $? -eq 3 ] && [ -f "$tmp/resumed/run.json.journal.jsonl" ] && [ ! -e "$tmp/resumed/result.json" ] && ok || bad "--stop-after exits 3 with the journal"
expect_error "rerun without --resume" "--resume" "$FOXEVAL" "${run[@]}" --out "$tmp/resumed"
expect_error "resume with other settings" "max_new_tokens" "$FOXEVAL" longbench run --model $model --data $data --tasks $tasks \
  --max-length 512 --max-new-tokens 9 --out "$tmp/resumed" --resume
expect_ok "resume" "$FOXEVAL" "${run[@]}" --out "$tmp/resumed" --resume
same_official "$tmp/full" "$tmp/resumed" && ok || bad "stopped + resumed equals one run"

# ---- 2 shards, merged, exported: the same files
expect_ok "shard 0" "$FOXEVAL" "${run[@]}" --out "$tmp/s0" --num-shards 2 --shard-index 0
expect_ok "shard 1" env RANK=1 WORLD_SIZE=2 "$FOXEVAL" "${run[@]}" --out "$tmp/s1"
[ ! -e "$tmp/s0/result.json" ] && ok || bad "a shard writes no result.json"
expect_ok "merge" "$FOXEVAL" merge --out "$tmp/merged.json" "$tmp/s0/run.json" "$tmp/s1/run.json"
expect_ok "export" "$FOXEVAL" longbench export "$tmp/merged.json" --out "$tmp/merged"
same_official "$tmp/full" "$tmp/merged" && ok || bad "2 shards merged equal one run"
expect_error "export of a part" "merge" "$FOXEVAL" longbench export "$tmp/s0/run.json" --out "$tmp/x"

# ---- score: the official layout scores back to the same result.json
expect_ok "score" "$FOXEVAL" longbench score "$tmp/full" --out "$tmp/scored.json"
cmp -s "$tmp/scored.json" "$tmp/full/result.json" && ok || bad "score equals the run's result.json"
expect_ok "score --e" "$FOXEVAL" longbench score "$tmp/full" --e
grep -q '"0-4k"' "$tmp/out" && ok || bad "score --e prints buckets"

# ---- bad input names the file, line and field
mkdir -p "$tmp/bad"
cp $data/qasper.jsonl $data/lcc.jsonl "$tmp/bad/"
{ head -1 $data/trec.jsonl; echo '{"input": "q", "context": '; } >"$tmp/bad/trec.jsonl"
expect_error "malformed line" "trec.jsonl line 2" run_on "$tmp/bad" --out "$tmp/x"
{ head -2 $data/trec.jsonl; head -1 $data/trec.jsonl | sed 's/"answers": /"answerz": /'; } >"$tmp/bad/trec.jsonl"
expect_error "missing field" "trec.jsonl line 3: field 'answers' is missing" run_on "$tmp/bad" --out "$tmp/x"
expect_error "missing file" "trec_e.jsonl" "$FOXEVAL" longbench prompts --data "$tmp/bad" --tasks trec --e --out "$tmp/x.jsonl"
expect_error "unknown task" "'nope' is not a task" "$FOXEVAL" longbench prompts --data $data --tasks trec,nope --out "$tmp/x.jsonl"
mkdir -p "$tmp/cfg" && echo '{"trec": "{context} {question}"}' >"$tmp/cfg/dataset2prompt.json" && echo '{"trec": 4}' >"$tmp/cfg/dataset2maxlen.json"
expect_error "template field" "field 'question' is not in the record" "$FOXEVAL" longbench prompts --data $data --tasks trec \
  --config "$tmp/cfg" --out "$tmp/x.jsonl"

# exit 2 and a clean message for each (issue: hostile input), nothing written
expect_code() { local want="$1" name="$2"; shift 2; "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  [ $rc -eq "$want" ] && ! grep -q "terminate called\|Exception raised from" "$tmp/err" && ok || { bad "$name (exit $rc, want $want)"; cat "$tmp/err" >&2; }; }
expect_code 2 "--limit 0" run_on $data --out "$tmp/lim0" --limit 0
[ ! -e "$tmp/lim0" ] && ok || bad "--limit 0 wrote nothing"
expect_code 2 "--max-new-tokens -3" "$FOXEVAL" longbench run --model $model --data $data --tasks trec --max-new-tokens -3 --out "$tmp/mnt"
mkdir -p "$tmp/empty" && : >"$tmp/empty/trec.jsonl"
expect_error "empty task file" "trec.jsonl: no records" "$FOXEVAL" longbench prompts --data "$tmp/empty" --tasks trec --out "$tmp/x.jsonl"
# a config whose task name climbs out of --data: refused before any file is read
mkdir -p "$tmp/cfg2" && echo '{"../../x": "{context}"}' >"$tmp/cfg2/dataset2prompt.json" && echo '{"../../x": 4}' >"$tmp/cfg2/dataset2maxlen.json"
expect_error "config task name climbing out" "cannot name a file" "$FOXEVAL" longbench prompts --data $data --tasks ../../x \
  --config "$tmp/cfg2" --out "$tmp/x.jsonl"
# a merged result whose task name climbs out of --out
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); r["tasks"] = ["../../EVIL"]
r["predictions"] = {"../../EVIL": r["predictions"]["qasper"]}; json.dump(r, open(sys.argv[2], "w"))' "$tmp/merged.json" "$tmp/evil.json"
grep -q 'EVIL' "$tmp/evil.json" && ok || bad "evil result made"
mkdir -p "$tmp/ev/a/b"
expect_error "export of a climbing task name" "cannot name a file" "$FOXEVAL" longbench export "$tmp/evil.json" --out "$tmp/ev/a/b/out"
[ -z "$(find "$tmp/ev" -type f)" ] && ok || bad "nothing written by the refused export"

# ---- LongBench's released data.zip, read in place: the same prompts as the folder
python3 - "$data" "$tmp/data.zip" <<'PY'
import os, sys, zipfile
src, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for name in sorted(os.listdir(src)):
        z.write(os.path.join(src, name), "data/" + name)
PY
expect_ok "prompts from data.zip" "$FOXEVAL" longbench prompts --data "$tmp/data.zip" --tasks $all --max-length 512 --out "$tmp/zprompts.jsonl"
cmp -s <(ids "$tmp/zprompts.jsonl") <(ids $fixtures/prompts_512.jsonl) && ok || bad "data.zip prompts equal the folder's"
expect_error "data.zip without the task" "the archive has no lsht.jsonl" "$FOXEVAL" longbench prompts --data "$tmp/data.zip" --tasks lsht --out "$tmp/x.jsonl"
head -c 100 "$tmp/data.zip" >"$tmp/broken.zip"
expect_error "a broken zip" "broken.zip: cannot open as a zip archive" "$FOXEVAL" longbench prompts --data "$tmp/broken.zip" --tasks trec --out "$tmp/x.jsonl"

# ---- numeric answers (passage_count's released files) and a Chinese task: run, carried, scored
mkdir -p "$tmp/num"
python3 - $data/trec.jsonl "$tmp/num/passage_count.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
with open(sys.argv[2], "w", encoding="utf-8") as f:
    for i, r in enumerate(rows):
        r.update(dataset="passage_count", all_classes=None, answers=[[3, 7.5, 12][i % 3]])
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
PY
cp $data/multifieldqa_zh.jsonl "$tmp/num/"
expect_ok "run numeric + zh" "$FOXEVAL" longbench run --model $model --data "$tmp/num" --tasks passage_count,multifieldqa_zh \
  --max-length 512 --max-new-tokens 4 --out "$tmp/numrun"
head -1 "$tmp/numrun/passage_count.jsonl" | grep -q '"answers": \[3\], "all_classes": null' && ok || bad "numeric answers carried unchanged"
sed -n 2p "$tmp/numrun/passage_count.jsonl" | grep -q '"answers": \[7.5\]' && ok || bad "float answers carried unchanged"
grep -qE '^    "multifieldqa_zh": [0-9.]+' "$tmp/numrun/result.json" && grep -qE '^    "passage_count": [0-9.]+' "$tmp/numrun/result.json" \
  && ok || bad "Chinese and numeric tasks scored"
expect_ok "score numeric + zh" "$FOXEVAL" longbench score "$tmp/numrun" --out "$tmp/numscored.json"
cmp -s "$tmp/numscored.json" "$tmp/numrun/result.json" && ok || bad "score equals the run (numeric + zh)"

# ---- score what can be scored: an unknown task and a classification task without all_classes are named
cp -r "$tmp/full" "$tmp/partial"
echo '{"pred": "x", "answers": ["x"], "all_classes": null, "length": 1}' >"$tmp/partial/mytask.jsonl"
: >"$tmp/partial/mytask.jsonl.done"
sed '$ s/"all_classes": \[[^]]*\]/"all_classes": null/' "$tmp/full/trec.jsonl" >"$tmp/partial/trec.jsonl"
"$FOXEVAL" longbench score "$tmp/partial" --out "$tmp/partial.json" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && ok || bad "score with unscorable files exits 2"
grep -q 'mytask.jsonl not scored: .*no metric for dataset "mytask"' "$tmp/err" && ok || bad "unknown task named"
grep -q 'trec.jsonl not scored: .*all_classes": null' "$tmp/err" && ok || bad "all_classes null named"
grep -q '"qasper"' "$tmp/partial.json" && grep -q '"lcc"' "$tmp/partial.json" && ! grep -q '"trec"' "$tmp/partial.json" \
  && ok || bad "the scorable tasks still written"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
