#!/usr/bin/env bash
# Every task end to end on CPU, on small inputs: the runs whose scores CI holds against the
# committed baselines (results/baseline/, see scripts/update_baselines.sh and tests/cli_baselines_test.sh).
# The runs are the tasks' own: each task's definition names its baseline runs (TaskDef::baselines,
# tasks/task_def.h; list them with `foxeval info --ci-baselines`). Today: loss on the bundled default
# (tiny official FoX (Pro), data/default/tokens.npy); niah on a small grid of the Paul Graham essays
# (../shared); longbench on a few synthetic records of several tasks; lm-eval on the first docs of
# every task; the last three with the small trained FoX (Pro) of ../shared/fixtures/trained/.
# Usage: scripts/e2e_tasks.sh OUTDIR [path/to/foxeval]     (run from anywhere)
# Writes OUTDIR/baselines.tsv: each baseline's file name and the result that stands for it.
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
list="$("$foxeval" info --ci-baselines)"
[ -n "$list" ] || { echo "e2e_tasks: $foxeval info --ci-baselines lists no baseline" >&2; exit 1; }
: >"$out/baselines.tsv"
while IFS=$'\t' read -r -a f; do
  baseline="${f[0]}" result="${f[1]}" args=()
  for a in "${f[@]:2}"; do a="${a//\{out\}/$out}"; a="${a//\{trained\}/$trained}"; args+=("${a//\{shared\}/$shared}"); done
  rm -rf "${out:?}/${result%%/*}"  # a run's folder (longbench's) from an earlier call would be resumed
  echo "[e2e] $foxeval ${args[*]} ${cpu[*]}" >&2
  "$foxeval" "${args[@]}" "${cpu[@]}" >/dev/null
  printf '%s\t%s\n' "$baseline" "$result" >>"$out/baselines.tsv"
done <<<"$list"
echo "[e2e] results in $out (baselines.tsv: which result stands for which baseline)" >&2
