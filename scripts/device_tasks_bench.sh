#!/usr/bin/env bash
# On the GPU machine (after `source scripts/device_build.sh foxeval`): the generation and scoring tasks
# at the paper's sizes with a random 760M FoX (Pro) (random weights never emit EOS, so every
# generation runs to its full length). Resumable: rerun the same command to continue a stage that
# ran out of time (each stage passes --resume).
# Usage: [STAGE_SECONDS=N] [STATE_IN=DIR] scripts/device_tasks_bench.sh OUTDIR STAGE...   stages: niah niah-batch1 lm-eval longbench
#   needs .devdata/PaulGrahamEssays (the haystack, carried; never committed) for the niah stages.
set -uo pipefail
out="$1"; shift
here="$(cd "$(dirname "$0")/.." && pwd)"
fox="$here/build-gpu/foxeval"
ckpt=/tmp/ckpt-fox_pro
state=/tmp/foxeval-bench   # journals survive between calls while the machine stays warm
mkdir -p "$out" "$state"
# STATE_IN: journals of an earlier call (the machine starts bare each time), to --resume from.
[ -n "${STATE_IN:-}" ] && [ -d "$STATE_IN" ] && cp -r "$STATE_IN"/. "$state"/
[ -d "$ckpt" ] || python3 "$here/scripts/make_random_checkpoint.py" fox_pro "$ckpt" --bf16
[ -d /tmp/syn ] || python3 "$here/scripts/make_synthetic_benchmarks.py" --out /tmp/syn
common=(--model "$ckpt" --device cuda --dtype bfloat16)
timed() {  # name, command...: wall time and peak GPU memory of one stage
  local name="$1"; shift
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 500 >"$state/$name.mem" 2>/dev/null &
  local smi=$!
  local t0=$(date +%s.%N)
  # STAGE_SECONDS: stop the stage (SIGTERM: the journal keeps every finished item) in time to copy it back.
  timeout -s TERM "${STAGE_SECONDS:-86400}" "$@" 2>"$out/$name.log" >"$out/$name.stdout"; local rc=$?
  local t1=$(date +%s.%N)
  kill $smi 2>/dev/null
  local peak=$(sort -n "$state/$name.mem" | tail -1)
  echo "$name rc=$rc wall_s=$(python3 -c "print(round($t1 - $t0, 1))") peak_gpu_mib=${peak:-?}" | tee -a "$out/stages.txt"
  tail -3 "$out/$name.log"
}
for stage in "$@"; do
  case "$stage" in
    niah) timed niah "$fox" niah run "${common[@]}" --haystack "$here/.devdata/PaulGrahamEssays" --mode standard \
            --out "$state/niah-760m.json" --resume && cp "$state/niah-760m.json" "$out/" ;;
    niah-batch1)  # one cell at a time (one decoding slot), a few cells per length, to extrapolate
      timed niah-batch1 "$fox" niah run "${common[@]}" --haystack "$here/.devdata/PaulGrahamEssays" --mode standard \
            --lengths 1000,16500,32000 --depths 50 --batch-size 1 --out "$state/niah-batch1.json" --resume &&
        cp "$state/niah-batch1.json" "$out/" ;;
    lm-eval) timed lm-eval "$fox" lm-eval run "${common[@]}" \
            --tasks wikitext,lambada_openai,piqa,hellaswag,winogrande,arc_easy,arc_challenge,boolq,sciq,copa,openbookqa \
            --data /tmp/syn/lm_eval --out "$state/lm-eval-760m.json" --resume && cp "$state/lm-eval-760m.json" "$out/" ;;
    longbench) timed longbench "$fox" longbench run "${common[@]}" --data /tmp/syn/longbench \
            --out "$state/longbench" --resume && cp "$state/longbench/run.json" "$out/longbench-760m.json" ;;
    *) echo "unknown stage $stage" >&2; exit 2 ;;
  esac
done
