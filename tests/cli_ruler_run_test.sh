#!/usr/bin/env bash
# `foxeval ruler run` end to end on the CPU with the trained fixture (a small FoX (Pro) with GPT-2's
# vocabulary): the docs of `ruler samples` (equal to lm-eval's, tests/cli_ruler_test.sh) sent as lm-eval
# sends them (input + target_delimiter + gen_prefix, BOS, JSON-escaped GPT-2 BPE: checked against
# tiktoken), scored as `ruler score` scores the same predictions; a run stopped and resumed equals one
# uninterrupted, two processes (--nproc-per-node 2) and two shards merged equal one; its table, plot, report and compare.
# Usage: tests/cli_ruler_run_test.sh path/to/foxeval   (run from the repository root)
PY=.venv/bin/python
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
trained=../shared/fixtures/trained/fox_pro_tiny_pg
if [ ! -d $trained ]; then echo "SKIP: $trained is missing"; exit 0; fi
unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT SLURM_PROCID SLURM_NTASKS SLURM_LOCALID \
  SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE OMPI_COMM_WORLD_LOCAL_RANK
export OMP_NUM_THREADS=1 FOXEVAL_DIST_TIMEOUT=60
F=tests/fixtures/ruler
docs=(--model $trained --haystack $F/haystack --words $F/wonderwords --punkt $F/nltk_data/tokenizers/punkt_tab/english
      --tasks niah_single_1,ruler_vt,ruler_cwe --lengths 1024)
# Tiny: 2 docs of each task, 6 new tokens (lm-eval's --gen_kwargs max_gen_toks=6); --batch-size 2 makes several batches.
run=(ruler run "${docs[@]}" --limit 2 --max-gen-toks 6 --batch-size 2 --device cpu)

expect_ok "run" "$FOXEVAL" "${run[@]}" --out "$tmp/r.json"
head -1 "$tmp/out" | grep -q "length    ruler     NIAH  multi-hop tracing  aggregation       QA" && grep -q "^    1024 " "$tmp/out" \
  && ok || { bad "the length x category table printed"; cat "$tmp/out" >&2; }
expect_ok "samples" "$FOXEVAL" ruler samples "${docs[@]}" --out "$tmp/docs.jsonl"
$PY - "$tmp/r.json" "$tmp/docs.jsonl" "$tmp/preds.jsonl" <<'PYEOF' && ok || bad "result layout, prompts as lm-eval's, predictions written"
import json, sys
import tiktoken, tiktoken.load
from tiktoken_ext.openai_public import r50k_pat_str
r = json.load(open(sys.argv[1]))
docs = {(d["task"], d["doc_id"]): d["doc"] for d in map(json.loads, open(sys.argv[2], encoding="utf-8"))}
assert r["kind"] == "foxeval-ruler" and r["header"]["task"] == "ruler", r["kind"]
assert r["tasks"] == ["niah_single_1", "ruler_vt", "ruler_cwe"] and r["lengths"] == [1024], (r["tasks"], r["lengths"])
assert r["header"]["settings"]["max_gen_toks"] == 6 and r["header"]["settings"]["limit"] == 2
s = r["samples"]
assert [(x["task"], x["doc_id"]) for x in s] == [(t, i) for t in r["tasks"] for i in (0, 1)], [(x["task"], x["doc_id"]) for x in s]
# The fixture's vocab.json/merges.txt are GPT-2's (the bundled data/gpt2 files), read without a network.
ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(vocab_bpe_file="data/gpt2/vocab.bpe", encoder_json_file="data/gpt2/encoder.json")
enc = tiktoken.Encoding(name="gpt2", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 50256})
delim = {"niah_single_1": " ", "ruler_vt": " ", "ruler_cwe": "\n\n"}
for x in s:
    d = docs[(x["task"], x["doc_id"])]
    assert x["outputs"] == d["outputs"] and x["max_length"] == 1024 and 1 <= x["new_tokens"] <= 6 and not x["truncated"]
    # lm-eval's prompt: build_qa_turn joins input and gen_prefix with the task's target_delimiter (no whitespace at the join here).
    assert not d["input"][-1].isspace() and not d["gen_prefix"][0].isspace()
    prompt = d["input"] + delim[x["task"]] + d["gen_prefix"]
    assert x["prompt_tokens"] == 1 + len(enc.encode(json.dumps(prompt)[1:-1])), (x["task"], x["prompt_tokens"])
    assert 0 <= x["score"] <= 1
