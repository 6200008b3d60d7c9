#!/usr/bin/env bash
# On the GPU machine, after scripts/device_build.sh: random 760M Mamba-2 / HGRN2 / DeltaNet
# checkpoints, the official code on its kernels (scripts/bench_recurrent_anchor.py), then
# `foxeval bench recurrent` beside it, at 16384 and 65536 tokens. With .devdata/anchor/causal_conv1d_pkg
# (causal-conv1d 1.4.0 built for sm_90, its BUILD.txt says how) the anchor runs the real causal_conv1d
# extension (--causal-conv1d), otherwise its PyTorch stand-in.
# Usage: scripts/device_recurrent_bench.sh OUTDIR   (REPEATS=2 WARMUP=1 SEQ_LENS=16384,65536 FAMILIES="...")
# Writes OUTDIR/anchor-recurrent.json, OUTDIR/recurrent-760m.json and their logs.
set -euo pipefail
out="$1"
here="$(cd "$(dirname "$0")/.." && pwd)"
anchor="$here/.devdata/anchor"
repeats="${REPEATS:-2}"; warmup="${WARMUP:-1}"; lens="${SEQ_LENS:-16384,65536}"
families="${FAMILIES:-mamba2 hgrn2 delta_net}"
mkdir -p "$out"
for d in official_src/src fla_src mamba_src; do
  [ -f "$anchor/$d/COMMIT" ] || { echo "missing $anchor/$d (README: 'HF generate anchor'; mamba_src: mamba_ssm v2.2.2 ops/triton)" >&2; exit 2; }
done
models=""
for fam in $families; do
  ckpt="/tmp/ckpt-$fam"
  [ -f "$ckpt/model.safetensors" ] || python3 "$here/scripts/make_random_checkpoint.py" "$fam" "$ckpt" --bf16
  models="${models:+$models,}$fam=$ckpt"
done
conv=()
if compgen -G "$anchor/causal_conv1d_pkg/causal_conv1d_cuda*.so" >/dev/null; then
  conv=(--causal-conv1d "$anchor/causal_conv1d_pkg")
fi
echo "== official anchor ($models; causal_conv1d: ${conv[1]:-the stand-in})"
PYTHONPATH="$anchor/wheels/einops-0.8.2-py3-none-any.whl${PYTHONPATH:+:$PYTHONPATH}" \
  python3 "$here/scripts/bench_recurrent_anchor.py" --official-src "$anchor/official_src/src" \
  --fla-src "$anchor/fla_src" --mamba-src "$anchor/mamba_src" --models "$models" --seq-lens "$lens" \
  --repeats "$repeats" --warmup "$warmup" "${conv[@]}" --out "$out/anchor-recurrent.json" 2>"$out/anchor-recurrent.log" ||
  { tail -30 "$out/anchor-recurrent.log"; exit 1; }
echo "== foxeval bench recurrent"
"$here/build-gpu/foxeval" bench recurrent --models "$models" --seq-lens "$lens" --device cuda --dtype bfloat16 \
  --repeats "$repeats" --warmup "$warmup" --anchor "$out/anchor-recurrent.json" --out "$out/recurrent-760m.json" \
  2>"$out/recurrent-760m.log" || { tail -30 "$out/recurrent-760m.log"; exit 1; }
