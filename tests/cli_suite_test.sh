#!/usr/bin/env bash
# `foxeval suite run --preset smoke` (two GPT-2-vocabulary models on every suite task, the official
# byte-level fixture on loss and inspect, the bundled and test data) end to end on the CPU: the folder's layout; held against the committed baseline by `suite check`
# (results/baseline/suite-smoke, remade by scripts/update_baselines.sh); each result equal to what
# the task's own command writes with the same settings; stopped and resumed == one run; two
# processes (--nproc-per-node 2) == one; --resume refuses a finished result made with other settings;
# compare pairs two suite folders; bad suite files refused naming the file, line and field.
# Usage: tests/cli_suite_test.sh path/to/foxeval   (run from the repository root)
PY=.venv/bin/python
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
shared=../shared
[ -d "$shared/fixtures/trained/fox_pro_tiny_pg" ] || { echo "cli_suite_test: $shared is missing" >&2; exit 1; }
export OMP_NUM_THREADS=1  # two busy cores; the bits do not depend on it
# The smoke suite's second GPT-2-vocabulary model: tiny, random, seeded (the same bytes every time).
$PY tests/tools/make_random_gpt2_model.py .scratch/fox_llama_gpt2_random || { echo "cli_suite_test: the random model" >&2; exit 1; }
results() { (cd "$1" && find . -name '*.json' ! -name suite.json | sort); }
# A result without what says when and how long: the numbers, the identity and the settings.
core() { $PY -c 'import json,sys
r=json.load(open(sys.argv[1])); h=r.pop("header",{}); r.pop("this_run",None)
print(json.dumps([r, h.get("settings"), h.get("task")], sort_keys=True))' "$1"; }
# exact A B: every metric of A equals B's to the bit, the settings the same (models and data by
# content; timings and where files lie are not compared: tasks/results/check.h).
exact() { "$FOXEVAL" check "$1" --baseline "$2" --atol 0 --rtol 0 >/dev/null 2>&1; }
same_folders() {  # same_folders A B: every result of A equals B's (core)
  local f
  [ "$(results "$1")" = "$(results "$2")" ] || { echo "results differ: $(results "$1") vs $(results "$2")" >&2; return 1; }
  for f in $(results "$1"); do exact "$1/$f" "$2/$f" || { echo "differs: $f" >&2; return 1; }; done
}

# ---- one run of the preset ----
expect_ok "suite run --preset smoke" "$FOXEVAL" suite run --preset smoke -o "$tmp/a"
cp "$tmp/err" "$tmp/a.err"
for f in suite.json tables.md tables.tex tables.csv report.html fox_pro_official/loss.json fox_pro_official/inspect-gates.json; do
  [ -s "$tmp/a/$f" ] && ok || bad "suite run wrote $f"
done
for m in fox_pro_trained fox_llama_random; do  # two models, every task
  for f in loss.json niah.json longbench/run.json lm-eval.json babilong.json ruler.json inspect-gates.json; do
    [ -s "$tmp/a/$m/$f" ] && ok || bad "suite run wrote $m/$f"
  done
done
grep -q "^\[suite\] 16/16 fox_llama_random/inspect-gates" "$tmp/a.err" && grep -q "^\[suite\] 16 tasks of 3 models" "$tmp/a.err" \
  && ok || bad "progress per task and overall on stderr"
[ "$(grep -c '^\[foxeval\] model ' "$tmp/a.err")" -eq 3 ] && ok || bad "each model loaded once (one announcement per model)"
$PY - "$tmp/a/suite.json" <<'PYEOF' && ok || bad "suite.json: models, digests, tasks, timings"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["kind"] == "foxeval-suite" and s["header"]["task"] == "suite"
assert [m["label"] for m in s["models"]] == ["fox_pro_official", "fox_pro_trained", "fox_llama_random"]
assert all(m["model_digest"].startswith("sha256:") for m in s["models"])
assert len(s["tasks"]) == 16 and all(t["status"] == "ran" and t["wall_s"] >= 0 for t in s["tasks"]) and s["complete"]
# What --resume checks a finished task by: the entry's settings, data by content, cap, numerics, model.
i = s["tasks"][1]["identity"]
assert s["tasks"][1]["name"] == "inspect-gates" and i["data"].startswith("sha256:") and i["tokens"] == 1024, i
assert i["cap"] == 0 and i["dtype"] == "float32" and i["device_type"] == "cpu" and i["model_digest"] == s["models"][0]["model_digest"]
PYEOF
grep -qF "fox\\_pro\\_trained" "$tmp/a/tables.md" && grep -qF "| *n* |" "$tmp/a/tables.md" && ok || bad "tables.md: a row per model, n"

# ---- against the committed baseline ----
expect_ok "suite check against the baseline" "$FOXEVAL" suite check "$tmp/a" --baseline results/baseline/suite-smoke
grep -q "16 results" "$tmp/out" && ok || bad "suite check: one summary over the 16 results"
cp -r "$tmp/a" "$tmp/moved"
$PY - "$tmp/moved/fox_pro_trained/lm-eval.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1])); r["results"]["piqa"]["acc,none"] += 0.5; json.dump(r, open(sys.argv[1], "w"))
PYEOF
"$FOXEVAL" suite check "$tmp/moved" --baseline "$tmp/a" >"$tmp/out" 2>&1; [ $? -eq 1 ] && grep -q "results/piqa/acc,none" "$tmp/out" \
  && ok || bad "suite check: a moved metric exits 1, named"
rm "$tmp/moved/fox_pro_trained/niah.json"
"$FOXEVAL" suite check "$tmp/moved" --baseline "$tmp/a" >"$tmp/out" 2>&1; [ $? -eq 1 ] && grep -q "fox_pro_trained/niah.json *missing" "$tmp/out" \
  && ok || bad "suite check: a missing result exits 1 naming it"

# ---- each result is what the task's own command writes ----
cpu=(--device cpu --dtype float32)
tr=$shared/fixtures/trained/fox_pro_tiny_pg
F=tests/fixtures/ruler
expect_ok "ruler run" "$FOXEVAL" ruler run "${cpu[@]}" --model .scratch/fox_llama_gpt2_random --haystack $F/haystack \
  --words $F/wonderwords --punkt $F/nltk_data/tokenizers/punkt_tab/english --tasks niah_single_1,ruler_vt,ruler_cwe \
  --lengths 1024 --limit 1 --max-gen-toks 6 --out "$tmp/cmd/ruler.json"
expect_ok "niah run" "$FOXEVAL" niah run "${cpu[@]}" --model $tr --haystack $shared/data/PaulGrahamEssays --mode standard \
  --lengths 400 --depths 0,100 --max-new-tokens 8 --out "$tmp/cmd/niah.json"
expect_ok "lm-eval run" "$FOXEVAL" lm-eval run "${cpu[@]}" --model $tr --data tests/fixtures/lm_eval/data \
  --tasks wikitext,piqa,arc_easy --limit 2 --max-length 256 --out "$tmp/cmd/lm-eval.json"
expect_ok "loss" "$FOXEVAL" loss "${cpu[@]}" --model tests/fixtures/official/fox_pro --data data/default/tokens.npy --bos-id 0 \
  --seq-len 512 --tokens 2048 --out "$tmp/cmd/loss.json"
expect_ok "longbench run" "$FOXEVAL" longbench run "${cpu[@]}" --model $tr --data tests/fixtures/longbench/data --tasks qasper,trec \
  --limit 1 --max-length 600 --max-new-tokens 8 --out "$tmp/cmd/longbench"
for pair in fox_pro_trained/niah.json:niah.json fox_pro_trained/lm-eval.json:lm-eval.json \
            fox_pro_official/loss.json:loss.json fox_pro_trained/longbench/run.json:longbench/run.json \
            fox_llama_random/ruler.json:ruler.json; do
  exact "$tmp/a/${pair%%:*}" "$tmp/cmd/${pair##*:}" && [ "$(core "$tmp/a/${pair%%:*}" | wc -c)" -gt 100 ] && ok || bad "suite's ${pair%%:*} equals the command's"
done

# ---- stopped in the middle of a task, resumed: the same bits ----
"$FOXEVAL" suite run --preset smoke -o "$tmp/b" --stop-after fox_pro_trained/lm-eval:2 >"$tmp/out" 2>"$tmp/err"
[ $? -eq 3 ] && ls "$tmp/b/fox_pro_trained/" | grep -q "lm-eval.json.journal" && ok || { bad "--stop-after: exit 3, the journal kept"; cat "$tmp/err" >&2; }
$PY -c 'import json,sys; s=json.load(open(sys.argv[1])); assert not s["complete"] and [t["name"] for t in s["tasks"]][-1] == "longbench", s["tasks"]' \
  "$tmp/b/suite.json" && ok || bad "a stopped suite's suite.json records the tasks finished so far (complete: false)"
expect_ok "suite run --resume" "$FOXEVAL" suite run --preset smoke -o "$tmp/b" --resume
grep -q "fox_pro_official/loss: finished earlier, skipped" "$tmp/err" && ok || bad "--resume skips finished tasks"
[ "$(grep -c '^\[foxeval\] model ' "$tmp/err")" -eq 2 ] && ok || bad "--resume loads only the models with work left"
same_folders "$tmp/a" "$tmp/b" && ok || bad "stopped and resumed == one run"
expect_error "an --out in use needs --resume" "--resume continues it" "$FOXEVAL" suite run --preset smoke -o "$tmp/b"

# ---- --resume keeps a finished result only for the settings it was made with ----
# The preset with absolute paths (its data elsewhere by path, the same by content): every task kept.
sed -e "s|^  repo: .*|  repo: $(pwd)|" -e "s|^  shared: .*|  shared: $(cd "$shared" && pwd)|" tasks/suite/presets/smoke.yaml >"$tmp/moved.yaml"
expect_ok "--resume from a suite file that names the same data elsewhere" "$FOXEVAL" suite run "$tmp/moved.yaml" -o "$tmp/b" --resume
[ "$(grep -c 'finished earlier, skipped' "$tmp/err")" -eq 16 ] && ! grep -q '^\[foxeval\] model ' "$tmp/err" && ok \
  || bad "the same data by content under other paths: all 16 kept, no model loaded"
# Stopped again in a run that visits the tasks in another order (the models reversed): the records
# of the finished tasks it has not reached are kept in suite.json, so the next --resume keeps them.
$PY - "$tmp/moved.yaml" "$tmp/reversed.yaml" <<'PYEOF'
import sys
lines = open(sys.argv[1]).read().split("\n")
i = lines.index("models:")
lines[i + 1:i + 4] = reversed(lines[i + 1:i + 4])
open(sys.argv[2], "w").write("\n".join(lines))
PYEOF
rm "$tmp/b/fox_llama_random/ruler.json"
"$FOXEVAL" suite run "$tmp/reversed.yaml" -o "$tmp/b" --resume --stop-after fox_llama_random/ruler:1 >"$tmp/out" 2>"$tmp/err"
[ $? -eq 3 ] && $PY -c 'import json,sys; s=json.load(open(sys.argv[1])); assert len(s["tasks"]) == 16 and not s["complete"] and all("identity" in t for t in s["tasks"]), len(s["tasks"])' \
  "$tmp/b/suite.json" && ok || { bad "a second stop keeps every finished task's record"; tail -3 "$tmp/err" >&2; }
expect_ok "--resume after a second stop" "$FOXEVAL" suite run "$tmp/reversed.yaml" -o "$tmp/b" --resume
same_folders "$tmp/a" "$tmp/b" && ok || bad "stopped twice, in two orders, and resumed == one run"
# A setting of one entry changed: refused before any model loads, naming the result, the field and the way out.
sed -e "s|^  repo: .*|  repo: $(pwd)|" -e "s|^  shared: .*|  shared: $(cd "$shared" && pwd)|" -e "s|max-new-tokens: 8$|max-new-tokens: 9|" \
  tasks/suite/presets/smoke.yaml >"$tmp/changed.yaml"
expect_error "--resume with a changed setting" "fox_pro_trained/niah.json was made with other settings" \
  "$FOXEVAL" suite run "$tmp/changed.yaml" -o "$tmp/b" --resume
grep -qF 'max-new-tokens: 8 vs 9' "$tmp/err" && grep -qF "delete $tmp/b/fox_pro_trained/niah.json" "$tmp/err" \
  && ! grep -q '^\[foxeval\] model ' "$tmp/err" && ok || { bad "the refusal names the field and the way out"; cat "$tmp/err" >&2; }
expect_error "--resume with another --cap" "cap: 0 vs 1" "$FOXEVAL" suite run --preset smoke -o "$tmp/b" --resume --cap 1
# Data changed in place (same path, other content): refused by its digest.
cp -r tests/fixtures/ruler/haystack "$tmp/hay"
sed -e "s|^  repo: .*|  repo: $(pwd)|" -e "s|^  shared: .*|  shared: $(cd "$shared" && pwd)|" -e "s|haystack: \${repo}/tests/fixtures/ruler/haystack|haystack: $tmp/hay|" \
  tasks/suite/presets/smoke.yaml >"$tmp/hay.yaml"
expect_ok "--resume: a copy of the data is the same data" "$FOXEVAL" suite run "$tmp/hay.yaml" -o "$tmp/b" --resume
echo " " >>"$(ls "$tmp"/hay/*.txt | head -1)"
expect_error "--resume with data changed in place" "fox_pro_trained/ruler.json was made with other settings" \
  "$FOXEVAL" suite run "$tmp/hay.yaml" -o "$tmp/b" --resume
grep -q 'haystack: "sha256:' "$tmp/err" && ok || bad "the refusal names the data's digests"
# A finished result without a record in suite.json (an old folder): refused, with the way out.
$PY -c 'import json,sys; p=sys.argv[1]; s=json.load(open(p)); [t.pop("identity") for t in s["tasks"]]; json.dump(s, open(p, "w"))' "$tmp/b/suite.json"
expect_error "--resume without a record" "holds no record of the settings it was made with" \
  "$FOXEVAL" suite run --preset smoke -o "$tmp/b" --resume

# ---- compare: two suite folders (pairs OUT_A/{label}/{task}.json by path), two models of one ----
expect_ok "compare two suite folders" "$FOXEVAL" compare "$tmp/a" "$tmp/b" --format json -o "$tmp/cmp.json"
$PY - "$tmp/cmp.json" <<'PYEOF' && ok || bad "compare of two equal suite folders: every result paired, every difference 0"
import json, sys
c = json.load(open(sys.argv[1]))
files = {r["b"].split("/b/", 1)[1] for r in c["comparisons"]}
assert {"fox_llama_random/ruler.json", "fox_pro_trained/babilong.json", "fox_pro_official/loss.json"} <= files, files
assert all(m["difference"] == 0 for r in c["comparisons"] for m in r["metrics"]), "nonzero"
assert any(m["metric"].startswith("ruler/") and m["n"] == 3 for r in c["comparisons"] for m in r["metrics"]), "ruler per doc"
PYEOF
expect_ok "compare two models of a suite" "$FOXEVAL" compare "$tmp/a/fox_pro_trained" "$tmp/a/fox_llama_random"
grep -q "ruler" "$tmp/out" && grep -q "babilong" "$tmp/out" && ok || bad "compare of two models: ruler and babilong paired"
grep -q "inspect-gates.json keeps no per_item scores: not compared" "$tmp/err" && ok || bad "compare of folders names what it passes over"
expect_error "compare two files without per_item" "no per_item scores to pair" \
  "$FOXEVAL" compare "$tmp/a/fox_pro_trained/inspect-gates.json" "$tmp/a/fox_llama_random/inspect-gates.json"

# ---- two processes == one ----
expect_ok "suite run on 2 processes" "$FOXEVAL" --nproc-per-node 2 suite run --preset smoke -o "$tmp/c"
same_folders "$tmp/a" "$tmp/c" && ok || bad "--nproc-per-node 2 == 1"

# ---- bad suite files: exit 2, file, line and field ----
bad_suite() {  # bad_suite NAME TEXT-IN-STDERR YAML
  printf '%s\n' "$3" >"$tmp/s.yaml"
  "$FOXEVAL" suite run "$tmp/s.yaml" -o "$tmp/x" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ $rc -eq 2 ] && grep -qF -- "$2" "$tmp/err" && ok || { bad "$1 (exit $rc)"; cat "$tmp/err" >&2; }
}
head='models: [{label: m, path: '$(pwd)'/tests/fixtures/official/fox_pro}]'
bad_suite "unknown task setting" "s.yaml:5: tasks[0].lenghts: not a setting of task 'niah'" "$head
tasks:
  - task: niah
    haystack: /tmp
    lenghts: [400]"