for t in r["tasks"]:
    mean = sum(x["score"] for x in s if x["task"] == t) / 2
    assert abs(r["scores"][t]["1024"] - mean) < 1e-15 and r["n"][t]["1024"] == 2
assert abs(r["ruler"]["1024"] - sum(r["scores"][t]["1024"] for t in r["tasks"]) / 3) < 1e-15
assert set(r["categories"]["1024"]) == {"NIAH", "multi-hop tracing", "aggregation"}
assert r["per_item"]["scores/ruler_vt/1024"]["ids"] == ["ruler_vt/1024/0", "ruler_vt/1024/1"]
assert r["per_item"]["ruler/1024"]["n"] == 6
with open(sys.argv[3], "w") as f:
    for (t, i) in docs:
        pred = next((x["prediction"] for x in s if (x["task"], x["doc_id"]) == (t, i)), "")
        f.write(json.dumps({"task": t, "doc_id": i, "prediction": pred}) + "\n")
PYEOF
# `ruler score` (lm-eval's scoring, tested against it) on the run's predictions: the run's scores.
head -n 2 "$tmp/docs.jsonl" > "$tmp/docs2.jsonl"; sed -n '501,502p;1001,1002p' "$tmp/docs.jsonl" >> "$tmp/docs2.jsonl"
$PY - "$tmp/preds.jsonl" "$tmp/docs2.jsonl" <<'PYEOF'
import json, sys
keep = {(d["task"], d["doc_id"]) for d in map(json.loads, open(sys.argv[2]))}
rows = [p for p in map(json.loads, open(sys.argv[1])) if (p["task"], p["doc_id"]) in keep]
open(sys.argv[1], "w").write("".join(json.dumps(p) + "\n" for p in rows))
PYEOF
expect_ok "score the run's predictions" "$FOXEVAL" ruler score --samples "$tmp/docs2.jsonl" --predictions "$tmp/preds.jsonl" --out "$tmp/s.json"
$PY -c 'import json,sys; r,s=(json.load(open(p)) for p in sys.argv[1:3]); assert r["scores"]==s["scores"] and r["ruler"]==s["ruler"] and r["categories"]==s["categories"], (r["scores"], s["scores"])' \
  "$tmp/r.json" "$tmp/s.json" && ok || bad "ruler score of the run's predictions gives the run's scores"

# Stopped after 2 docs (exit 3, journal kept), then resumed: the uninterrupted run's result.
"$FOXEVAL" "${run[@]}" --out "$tmp/k.json" --stop-after 2 >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 3 ] && [ -s "$tmp/k.json.journal.jsonl" ] && [ ! -e "$tmp/k.json" ] && ok || { bad "--stop-after: exit 3 and a journal (rc $rc)"; cat "$tmp/err" >&2; }
expect_ok "resume" "$FOXEVAL" "${run[@]}" --out "$tmp/k.json" --resume
expect_ok "2 processes" "$FOXEVAL" --nproc-per-node 2 "${run[@]}" --out "$tmp/n.json"
for i in 0 1; do
  expect_ok "shard $i" "$FOXEVAL" "${run[@]}" --num-shards 2 --shard-index $i --out "$tmp/p$i.json"
done
expect_ok "merge" "$FOXEVAL" merge --out "$tmp/m.json" "$tmp/p0.json" "$tmp/p1.json"
$PY - "$tmp/r.json" "$tmp/k.json" "$tmp/n.json" "$tmp/m.json" <<'PYEOF' && ok || bad "resumed, 2-process and 2-shard runs equal the uninterrupted one"
import json, sys
r, k, n, m = (json.load(open(p)) for p in sys.argv[1:5])
for other in (k, n, m):
    for key in ["samples", "scores", "ruler", "categories", "per_item", "identity"]:
        assert other[key] == r[key], key
PYEOF

