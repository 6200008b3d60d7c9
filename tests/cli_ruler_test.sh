#!/usr/bin/env bash
# `foxeval ruler samples` end to end: the group's 13 tasks at 1024/4096 tokens equal lm-eval 0.4.13's
# docs (tests/fixtures/ruler/{niah,vt,cwe,fwe,qa}_goldens.jsonl, made by lm-eval's own generator on the same
# synthetic essays, word lists, punkt_tab and SQuAD/HotpotQA files: tests/tools/ruler_goldens.py), a task subset keeps the
# group's stream, and every missing piece of data exits 2 naming where it looked; `ruler score`
# aggregates given predictions per task, length, category and the group.
# Usage: tests/cli_ruler_test.sh path/to/foxeval   (run from the repository root)
PY=.venv/bin/python
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
F=tests/fixtures/ruler
data=(--haystack $F/haystack --words $F/wonderwords --punkt $F/nltk_data/tokenizers/punkt_tab/english
      --squad $F/qa --hotpot $F/qa/hotpot_dev_distractor_v1.json)

# The docs, field by field; the golden keeps the full input of each index 0 and the SHA-256 of all.
compare() {  # compare SAMPLES.jsonl [FIRST_TASK]: the samples equal the goldens from FIRST_TASK's first line on
  $PY - "$1" $F/niah_goldens.jsonl "${2:-}" <<'PYEOF'
import hashlib, json, sys
got = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
want = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
for more in ["vt_goldens", "cwe_goldens", "fwe_goldens", "qa_goldens"]:
    want += [json.loads(l) for l in open(sys.argv[2].replace("niah_goldens", more), encoding="utf-8")]
if sys.argv[3]:
    want = [w for w in want if w["task"] == sys.argv[3]]
assert len(got) == len(want) and len(got) > 0, (len(got), len(want))
doc_ids = {}
for g, w in zip(got, want):
    d, wd = g["doc"], w["doc"]
    assert g["task"] == w["task"], (g["task"], w["task"])
    assert g["doc_id"] == doc_ids.get(g["task"], 0); doc_ids[g["task"]] = g["doc_id"] + 1
    keys = ["index", "input"] + (["input_example"] if g["task"] == "ruler_cwe" else []) + ["outputs", "length", "max_length", "gen_prefix"]
    assert list(d) == keys, list(d)  # lm-eval's doc, its keys in its order
    for k in ["index", "outputs", "length", "max_length", "gen_prefix"]:
        assert d[k] == wd[k], (g["task"], d["index"], k, d[k], wd[k])
    for k in keys[1:-4]:
        assert hashlib.sha256(d[k].encode("utf-8")).hexdigest() == wd[k + "_sha256"], (g["task"], d["index"], k)
        if k in wd:
            assert d[k] == wd[k]
PYEOF
}

expect_ok "samples: the group's 13 tasks x 1024/4096" "$FOXEVAL" ruler samples "${data[@]}" --lengths 1024,4096 --out "$tmp/all.jsonl"
compare "$tmp/all.jsonl" && ok || bad "the 13 tasks equal lm-eval's docs"
grep -q "ruler_cwe           4096 tokens: 500 docs" "$tmp/err" && grep -q "ruler_qa_hotpot     4096 tokens: 500 docs" "$tmp/err" \
  && ok || bad "per task and length counts on stderr"
# The QA tasks alone (built last in the group, their stream differs) read the same files: a folder
# or the file itself.
expect_ok "samples: QA alone" "$FOXEVAL" ruler samples --squad $F/qa/dev-v2.0.json --hotpot $F/qa --tasks ruler_qa_squad,ruler_qa_hotpot --lengths 1024 --out "$tmp/qa.jsonl"
[ "$(wc -l < "$tmp/qa.jsonl")" -eq 1000 ] && ok || bad "QA alone: 500 docs per task"

# Alone, niah_single_1 is the group's first task: the same docs as in the group.
expect_ok "samples: one task" "$FOXEVAL" ruler samples "${data[@]}" --tasks niah_single_1 --lengths 1024,4096 --out "$tmp/one.jsonl"
compare "$tmp/one.jsonl" niah_single_1 && ok || bad "niah_single_1 alone equals its docs in the group"
# A task built second draws from where the first left the stream: alone it differs from the group's.
expect_ok "samples: niah_single_2 alone" "$FOXEVAL" ruler samples "${data[@]}" --tasks niah_single_2 --lengths 1024,4096 --out "$tmp/two.jsonl"
compare "$tmp/two.jsonl" niah_single_2 2>/dev/null && bad "niah_single_2 alone should differ from its docs in the group" || ok

