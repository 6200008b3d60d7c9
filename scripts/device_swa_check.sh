#!/usr/bin/env bash
# On the GPU machine: Transformer (SWA) (sliding-window attention) in one or two calls.
#   tests:    build; the window's GPU tests (tests/test_window_attention_cuda.cpp: the prefill
#             kernels with both implementations, every softmax path of the Hopper one, decode, the
#             model in fp32 and bf16, ring slots in a CUDA graph), then the CUDA slot and attention
#             tests that share the code the window touched;
#   bench:    `bench attention --window 2048` (the windowed kernel's TFLOP/s over the pairs it
#             computes beside the full kernel's, head dim 128 as the 760M SWA); random 760M
#             Transformer (Pro) and Transformer (SWA) (window 2048) checkpoints; the official code
#             (scripts/bench_prefill_anchor.py: first --check on the SWA fixture, then 16k and 64k)
#             and `bench prefill` of both at 16k and 64k in the same call;
#   generate: `bench generate` of the SWA at batch 1 and 16 with prompts of 1k, 8k and 32k (peak
#             memory flat in the context: a ring of 2048 positions a layer), the memory check at 32k.
# Usage: scripts/device_swa_check.sh OUTDIR [tests|bench|generate|all]   (default all; carry .deps,
#   and .devdata/anchor for the official rows: README, "HF generate anchor", says how to make it)
# Writes OUTDIR/*.json and logs; the bench JSONs belong under results/bench/.
set -uo pipefail
out="$1"; what="${2:-all}"
here="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/device_lib.sh
source "$here/scripts/device_lib.sh"
mkdir -p "$out"
bin="$here/build-gpu/foxeval"
device_build_or_exit "$out" foxeval foxeval_tests

if [ "$what" = tests ] || [ "$what" = all ]; then
  echo "== window tests (the default prefill kernel: ws on sm_90)"
  device_run_tests "$out" swa-tests.log '*window attention cuda*,*Transformer (SWA)*,*sliding-window*,window_size*'
  echo "== window prefill tests on the mma kernel (FOXEVAL_FA_IMPL=mma)"
  FOXEVAL_FA_IMPL=mma timeout 200 "$here/build-gpu/foxeval_tests" -tc='window attention cuda: prefill*' >"$out/swa-tests-mma.log" 2>&1
  echo "mma tests rc=$?"; grep -E "test cases|ERROR|FAILED|prefill kernel" "$out/swa-tests-mma.log" | head -8
  echo "== CUDA attention, slot and decode-prep tests (the code the window touched)"
  device_run_tests "$out" cuda-tests.log '*attention cuda*,*slots cuda*,*pruning*cuda*,decode slots*'
fi

if [ "$what" = bench ] || [ "$what" = generate ] || [ "$what" = all ]; then
  for fam in transformer_pro transformer_swa; do
    [ "$what" = generate ] && [ "$fam" = transformer_pro ] && continue
    [ -f "/tmp/ckpt-$fam/model.safetensors" ] ||
      python3 "$here/scripts/make_random_checkpoint.py" "$fam" "/tmp/ckpt-$fam" --bf16 >/dev/null || exit 1
  done
fi

if [ "$what" = bench ] || [ "$what" = all ]; then
  echo "== bench attention --window 2048 (head dim 128)"
  timeout 200 "$bin" bench attention --head-dim 128 --window 2048 --out "$out/attention-window-2048.json" 2>&1 | tail -12
  models="transformer_pro=/tmp/ckpt-transformer_pro,transformer_swa=/tmp/ckpt-transformer_swa"
  anchor="$here/.devdata/anchor"
  if [ -f "$anchor/official_src/src/COMMIT" ] && [ -f "$anchor/fla_src/COMMIT" ]; then
    export PYTHONPATH="$anchor/wheels/einops-0.8.2-py3-none-any.whl${PYTHONPATH:+:$PYTHONPATH}"
    echo "== official code: --check on the SWA fixture (fp32, the flash_attn stand-in)"
    timeout 300 python3 "$here/scripts/bench_prefill_anchor.py" --official-src "$anchor/official_src/src" \
      --fla-src "$anchor/fla_src" --check --models "transformer_swa=$here/tests/fixtures/official/transformer_swa" \
      --out "$out/anchor-prefill-check.json" 2>"$out/anchor-prefill-check.log" || tail -20 "$out/anchor-prefill-check.log"
    echo "== official code: per-token loss at 16k and 64k"
    timeout 400 python3 "$here/scripts/bench_prefill_anchor.py" --official-src "$anchor/official_src/src" \
      --fla-src "$anchor/fla_src" --models "$models" --seq-lens 16384,65536 \
      --out "$out/anchor-prefill-swa.json" 2>"$out/anchor-prefill-swa.log" || tail -20 "$out/anchor-prefill-swa.log"
  else
    echo "no $anchor/{official_src/src,fla_src}/COMMIT: the official rows are skipped"
  fi
  echo "== bench prefill"
  timeout 400 "$bin" bench prefill --models "$models" --seq-lens 65536,16384 --device cuda --dtype bfloat16 \
    --out "$out/prefill-swa.json" 2>"$out/prefill-swa.log" | grep -v "^    "
fi

if [ "$what" = generate ] || [ "$what" = all ]; then
  echo "== bench generate (Transformer (SWA))"
  timeout 400 "$bin" bench generate --model /tmp/ckpt-transformer_swa --device cuda --dtype bfloat16 --batch 1,16 \
    --prompt-len 1024,8192,32768 --new-tokens 256 --memory-check-len 32768 --memory-limit-gib 8 \
    --out "$out/generate-transformer_swa-760m.json" 2>"$out/generate-swa.log" | tail -20
fi
echo "done at ${SECONDS}s"
