#!/usr/bin/env bash
# On the GPU machine: `bench prefill` (random 760M FoX (Pro) and Transformer (Pro), bf16, batch 1)
# under each environment setting given (e.g. "FOXEVAL_PREFILL_PREP=0"; "" is the default), ROUNDS
# times interleaved (default 2), so every variant sees the same GPU state. Builds foxeval and its
# tests first and runs the tests named by TESTS (a doctest -tc filter; default: the prefill glue's).
# Prints seconds per document and the stages named in STAGES (default qkv_prep) per model, and keeps
# each run's JSON in OUTDIR as ab-<round>-<i>.json.
# Usage: scripts/device_prefill_ab.sh OUTDIR [SETTING...]   (carry .deps, from scripts/gpu_deps.sh)
#   SEQ_LENS (default 65536), REPEATS (default 2).
set -uo pipefail
out="$1"; shift
here="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/device_lib.sh
source "$here/scripts/device_lib.sh"
device_build_and_test "$out" tests.log "${TESTS:-the one-kernel prefill glue*}"
for fam in fox_pro transformer_pro; do
  [ -d "/tmp/ckpt-$fam" ] || python3 "$here/scripts/make_random_checkpoint.py" "$fam" "/tmp/ckpt-$fam" --bf16 >/dev/null
done
# One round of one setting: `bench prefill` and its seconds per document and STAGES on a line.
one_run() {
  local f="$out/ab-$1-$2.json"
  # shellcheck disable=SC2086  # a setting may hold several VAR=value words
  env $3 timeout 120 "$here/build-gpu/foxeval" bench prefill \
    --models fox_pro=/tmp/ckpt-fox_pro,transformer_pro=/tmp/ckpt-transformer_pro \
    --seq-lens "${SEQ_LENS:-65536}" --repeats "${REPEATS:-2}" --device cuda --dtype bfloat16 --out "$f" >/dev/null 2>&1
  python3 - "$f" "round $1 [${3:-default}]" "${STAGES:-qkv_prep}" <<'PY'
import json, sys
try:
    rows = json.load(open(sys.argv[1]))["rows"]
except (OSError, ValueError) as e:
    print(sys.argv[2], "| no result:", e); sys.exit()
want = sys.argv[3].split(",")
cells = []
for r in rows:
    st = {s["stage"]: s["seconds"] for s in r["stage_table"]["stages"]}
    extra = " ".join(f"{w} {1e3 * st[w]:.2f} ms" for w in want if w in st)
    cells.append(f'{r["model"]} {r["seq_len"]}: {r["seconds_per_document"]:.4f} s/doc {extra}')
print(sys.argv[2], "|", " | ".join(cells))
PY
}
device_ab_rounds one_run "$@"
