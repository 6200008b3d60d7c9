#!/usr/bin/env bash
# `foxeval lm-eval requests|run` end to end on the 11 tasks' fixture documents
# (tests/fixtures/lm_eval/data) and the trained tiny FoX (Pro): request lines, a run of every task,
# stop + --resume equal to an uninterrupted run, --log-samples, and the bad-input errors.
# Usage: tests/cli_lm_eval_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
# same_results A B: the two result files agree on everything but the header (times, dates).
same_results() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for r in (a, b):
    r.pop("header", None)
sys.exit(0 if a == b else 1)
EOF
}
data=tests/fixtures/lm_eval/data
model=../shared/fixtures/trained/fox_pro_tiny_pg
all=wikitext,lambada_openai,piqa,hellaswag,winogrande,arc_easy,arc_challenge,boolq,sciq,copa,openbookqa

# Requests: every task's, numbered as lm-eval numbers them (the strings are checked against
# lm-eval's own in the unit tests).
expect_ok "requests" "$FOXEVAL" lm-eval requests --tasks $all --data $data --out "$tmp/req.jsonl"
[ "$(wc -l <"$tmp/req.jsonl")" -eq 101 ] && ok || bad "requests: 101 lines for the fixture documents"
grep -q '^{"context":"Question: tie\\nAnswer:","continuation":" same","doc_id":3,"index":1,"kind":"loglikelihood","task":"piqa"}$' \
  "$tmp/req.jsonl" && ok || bad "requests: a piqa line with its fields"
grep -q '"kind":"loglikelihood_rolling","task":"wikitext","text":' "$tmp/req.jsonl" && ok || bad "requests: wikitext is rolling"
expect_ok "requests --limit" "$FOXEVAL" lm-eval requests --tasks copa,winogrande --data $data --out "$tmp/req1.jsonl" --limit 1
[ "$(wc -l <"$tmp/req1.jsonl")" -eq 4 ] && ok || bad "requests --limit 1: 2 copa + 2 winogrande lines"

# A run of every task on 3 documents each. Requests are batched by length; a resumed run batches
# the rest differently, and the engine's answers must not depend on the batch (models/requests.h).
run() { "$FOXEVAL" lm-eval run --model $model --tasks $all --data $data --limit 3 --max-length 256 "$@"; }
expect_ok "run" run --out "$tmp/a.json" --log-samples "$tmp/samples.jsonl"
for key in '"acc,none"' '"acc_norm_stderr,none"' '"word_perplexity,none"' '"bits_per_byte,none"' '"perplexity,none"' \
  '"n-samples"' '"original": 4' '"effective": 3'; do
  grep -qF -- "$key" "$tmp/a.json" && ok || bad "run result has $key"
done
python3 -c "
import json, sys
r = json.load(open('$tmp/a.json'))
res = r['results']
assert sorted(res) == sorted('$all'.split(',')), sorted(res)
for t, v in res.items():
    assert v['alias'] == t
    for k, x in v.items():
        if k.startswith('acc') and not k.endswith('stderr,none') and k != 'alias':
            assert 0 <= x <= 1, (t, k, x)
assert res['wikitext']['word_perplexity,none'] > 1
assert r['n-samples']['wikitext'] == {'original': 4, 'effective': 3}
" && ok || bad "run result: every task, accuracies in [0, 1], n-samples"
[ "$(wc -l <"$tmp/samples.jsonl")" -eq 33 ] && ok || bad "--log-samples: one line per document (33)"
grep -q '"resps":\[\[-[0-9.e+-]*,\(true\|false\)\]' "$tmp/samples.jsonl" && ok || bad "--log-samples: resps are [logprob, is_greedy]"

# Stop after 7 documents (exit 3, journal kept), resume, and get the uninterrupted result.
run --out "$tmp/b.json" --stop-after 7 >/dev/null 2>"$tmp/err"
[ $? -eq 3 ] && [ -s "$tmp/b.json.journal.jsonl" ] && [ ! -e "$tmp/b.json" ] && ok || { bad "--stop-after: exit 3 with the journal"; cat "$tmp/err" >&2; }
expect_ok "resume" run --out "$tmp/b.json" --resume
grep -q "already done" "$tmp/err" && ok || bad "resume reports the documents already done"
same_results "$tmp/a.json" "$tmp/b.json" && ok || bad "resumed result equals the uninterrupted one"
[ ! -e "$tmp/b.json.journal.jsonl" ] && ok || bad "the journal is removed once the result is written"
run --out "$tmp/d.json" --stop-after 2 >/dev/null 2>&1
expect_error "resume refuses other settings" "max_length" "$FOXEVAL" lm-eval run --model $model --tasks $all --data $data \
  --limit 3 --max-length 200 --out "$tmp/d.json" --resume

