#!/usr/bin/env bash
# On the GPU machine, after scripts/device_build.sh: two identical `foxeval loss` runs per family
# (random paper-size checkpoints, bf16, 4 documents of 16384 random tokens) give the same bits:
# every per-position loss and every averaged loss equal. Prints one line per family; exit 1 if any
# pair differs. Usage: scripts/device_determinism.sh OUTDIR FAMILY...   (make_random_checkpoint.py's)
set -euo pipefail
out="$1"; shift
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
python3 -c "import numpy as np; np.save('/tmp/det.npy', np.random.default_rng(0).integers(0, 50257, size=(4, 16384)).astype(np.int64))"
status=0
for fam in "$@"; do
  ckpt="/tmp/ckpt-$fam"
  [ -d "$ckpt" ] || python3 "$here/scripts/make_random_checkpoint.py" "$fam" "$ckpt" --bf16 >/dev/null
  for run in 1 2; do
    "$here/build-gpu/foxeval" loss --model "$ckpt" --data /tmp/det.npy --device cuda --dtype bfloat16 \
      --seq-len 16384 --out "$out/det-$fam-$run.json" >/dev/null 2>"$out/det-$fam-$run.log"
  done
  python3 - "$out/det-$fam-1.json" "$out/det-$fam-2.json" "$fam" <<'PY' || status=1
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
keys = [k for k in a if k.startswith("val/")]
same = all(a[k] == b[k] for k in keys)
n = len(a["val/loss_per_token"])
print(f"{sys.argv[3]}: {'identical' if same else 'DIFFERENT'} ({len(keys)} values, {n} positions, "
      f"loss_avg_len_16384 {a.get('val/loss_avg_len_16384')})")
sys.exit(0 if same else 1)
PY
done
exit $status