expect_ok "table" "$FOXEVAL" table "$tmp/r.json"
grep -q "RULER: score (%) by context length" "$tmp/out" && grep -q "RULER at 1024 tokens: score (%) by category" "$tmp/out" \
  && grep -q "RULER at 1024 tokens: score (%) by task" "$tmp/out" && ok || { bad "ruler tables"; cat "$tmp/out" >&2; }
expect_ok "plot" "$FOXEVAL" plot ruler "$tmp/r.json" "$tmp/s.json" --label A --label B -o "$tmp/p.svg"
[ "$(grep -c '<polyline' "$tmp/p.svg")" -eq 2 ] && grep -q ">1K<" "$tmp/p.svg" && ok || bad "plot: a line per result over the lengths"
expect_ok "plot a category" "$FOXEVAL" plot ruler "$tmp/r.json" --task NIAH -o "$tmp/c.svg"
expect_ok "report" "$FOXEVAL" report "$tmp/r.json" -o "$tmp/r.html"
grep -q 'id="figure-ruler"' "$tmp/r.html" && ok || bad "report: the RULER figure"
expect_ok "compare" "$FOXEVAL" compare "$tmp/r.json" "$tmp/k.json"
grep -q "scores/ruler_vt/1024 | higher | 2 |" "$tmp/out" && ok || { bad "compare pairs the docs"; cat "$tmp/out" >&2; }

# The group's last three tasks through the run: lm-eval's prompts (fwe and QA join with " "), 50 and 32
# new tokens at most, the QA category and the mean over the tasks run.
expect_ok "run fwe + QA" "$FOXEVAL" ruler run --model $trained --squad $F/qa --hotpot $F/qa --tasks ruler_fwe,ruler_qa_squad,ruler_qa_hotpot \
  --lengths 1024 --limit 1 --batch-size 3 --device cpu --out "$tmp/q.json"
expect_ok "samples fwe + QA" "$FOXEVAL" ruler samples --squad $F/qa --hotpot $F/qa --tasks ruler_fwe,ruler_qa_squad,ruler_qa_hotpot \
  --lengths 1024 --out "$tmp/qdocs.jsonl"
$PY - "$tmp/q.json" "$tmp/qdocs.jsonl" <<'PYEOF' && ok || bad "fwe + QA: prompts as lm-eval builds them, scores, categories"
import json, sys
import tiktoken, tiktoken.load
from tiktoken_ext.openai_public import r50k_pat_str
r = json.load(open(sys.argv[1]))
docs = {(d["task"], d["doc_id"]): d["doc"] for d in map(json.loads, open(sys.argv[2], encoding="utf-8"))}
ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(vocab_bpe_file="data/gpt2/vocab.bpe", encoder_json_file="data/gpt2/encoder.json")
enc = tiktoken.Encoding(name="gpt2", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 50256})
s = r["samples"]
assert [x["task"] for x in s] == ["ruler_fwe", "ruler_qa_squad", "ruler_qa_hotpot"]
for x in s:
    d = docs[(x["task"], x["doc_id"])]
    assert 1 <= x["new_tokens"] <= (50 if x["task"] == "ruler_fwe" else 32), (x["task"], x["new_tokens"])
    prompt = d["input"] + " " + d["gen_prefix"]
    assert x["prompt_tokens"] == 1 + len(enc.encode(json.dumps(prompt)[1:-1])), (x["task"], x["prompt_tokens"])
assert set(r["categories"]["1024"]) == {"aggregation", "QA"}
assert abs(r["ruler"]["1024"] - sum(x["score"] for x in s) / 3) < 1e-15
PYEOF

expect_error "unknown task" "--tasks: 'ruler_nope' is not a RULER task" "$FOXEVAL" ruler run "${docs[@]/ruler_cwe/ruler_nope}" --out "$tmp/x.json"
expect_error "max-length below max_gen_toks" "--max-length 100: must be more than niah_single_1's max_gen_toks (128)" \
  "$FOXEVAL" ruler run "${docs[@]}" --max-length 100 --out "$tmp/x.json"
[ ! -e "$tmp/x.json" ] && ok || bad "no result written on bad input"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
