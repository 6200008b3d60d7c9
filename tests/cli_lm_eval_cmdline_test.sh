#!/usr/bin/env bash
# lm-eval's own command lines, as a researcher pastes them: `--model hf --model_args pretrained=M`,
# `--num_fewshot 0` (other values refused: the paper is zero-shot), `--tasks all` and lm-eval's tags
# where foxeval runs every member (ai2_arc); tags holding other tasks are refused, naming them.
# Usage: tests/cli_lm_eval_cmdline_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
model=../shared/fixtures/trained/fox_pro_tiny_pg
data=tests/fixtures/lm_eval/data
if [ ! -d $model ]; then echo "SKIP: $model is missing"; exit 0; fi

# `lm_eval --model hf --model_args pretrained=M --tasks ai2_arc --num_fewshot 0 ...`
expect_ok "lm-eval's command line" "$FOXEVAL" lm-eval run --model hf --model_args pretrained=$model,dtype=float32 \
  --tasks ai2_arc --num_fewshot 0 --batch_size auto --limit 2 --data $data --out "$tmp/arc.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert sorted(r["results"]) == ["arc_challenge", "arc_easy"], list(r["results"])' \
  "$tmp/arc.json" && ok || bad "--tasks ai2_arc runs arc_easy and arc_challenge"
python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["header"]["settings"]; assert h["model_type"] == "forgetting_transformer-project_fox" and h["dtype"] == "float32", h' \
  "$tmp/arc.json" && ok || bad "pretrained= and dtype= from --model_args"
expect_ok "--model hf-auto" "$FOXEVAL" lm-eval run --model hf-auto --model_args pretrained=$model --tasks copa --limit 1 \
  --data $data --out "$tmp/copa.json"
expect_error "--model hf without pretrained=" "--model hf is lm-eval's model type: name the checkpoint with --model_args pretrained=" \
  "$FOXEVAL" lm-eval run --model hf --tasks copa --data $data --out "$tmp/x.json"
expect_error "--num_fewshot 5" "--num_fewshot 5: foxeval runs the paper's zero-shot evaluation only" \
  "$FOXEVAL" lm-eval run --model $model --tasks copa --num_fewshot 5 --data $data --out "$tmp/x.json"
expect_error "--num_fewshot x" "--num_fewshot x" "$FOXEVAL" lm-eval run --model $model --tasks copa --num_fewshot x --data $data --out "$tmp/x.json"

# --tasks all: the paper's 11 tasks (the requests need no model).
expect_ok "--tasks all" "$FOXEVAL" lm-eval requests --tasks all --data $data --limit 1 --out "$tmp/all.jsonl"
[ "$(python3 -c 'import json,sys; print(len({json.loads(l)["task"] for l in open(sys.argv[1])}))' "$tmp/all.jsonl")" -eq 11 ] \
  && ok || bad "--tasks all: requests of 11 tasks"
expect_error "a tag with other tasks" "lm-eval's 'lambada' also holds lambada_standard, which foxeval does not run" \
  "$FOXEVAL" lm-eval requests --tasks lambada --data $data --out "$tmp/x.jsonl"
grep -qF -- "--tasks lambada_openai" "$tmp/err" && ok || bad "the refusal names the task to give"
expect_error "super_glue's tag" "also holds cb, multirc, record, rte, wic, wsc" \
  "$FOXEVAL" lm-eval requests --tasks super-glue-lm-eval-v1 --data $data --out "$tmp/x.jsonl"
expect_error "a task twice through a group" "task 'arc_easy' given twice (also in 'ai2_arc')" \
  "$FOXEVAL" lm-eval requests --tasks arc_easy,ai2_arc --data $data --out "$tmp/x.jsonl"
expect_error "an unknown task lists the groups" "groups: ai2_arc, all, lambada, super-glue-lm-eval-v1" \
  "$FOXEVAL" lm-eval requests --tasks nope --data $data --out "$tmp/x.jsonl"

echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]