# Two shards + `foxeval merge` (the registered lm-eval result builder) equal the single run.
run --out "$tmp/p0.json" --num-shards 2 --shard-index 0 >/dev/null 2>&1 &&
  run --out "$tmp/p1.json" --num-shards 2 --shard-index 1 >/dev/null 2>&1 && ok || bad "shard runs"
expect_ok "merge" "$FOXEVAL" merge --out "$tmp/m.json" "$tmp/p0.json" "$tmp/p1.json"
same_results "$tmp/a.json" "$tmp/m.json" && ok || bad "merged shards equal the single run"
expect_error "log samples with shards" "--log-samples" run --out "$tmp/p.json" --num-shards 2 --shard-index 0 \
  --log-samples "$tmp/s.jsonl"

# Bad input: errors name the task, the file and line, the field.
expect_error "unknown task" "unknown task 'mmlu'" "$FOXEVAL" lm-eval requests --tasks piqa,mmlu --data $data --out "$tmp/x.jsonl"
# (the data in a folder of its own: an --out inside --data is refused, README "Exit codes and guarantees")
mkdir -p "$tmp/bad"
expect_error "missing file" "$tmp/bad/piqa.jsonl" "$FOXEVAL" lm-eval requests --tasks piqa --data "$tmp/bad" --out "$tmp/x.jsonl"
printf '{"goal": "g", "sol1": "a", "label": 0}\n' >"$tmp/bad/piqa.jsonl"
expect_error "missing field" "piqa: $tmp/bad/piqa.jsonl line 1: missing field 'sol2'" \
  "$FOXEVAL" lm-eval requests --tasks piqa --data "$tmp/bad" --out "$tmp/x.jsonl"
printf '{"premise": "p.", "choice1": "A", "choice2": "B", "question": "cause", "idx": 0, "label": 5}\n' >"$tmp/bad/copa.jsonl"
expect_error "label out of range" "label 5 is out of range" \
  "$FOXEVAL" lm-eval run --model $model --tasks copa --data "$tmp/bad" --out "$tmp/x.json"
expect_error "bad --limit" "--limit" "$FOXEVAL" lm-eval requests --tasks copa --data $data --out "$tmp/x.jsonl" --limit 0

# --data hf (and the default): the same documents laid out in the Hugging Face caches
# (tests/fixtures/lm_eval/caches, made by tests/tools/make_lm_eval_cache_fixtures.py with datasets
# itself: sharded splits, decoy configs and splits, 0.4.4's and current lm-eval's ids) give the
# same requests as the folder.
caches=tests/fixtures/lm_eval/caches
hf() { env -u HF_HOME -u XDG_CACHE_HOME HF_DATASETS_CACHE="$caches/datasets" HF_HUB_CACHE="$caches/hub" "$@"; }
expect_ok "requests --data hf" hf "$FOXEVAL" lm-eval requests --tasks $all --data hf --out "$tmp/req_hf.jsonl"
cmp -s "$tmp/req.jsonl" "$tmp/req_hf.jsonl" && ok || bad "--data hf: requests equal the folder's"
mkdir -p "$tmp/home" && ln -s "$PWD/$caches/datasets" "$tmp/home/datasets" && ln -s "$PWD/$caches/hub" "$tmp/home/hub"
expect_ok "requests, default --data" env -u HF_DATASETS_CACHE -u HF_HUB_CACHE -u HUGGINGFACE_HUB_CACHE HF_HOME="$tmp/home" \
  "$FOXEVAL" lm-eval requests --tasks $all --out "$tmp/req_home.jsonl"
