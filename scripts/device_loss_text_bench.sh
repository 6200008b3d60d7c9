#!/usr/bin/env bash
# On the GPU machine, after scripts/device_build.sh: `foxeval loss --text` against `foxeval loss --data`
# on the same tokens, with a random 760M checkpoint at 65536 tokens: the text run's s/document
# (tokenizing included on the first run, read from the cache on the second) beside the token rows',
# and the two results' per-token loss compared bit for bit.
# The corpus: DOCS documents (default 8) of ~90k tokens each, made from this repository's own text
# files shuffled (no data to carry).
# Usage: [DOCS=8] [FAMILY=fox_pro] scripts/device_loss_text_bench.sh OUTDIR
set -euo pipefail
out="$1"
here="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/device_lib.sh
source "$here/scripts/device_lib.sh"
fam="${FAMILY:-fox_pro}"
device_bench_setup "$out" "$fam"
python3 - "$here" "$out/corpus.jsonl" "${DOCS:-8}" <<'PYEOF'
import glob, json, os, random, sys
here, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = sorted(glob.glob(os.path.join(here, "**", "*.cpp"), recursive=True) + glob.glob(os.path.join(here, "*.md")))
texts = [open(f, encoding="utf-8", errors="replace").read() for f in files if "/build" not in f]
rng = random.Random(0)
with open(path, "w") as f:
    for d in range(n):
        parts, size = [], 0
        while size < 400_000:  # ~90k GPT-2 tokens of code and prose
            t = rng.choice(texts); parts.append(t); size += len(t)
        f.write(json.dumps({"text": "\n".join(parts)}) + "\n")
PYEOF
common=(--model "$ckpt" --device cuda --dtype bfloat16 --seq-len 65536)
rm -f "$out"/text.json* "$out"/rows.json*
for run in text-first text-cached; do
  echo "== $run"
  /usr/bin/time -f "wall %e s" "$fox" loss "${common[@]}" --text "$out/corpus.jsonl" --out "$out/text.json" \
    2>"$out/$run.log" | grep -E "s/document|tokens/s|documents" || tail -5 "$out/$run.log"
  grep -E "\[loss\]|wall" "$out/$run.log"
  [ "$run" = text-first ] && mv "$out/text.json" "$out/text-first.json"
done
# The same windows as token rows: the first 65536 tokens of each document, from the token cache.
python3 - "$out" <<'PYEOF'
import glob, sys
import numpy as np
out = sys.argv[1]
b = open(glob.glob(f"{out}/text.json.tokens-*.bin")[0], "rb").read()
assert b[:8] == b"FXTOK001"
docs, toks = np.frombuffer(b[8:24], dtype=np.int64)
off = np.frombuffer(b[24:24 + 8 * (docs + 1)], dtype=np.int64)
ids = np.frombuffer(b[24 + 8 * (docs + 1):], dtype=np.int32)
rows = np.stack([ids[off[d]:off[d] + 65536] for d in range(docs) if off[d + 1] - off[d] >= 65536]).astype(np.uint16)
np.save(f"{out}/rows.npy", rows)
print("rows.npy", rows.shape)
PYEOF
echo "== rows"
"$fox" loss "${common[@]}" --data "$out/rows.npy" --out "$out/rows.json" 2>"$out/rows.log" | grep -E "s/document|tokens/s|documents"
python3 - "$out" <<'PYEOF'
import json, sys
out = sys.argv[1]
t, r = json.load(open(f"{out}/text.json")), json.load(open(f"{out}/rows.json"))
same = t["val/loss_per_token"] == r["val/loss_per_token"]
print(f"per-token loss text == rows, bit for bit: {same}; s/doc text {t['seconds_per_document']:.3f} rows {r['seconds_per_document']:.3f}")
PYEOF
