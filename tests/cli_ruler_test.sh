#!/usr/bin/env bash
# `foxeval ruler samples` end to end: the eight NIAH tasks, ruler_vt and ruler_cwe at 1024/4096 tokens
# equal lm-eval 0.4.13's docs (tests/fixtures/ruler/{niah,vt,cwe}_goldens.jsonl, made by lm-eval's own generator on the same
# synthetic essays, word lists and punkt_tab: tests/tools/ruler_goldens.py), a task subset keeps the
# group's stream, and every missing piece of data exits 2 naming where it looked.
# Usage: tests/cli_ruler_test.sh path/to/foxeval   (run from the repository root)
PY=.venv/bin/python
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
F=tests/fixtures/ruler
data=(--haystack $F/haystack --words $F/wonderwords --punkt $F/nltk_data/tokenizers/punkt_tab/english)

# The docs, field by field; the golden keeps the full input of each index 0 and the SHA-256 of all.
compare() {  # compare SAMPLES.jsonl [FIRST_TASK]: the samples equal the goldens from FIRST_TASK's first line on
  $PY - "$1" $F/niah_goldens.jsonl "${2:-}" <<'PYEOF'
import hashlib, json, sys
got = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
want = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
for more in ["vt_goldens", "cwe_goldens"]:
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

expect_ok "samples: 8 NIAH tasks + ruler_vt + ruler_cwe x 1024/4096" "$FOXEVAL" ruler samples "${data[@]}" --lengths 1024,4096 --out "$tmp/all.jsonl"
compare "$tmp/all.jsonl" && ok || bad "the eight NIAH tasks, ruler_vt and ruler_cwe equal lm-eval's docs"
grep -q "ruler_cwe           4096 tokens: 500 docs" "$tmp/err" && ok || bad "per task and length counts on stderr"

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
expect_exit2 "essays needed" "--haystack: the essay tasks need the essays" \
  "$FOXEVAL" ruler samples --words $F/wonderwords --tasks niah_single_2 --out "$tmp/bad.jsonl"
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

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