cmp -s "$tmp/req.jsonl" "$tmp/req_home.jsonl" && ok || bad "default --data: HF_HOME's caches give the folder's requests"
"$FOXEVAL" lm-eval requests --tasks piqa --data $data --out "$tmp/req_piqa.jsonl" 2>/dev/null
expect_ok "save_to_disk folder" "$FOXEVAL" lm-eval requests --tasks piqa --data $caches/saved --out "$tmp/req_saved.jsonl"
cmp -s "$tmp/req_piqa.jsonl" "$tmp/req_saved.jsonl" && ok || bad "save_to_disk DIR/{task}/: the folder's requests"
expect_ok "save_to_disk itself" "$FOXEVAL" lm-eval requests --tasks piqa --data $caches/saved/piqa --out "$tmp/req_saved1.jsonl"
cmp -s "$tmp/req_piqa.jsonl" "$tmp/req_saved1.jsonl" && ok || bad "one save_to_disk folder: the folder's requests"
expect_error "save_to_disk for two tasks" "one dataset" "$FOXEVAL" lm-eval requests --tasks piqa,copa --data $caches/saved/piqa --out "$tmp/x.jsonl"
# The newest hash folder wins, as datasets' offline reload: a newer decoy is picked, an older one is not.
cp -r "$caches/datasets" "$tmp/dc" && chmod -R u+w "$tmp/dc"
h="$tmp/dc/piqa/plain_text/0.0.0"
cp -r "$h/4f1e8a0c2b6d9e3f" "$h/aaaa" && cp "$h/aaaa/piqa-train.arrow" "$h/aaaa/piqa-validation.arrow"
touch -d '2001-01-01' "$h/aaaa"
HF_DATASETS_CACHE="$tmp/dc" HF_HUB_CACHE="$tmp/none" "$FOXEVAL" lm-eval requests --tasks piqa --out "$tmp/req_old.jsonl" 2>/dev/null
cmp -s "$tmp/req_piqa.jsonl" "$tmp/req_old.jsonl" && ok || bad "an older hash folder is not picked"
touch "$h/aaaa"
HF_DATASETS_CACHE="$tmp/dc" HF_HUB_CACHE="$tmp/none" "$FOXEVAL" lm-eval requests --tasks piqa --out "$tmp/req_new.jsonl" 2>/dev/null
grep -q DECOY "$tmp/req_new.jsonl" && ok || bad "the newest hash folder is picked"
expect_error "not in any cache" "datasets.load_dataset('baber/piqa', split='validation')" \
  env HF_DATASETS_CACHE="$tmp/none" HF_HUB_CACHE="$tmp/none2" "$FOXEVAL" lm-eval requests --tasks piqa --out "$tmp/x.jsonl"
expect_error "not found lists the places" "$tmp/none2/datasets--baber--piqa" \
  env HF_DATASETS_CACHE="$tmp/none" HF_HUB_CACHE="$tmp/none2" "$FOXEVAL" lm-eval requests --tasks piqa --out "$tmp/x.jsonl"
expect_ok "--limit as a fraction" "$FOXEVAL" lm-eval requests --tasks piqa --data $data --out "$tmp/req_f.jsonl" --limit 0.3
[ "$(wc -l <"$tmp/req_f.jsonl")" -eq 4 ] && ok || bad "--limit 0.3 of 4 docs: ceil(1.2) = 2 docs, 4 requests"

# lm-eval's spellings and its --output_path tree.
expect_ok "lm-eval spellings" hf "$FOXEVAL" lm-eval run --model hf --model_args pretrained=$model,dtype=float32 --tasks piqa,wikitext,winogrande \
  --batch_size auto --limit 2 --max-length 256 --output_path "$tmp/tree" --log_samples
tree="$tmp/tree/..__shared__fixtures__trained__fox_pro_tiny_pg"
ls "$tree"/results_*.json >/dev/null 2>&1 && ok || bad "--output_path: DIR/{model_name_sanitized}/results_{date}.json"
[ "$(ls "$tree"/samples_piqa_*.jsonl | wc -l)" -eq 1 ] && [ "$(wc -l <"$tree"/samples_piqa_*.jsonl)" -eq 2 ] && ok || bad "samples_piqa_{date}.jsonl"
expect_error "conflicting model" "given twice" "$FOXEVAL" lm-eval run --model $model --model_args pretrained=/elsewhere \
  --tasks piqa --data $data --out "$tmp/x.json"
expect_error "conflicting batch size" "given twice" "$FOXEVAL" lm-eval run --model $model --batch-size 4 --batch_size 8 \
  --tasks piqa --data $data --out "$tmp/x.json"
expect_error "a model name that climbs out of --output_path" "makes no folder" "$FOXEVAL" lm-eval run \
  --model_args pretrained=.. --tasks piqa --data $data --output_path "$tmp/climb/inside"
[ ! -e "$tmp/climb" ] && ok || bad "nothing written for a refused --output_path"
expect_error "lm-eval's tree from a shard" "--output_path: not available with --num-shards" "$FOXEVAL" lm-eval run \
  --model $model --tasks piqa --data $data --output_path "$tmp/shardtree" --num-shards 2 --shard-index 0
expect_error "batch_size auto:N with a bad N" "auto:N needs a positive number" "$FOXEVAL" lm-eval run --model $model \
  --batch_size auto:abc --tasks piqa --data $data --out "$tmp/x.json"
expect_error "log_samples without output_path" "--output_path" "$FOXEVAL" lm-eval run --model $model --log_samples \
  --tasks piqa --data $data --out "$tmp/x.json"
# lm-eval 0.4.4's own code reads the tree (scripts/setup.sh installs it into .venv).
py=.venv/bin/python
if $py -c "import importlib.util as u, pytablewriter, yaml, jinja2; assert u.find_spec('lm_eval')" 2>/dev/null; then
  $py tests/tools/lm_eval_read_tree.py "$tmp/tree" && ok || bad "lm-eval's own code reads the tree"
else
  bad "lm-eval 0.4.4 is not in .venv: run scripts/setup.sh (pip install --no-deps lm_eval==0.4.4; pip install pytablewriter pyyaml jinja2)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
