#!/usr/bin/env bash
# Every task end to end on CPU, on small inputs: the runs whose scores CI holds against the
# committed baselines (results/baseline/, see scripts/update_baselines.sh and tests/cli_baselines_test.sh).
#   loss       the bundled default (tiny official FoX (Pro), data/default/tokens.npy)
#   niah       a small grid on the Paul Graham essays (../shared) with the small trained FoX (Pro)
#   longbench  a few synthetic records of several tasks (tests/fixtures/longbench/data), trained model
#   lm-eval    the first docs of every task (tests/fixtures/lm_eval/data), trained model
# Usage: scripts/e2e_tasks.sh OUTDIR [path/to/foxeval]     (run from anywhere)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="$(mkdir -p "$1" && cd "$1" && pwd)"
foxeval="$(realpath "${2:-$here/build/foxeval}")"
cd "$here"
shared="${FOXEVAL_SHARED:-$here/../shared}"
trained="$shared/fixtures/trained/fox_pro_tiny_pg"
for need in "$trained/config.json" "$shared/data/PaulGrahamEssays"; do
  [ -e "$need" ] || { echo "e2e_tasks: $need is missing (the shared folder beside the checkout)" >&2; exit 1; }
done
# On the CPU in float32 wherever it runs (--device/--dtype default to auto: a GPU machine would pick
# bfloat16 on its GPU, which the baselines are not).
cpu=(--device cpu --dtype float32)
run() { echo "[e2e] $*" >&2; "$@" >/dev/null; }

run "$foxeval" loss "${cpu[@]}" --model tests/fixtures/official/fox_pro --data data/default/tokens.npy --bos-id 0 \
  --out "$out/loss.json"
run "$foxeval" niah run "${cpu[@]}" --model "$trained" --haystack "$shared/data/PaulGrahamEssays" --mode standard \
  --lengths 400,900 --depths 0,50,100 --max-new-tokens 24 --out "$out/niah.json"
rm -rf "$out/longbench"
run "$foxeval" longbench run "${cpu[@]}" --model "$trained" --data tests/fixtures/longbench/data \
  --tasks qasper,multifieldqa_en,gov_report,trec,samsum,lcc,repobench-p --limit 2 --max-length 700 \
  --max-new-tokens 24 --out "$out/longbench"
cp "$out/longbench/run.json" "$out/longbench.json"
run "$foxeval" lm-eval run "${cpu[@]}" --model "$trained" \
  --tasks wikitext,lambada_openai,piqa,hellaswag,winogrande,arc_easy,arc_challenge,boolq,sciq,copa,openbookqa \
  --data tests/fixtures/lm_eval/data --limit 3 --max-length 256 --out "$out/lm_eval.json"
echo "[e2e] results in $out: loss.json niah.json longbench.json lm_eval.json" >&2
