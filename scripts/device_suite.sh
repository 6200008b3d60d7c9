#!/usr/bin/env bash
# On the GPU machine: `foxeval suite run --preset paper` with two random 760M models (FoX (Pro) and
# Transformer (Pro)), documents/records capped (--cap), then the same work as the separate task
# commands, and both wall times (the suite loads each model once; the commands once per task).
# Needs .deps (scripts/gpu_deps.sh, with libyaml-cpp) and .devdata/PaulGrahamEssays (carried).
# Usage: [CAP=2] scripts/device_suite.sh OUTDIR        results: OUTDIR/suite.tar.gz, OUTDIR/times.txt
set -uo pipefail
out="$(mkdir -p "$1" && cd "$1" && pwd)"
here="$(cd "$(dirname "$0")/.." && pwd)"
. "$here/scripts/device_lib.sh"
device_build_or_exit "$out" foxeval
cap="${CAP:-2}"
fox="$here/build-gpu/foxeval"
for fam in fox_pro transformer_pro; do
  [ -d /tmp/ckpt-$fam ] || python3 "$here/scripts/make_random_checkpoint.py" $fam /tmp/ckpt-$fam --bf16 >/dev/null
done
[ -d /tmp/syn ] || python3 "$here/scripts/make_synthetic_benchmarks.py" --out /tmp/syn >/dev/null
# LongCrawl64-shaped held-out rows (random tokens; cap rows of 65536 are read).
[ -f /tmp/heldout.npy ] || python3 -c "import numpy as np; np.save('/tmp/heldout.npy', np.random.default_rng(0).integers(0, 50257, (8, 65536), dtype=np.uint16))"
hay="$here/.devdata/PaulGrahamEssays"
sets=(--set longcrawl=/tmp/heldout.npy --set haystack="$hay" --set longbench=/tmp/syn/longbench --set lm_eval=/tmp/syn/lm_eval)
rm -rf /tmp/suite-out /tmp/cmd-out
t0=$(date +%s.%N)
"$fox" suite run --preset paper --model fox=/tmp/ckpt-fox_pro --model tf=/tmp/ckpt-transformer_pro "${sets[@]}" \
  --cap "$cap" -o /tmp/suite-out 2>"$out/suite.log"; rc=$?
t1=$(date +%s.%N)
echo "suite rc=$rc wall_s=$(python3 -c "print(round($t1 - $t0, 1))")" | tee "$out/times.txt"
tail -4 "$out/suite.log"
# The separate commands with the suite's settings (cap applied as the suite applies it).
niah_lengths=$(python3 -c "print(','.join(str(round(1000 + i * 3100)) for i in range($cap)))")
t0=$(date +%s.%N)
for m in fox tf; do
  ck=/tmp/ckpt-$([ $m = fox ] && echo fox_pro || echo transformer_pro); o=/tmp/cmd-out/$m; mkdir -p $o
  "$fox" loss --model $ck --data /tmp/heldout.npy --seq-len 65536 --tokens $((cap * 65536)) --out $o/loss.json 2>>"$out/cmd.log"
  for mode in easy standard; do
    "$fox" niah run --model $ck --haystack "$hay" --mode $mode --lengths $niah_lengths --out $o/niah-$mode.json 2>>"$out/cmd.log"
  done
  "$fox" longbench run --model $ck --data /tmp/syn/longbench --limit $cap --out $o/longbench 2>>"$out/cmd.log"
  "$fox" longbench run --model $ck --data /tmp/syn/longbench --e --limit $cap --out $o/longbench-e 2>>"$out/cmd.log"
  "$fox" lm-eval run --model $ck --data /tmp/syn/lm_eval --limit $cap --out $o/lm-eval.json \
    --tasks wikitext,lambada_openai,piqa,hellaswag,winogrande,arc_easy,arc_challenge,boolq,sciq,copa,openbookqa 2>>"$out/cmd.log"
done
t1=$(date +%s.%N)
echo "separate commands wall_s=$(python3 -c "print(round($t1 - $t0, 1))")" | tee -a "$out/times.txt"
(cd /tmp && tar czf "$out/suite.tar.gz" --exclude='*.jsonl' suite-out)
ls /tmp/suite-out /tmp/suite-out/fox