bad_suite "unknown task" "s.yaml:3: tasks[0].task 'nope' is not a suite task" "$head
tasks:
  - task: nope"
bad_suite "wrong type" "s.yaml:5: tasks[0].max-new-tokens: expected an integer" "$head
tasks:
  - task: niah
    haystack: /tmp
    max-new-tokens: many"
bad_suite "an unset var" "has no value in this file: give --set data=VALUE" "vars: {data: null}
$head
tasks:
  - {task: loss, data: \"\${data}\", seq-len: 8}"
bad_suite "an unknown RULER task" "s.yaml:4: tasks[0].tasks: 'niah_single_9' is not a RULER task" "$head
tasks:
  - task: ruler
    tasks: [niah_single_1, niah_single_9]"
bad_suite "a model folder that is not there" "s.yaml:1: models[0].path: /nonexistent/model is not a folder" "models: [{label: m, path: /nonexistent/model}]
tasks: [{task: loss, data: x, seq-len: 8}]"
# A hostile scalar (300k digits) is typed without recursion (RE2): an error at its field, not SIGSEGV.
bad_suite "a 300000-digit scalar" "s.yaml:1: models[0].path: /nonexistent/model is not a folder" "models: [{label: m, path: /nonexistent/model}]
vars: {n: $(printf '1%.0s' $(seq 1 300000))}
tasks: [{task: loss, data: x, seq-len: 8}]"
bad_suite "not YAML" "not valid YAML" "models: [
tasks: : :"
bad_suite "a duplicate label" "the label 'm' is given twice" "models: [{label: m, path: a}, {label: m, path: b}]
tasks: [{task: loss, data: x, seq-len: 8}]"
expect_error "--out inside an input" "is inside the input" "$FOXEVAL" suite run --preset smoke -o "$shared/data/PaulGrahamEssays/out"
expect_error "an unknown preset" "no such preset (known: " "$FOXEVAL" suite run --preset nope -o "$tmp/y"
expect_error "paper needs its data" "give --set longcrawl=VALUE" "$FOXEVAL" suite run --preset paper --model a=tests/fixtures/official/fox_pro -o "$tmp/y"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
