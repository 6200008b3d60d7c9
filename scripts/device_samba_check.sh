#!/usr/bin/env bash
# On the GPU machine: Samba (issue #54) end to end. Builds foxeval, runs Samba's GPU tests (the
# selective-scan kernel against its reference, fp32 loss and cached greedy against the official
# fixture, bf16 within bf16 noise), then on random 760M checkpoints (scripts/make_random_checkpoint.py):
#   prefill   `foxeval bench prefill` of Samba and Transformer (Pro) (the row beside) at 16k and 64k,
#             bf16, batch 1 -> OUTDIR/prefill-samba-760m.json
#   anchor    the official Samba on the same checkpoint in the same call (scripts/bench_samba_anchor.py;
#             needs the carried .devdata/anchor, README 'HF generate anchor') -> OUTDIR/anchor-samba.json
#   generate  `foxeval bench generate` at 4k and 32k context: decode speed and peak memory (the ring
#             buffer and states are flat in the context) -> OUTDIR/generate-samba-760m.json
# Usage: scripts/device_samba_check.sh OUTDIR   (STEPS="tests prefill anchor generate" picks steps;
#   LAYERS=n makes smaller checkpoints for a quick try)
set -uo pipefail
out="$1"
here="$(cd "$(dirname "$0")/.." && pwd)"
steps="${STEPS:-tests prefill anchor generate}"
bin="$here/build-gpu/foxeval"
mkdir -p "$out"
# shellcheck source=/dev/null
. "$here/scripts/device_lib.sh"
device_build_or_exit "$out" foxeval foxeval_tests
has() { [[ " $steps " == *" $1 "* ]]; }
if has tests; then
  device_run_tests "$out" samba-tests.log '*samba*,selective scan*'
fi
layers=(); [ -n "${LAYERS:-}" ] && layers=(--layers "$LAYERS")
for fam in samba transformer_pro; do
  [ -f "/tmp/ckpt-$fam/model.safetensors" ] ||
    python3 "$here/scripts/make_random_checkpoint.py" "$fam" "/tmp/ckpt-$fam" --bf16 "${layers[@]}" >/dev/null
done
if has prefill; then
  echo "== bench prefill (at ${SECONDS}s)"
  "$bin" bench prefill --models "samba=/tmp/ckpt-samba,transformer_pro=/tmp/ckpt-transformer_pro" \
    --seq-lens 16384,65536 --repeats 2 --device cuda --dtype bfloat16 --out "$out/prefill-samba-760m.json" \
    2>"$out/prefill-samba-760m.log" || tail -20 "$out/prefill-samba-760m.log"
fi
if has anchor; then
  anchor="$here/.devdata/anchor"
  if [ -f "$anchor/official_src/src/COMMIT" ] && [ -f "$anchor/fla_src/COMMIT" ]; then
    echo "== official Samba (at ${SECONDS}s)"
    PYTHONPATH="$anchor/wheels/einops-0.8.2-py3-none-any.whl${PYTHONPATH:+:$PYTHONPATH}" \
      timeout 400 python3 "$here/scripts/bench_samba_anchor.py" --official-src "$anchor/official_src/src" \
      --fla-src "$anchor/fla_src" --model /tmp/ckpt-samba --seq-lens 16384,65536 --out "$out/anchor-samba.json" \
      2>"$out/anchor-samba.log" || tail -30 "$out/anchor-samba.log"
  else
    echo "no .devdata/anchor (official_src, fla_src): the official Samba was not run"
  fi
fi
if has generate; then
  echo "== bench generate (at ${SECONDS}s)"
  "$bin" bench generate --model /tmp/ckpt-samba --batch 1 --prompt-len 4096,32768 --new-tokens 256 \
    --device cuda --dtype bfloat16 --out "$out/generate-samba-760m.json" \
    2>"$out/generate-samba-760m.log" || tail -20 "$out/generate-samba-760m.log"
fi
echo "done at ${SECONDS}s"