# Bad input: exit 2, naming what is missing and how to get it; no output file.
expect_exit2() {  # NAME TEXT CMD...
  local name="$1" text="$2"; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ $rc -eq 2 ] && grep -qF -- "$text" "$tmp/err" && [ ! -e "$tmp/bad.jsonl" ] && ok || { bad "$name (rc $rc)"; cat "$tmp/err" >&2; }
}
expect_exit2 "unknown task" "--tasks: 'ruler_nope' is not a RULER task" \
  "$FOXEVAL" ruler samples "${data[@]}" --tasks niah_single_1,ruler_nope --out "$tmp/bad.jsonl"
expect_exit2 "essays in no cache" "python -c \"import datasets; datasets.load_dataset('baber/paul_graham_essays', split='train')\"" \
  env HF_HOME="$tmp/hf" HF_HUB_CACHE= HF_DATASETS_CACHE= "$FOXEVAL" ruler samples --words $F/wonderwords --punkt $F/nltk_data/tokenizers/punkt_tab/english --tasks niah_single_2 --out "$tmp/bad.jsonl"
grep -qF "$tmp/hf" "$tmp/err" && ok || bad "the essays error names the caches it looked in"
# The essays from the hub cache (a parquet snapshot as huggingface_hub stores it): the same docs as --haystack.
snap="$tmp/hf/hub/datasets--baber--paul_graham_essays/snapshots/0123abc"
mkdir -p "$snap/data" "$tmp/hf/hub/datasets--baber--paul_graham_essays/refs"
printf 0123abc > "$tmp/hf/hub/datasets--baber--paul_graham_essays/refs/main"
$PY - $F/haystack "$snap/data/train-00000-of-00001.parquet" <<'PYEOF'
import glob, os, sys
import pyarrow as pa, pyarrow.parquet as pq
texts = [open(p, encoding="utf-8").read() for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.txt")))]
pq.write_table(pa.table({"text": texts}), sys.argv[2])
PYEOF
expect_ok "samples: essays from the hub cache" env HF_HOME="$tmp/hf" HF_HUB_CACHE= HF_DATASETS_CACHE= "$FOXEVAL" ruler samples \
  --words $F/wonderwords --punkt $F/nltk_data/tokenizers/punkt_tab/english --tasks niah_single_1,niah_single_2 --lengths 1024,4096 --out "$tmp/hub.jsonl"
head -n 2000 "$tmp/all.jsonl" | cmp -s - "$tmp/hub.jsonl" && ok || bad "essays from the hub cache give the --haystack docs"
expect_exit2 "no SQuAD file" "curl -L -o $tmp/.cache/foxeval/ruler/dev-v2.0.json https://rajpurkar.github.io/SQuAD-explorer/dataset/dev-v2.0.json" \
  env HOME="$tmp" FOXEVAL_RULER_DATA="$tmp/rd" "$FOXEVAL" ruler samples --tasks ruler_qa_squad --out "$tmp/bad.jsonl"
grep -qF "$tmp/rd/dev-v2.0.json" "$tmp/err" && ok || bad "the SQuAD error names where it looked"
expect_exit2 "--hotpot folder without the file" "--hotpot $F/haystack: a folder without hotpot_dev_distractor_v1.json" \
  "$FOXEVAL" ruler samples --hotpot $F/haystack --tasks ruler_qa_hotpot --out "$tmp/bad.jsonl"
echo '{"version": "v1.1", "data": [{"title": "t", "paragraphs": [{"context": "c", "qas": [{"question": "q", "answers": []}]}]}]}' > "$tmp/v1.json"
expect_exit2 "SQuAD v1 file" "data[0].paragraphs[0].qas[0] (a SQuAD v2 file): expected a field 'is_impossible'" \
  "$FOXEVAL" ruler samples --squad "$tmp/v1.json" --tasks ruler_qa_squad --out "$tmp/bad.jsonl"
expect_exit2 "fwe below 32 tokens" "ruler_fwe: length 20 is below 32 tokens" \
  "$FOXEVAL" ruler samples --tasks ruler_fwe --lengths 20 --out "$tmp/bad.jsonl"
expect_exit2 "haystack not a folder" "--haystack $tmp/none: not a folder" \
  "$FOXEVAL" ruler samples --haystack "$tmp/none" --words $F/wonderwords --tasks niah_single_2 --out "$tmp/bad.jsonl"
expect_exit2 "no punkt_tab" "python -m nltk.downloader punkt_tab" \
  env NLTK_DATA="$tmp/nltk" HOME="$tmp" "$FOXEVAL" ruler samples --haystack $F/haystack --words $F/wonderwords --tasks niah_single_2 --out "$tmp/bad.jsonl"
grep -qF "$tmp/nltk/tokenizers/punkt_tab/english" "$tmp/err" && ok || bad "the punkt_tab error names where it looked"
mkdir -p "$tmp/ww"
expect_exit2 "words folder" "expected wonderwords' nounlist.txt" \
  "$FOXEVAL" ruler samples --words "$tmp/ww" --tasks niah_single_1 --out "$tmp/bad.jsonl"
expect_exit2 "bad length" "--lengths: 0 is not a positive token count" \
  "$FOXEVAL" ruler samples --words $F/wonderwords --tasks niah_single_1 --lengths 0 --out "$tmp/bad.jsonl"
expect_exit2 "length too short for any sample" "could not generate any sample at length 100" \
  "$FOXEVAL" ruler samples --words $F/wonderwords --tasks niah_single_1 --lengths 100 --out "$tmp/bad.jsonl"

# ---- score: given predictions, lm-eval's per-doc scores (tests/test_ruler_metrics.cpp checks them
# against lm-eval's functions) aggregated per task, length, category and the group ----
$PY - "$tmp/all.jsonl" "$tmp/pred.jsonl" <<'PYEOF'
import json, sys
with open(sys.argv[2], "w") as f:
    for line in open(sys.argv[1], encoding="utf-8"):
        r = json.loads(line); o = r["doc"]["outputs"]; i = r["doc_id"]
        pred = [" ".join(o), "\x01  " + o[0].upper() + "\n", "nothing here"][i % 3]
        f.write(json.dumps({"task": r["task"], "doc_id": i, "prediction": pred}) + "\n")
PYEOF
expect_ok "score" "$FOXEVAL" ruler score --samples "$tmp/all.jsonl" --predictions "$tmp/pred.jsonl" --out "$tmp/score.json"
grep -q "multi-hop tracing" "$tmp/out" && ok || bad "score prints the category table"
$PY - "$tmp/all.jsonl" "$tmp/pred.jsonl" "$tmp/score.json" <<'PYEOF' && ok || bad "score: per task/length, categories and the ruler mean"
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
preds = {(p["task"], p["doc_id"]): p["prediction"] for p in map(json.loads, open(sys.argv[2]))}
r = json.load(open(sys.argv[3]))
per = {}
for d in docs:
    pred = preds[(d["task"], d["doc_id"])].strip().replace("\x01", "\n").strip().lower()
    o = d["doc"]["outputs"]
    per.setdefault(d["task"], {}).setdefault(str(d["doc"]["max_length"]), []).append(sum(1.0 if x.lower() in pred else 0.0 for x in o) / len(o))
mean = lambda v: sum(v) / len(v)
for t, by_len in per.items():
    for L, v in by_len.items():
        assert r["scores"][t][L] == mean(v), (t, L, r["scores"][t][L], mean(v))
# With one prediction per doc, QA's string_match_part (max over the predictions) is string_match_all.
cats = {"NIAH": [t for t in per if t.startswith("niah_")], "multi-hop tracing": ["ruler_vt"], "aggregation": ["ruler_cwe", "ruler_fwe"],
        "QA": ["ruler_qa_squad", "ruler_qa_hotpot"]}
assert len(per) == 13
for L in ["1024", "4096"]:
    assert r["ruler"][L] == mean([mean(per[t][L]) for t in per]), L
    for c, ts in cats.items():
        assert r["categories"][L][c] == mean([mean(per[t][L]) for t in ts]), (L, c)
assert r["task"] == "ruler" and r["docs"] == len(docs) and r["settings"]["samples_digest"].startswith("sha256:")
PYEOF
head -n 5 "$tmp/pred.jsonl" > "$tmp/few.jsonl"
expect_exit2 "score: a doc without a prediction" "no prediction for niah_single_1 doc_id 5" \
  "$FOXEVAL" ruler score --samples "$tmp/all.jsonl" --predictions "$tmp/few.jsonl" --out "$tmp/bad.jsonl"
cat "$tmp/pred.jsonl" <(head -n 1 "$tmp/pred.jsonl") > "$tmp/dup.jsonl"
expect_exit2 "score: two predictions for a doc" "a second prediction for niah_single_1 doc_id 0" \
  "$FOXEVAL" ruler score --samples "$tmp/all.jsonl" --predictions "$tmp/dup.jsonl" --out "$tmp/bad.jsonl"
echo '{"task": "niah_single_1", "doc_id": 0}' > "$tmp/nofield.jsonl"
expect_exit2 "score: a prediction without its field" "line 1: missing field 'prediction'" \
  "$FOXEVAL" ruler score --samples "$tmp/all.jsonl" --predictions "$tmp/nofield.jsonl" --out "$tmp/bad.jsonl"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
