#!/usr/bin/env bash
# On the GPU machine, after scripts/device_build.sh: what the content digests (model and data
# SHA-256 in every result's identity) cost in a `foxeval loss` run of a random paper-size (760M)
# checkpoint, bf16, on DOCS documents of 65536 random tokens. The same run, whole process timed,
# twice: the model as a plain folder (every file hashed) and the same files in a Hugging Face hub
# cache layout (large files named by their SHA-256 already: nothing hashed but the small ones).
# The data digest (the rows read) is in both. Also the bare `sha256sum` time of the weights.
# Writes OUTDIR/digest-cost-FAMILY-<gpu>.json.
# Usage: scripts/device_digest_cost.sh OUTDIR [FAMILY]   (DOCS=64; family default fox_pro)
set -euo pipefail
out="$1"; fam="${2:-fox_pro}"; docs="${DOCS:-64}"
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="$here/build-gpu/foxeval"
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -oE 'H100|H200|A100' | tr 'A-Z' 'a-z' || echo gpu)"
mkdir -p "$out"
data=/tmp/digest-docs.npy
python3 -c "import numpy as np; np.save('$data', np.random.default_rng(1).integers(0, 50257, size=($docs, 65536)).astype(np.int64))"
ckpt="/tmp/ckpt-$fam"
[ -d "$ckpt" ] || python3 "$here/scripts/make_random_checkpoint.py" "$fam" "$ckpt" --bf16 >/dev/null
# The hub cache layout: blobs named by SHA-256, a snapshot of links, refs/main.
hub=/tmp/digest-hub; repo="$hub/models--bench--$fam"; rev=0123456789abcdef0123456789abcdef01234567
rm -rf "$hub"; mkdir -p "$repo/blobs" "$repo/snapshots/$rev" "$repo/refs"
printf '%s' "$rev" >"$repo/refs/main"
t0=$(date +%s.%N)
for f in "$ckpt"/*; do
  h=$(sha256sum "$f" | cut -c1-64)
  cp "$f" "$repo/blobs/$h"
  ln -s "../../blobs/$h" "$repo/snapshots/$rev/$(basename "$f")"
done
t1=$(date +%s.%N)
sha_s=$(python3 -c "import time,hashlib,glob; t=time.time(); [hashlib.sha256(open(f,'rb').read()).hexdigest() for f in glob.glob('$ckpt/*')]; print(time.time()-t)")
run() {  # label, model, extra flags...: prints the whole process's wall seconds
  local s e label="$1" model="$2"
  shift 2
  s=$(date +%s.%N)
  HF_HUB_CACHE="$hub" "$bin" loss --model "$model" --data "$data" --device cuda --dtype bfloat16 --seq-len 65536 \
    --out "$out/digest-$label.json" "$@" >/dev/null 2>"$out/digest-$label.log"
  e=$(date +%s.%N)
  python3 -c "print($e - $s)"
}
rm -f "$out"/digest-*.json
run warm "$ckpt" --tokens 65536 >/dev/null  # GPU, page cache and kernels warm for both timed runs
rm -f "$out"/digest-*.json
plain=$(run plain "$ckpt")
hubbed=$(run hub "bench/$fam")
python3 - "$out" "$fam" "$gpu" "$plain" "$hubbed" "$sha_s" "$docs" <<'PY'
import json, os, sys, datetime
out, fam, gpu, plain, hub, sha, docs = sys.argv[1], sys.argv[2], sys.argv[3], *map(float, sys.argv[4:7]), int(sys.argv[7])
a, b = (json.load(open(os.path.join(out, f"digest-{k}.json"))) for k in ("plain", "hub"))
same = all(a[k] == b[k] for k in a if k.startswith("val/"))
ida, idb = a["header"]["settings"], b["header"]["settings"]
res = {
    "what": "foxeval loss, random 760M checkpoint, bf16, whole-process wall time: model as a plain folder "
            "(all files hashed) vs the same files in a hub cache layout (large files not hashed)",
    "date": datetime.date.today().isoformat(), "gpu": gpu, "family": fam, "documents": docs, "seq_len": 65536,
    "plain_folder_s": plain, "hub_cache_s": hub, "digest_cost_s": plain - hub,
    "digest_cost_fraction": (plain - hub) / hub, "sha256_of_weights_python_s": sha,
    "model_digest_plain": ida.get("model_digest"), "model_digest_hub": idb.get("model_digest"),
    "model_digest_source_plain": ida.get("model_digest_source"), "model_digest_source_hub": idb.get("model_digest_source"),
    "data_digest": ida.get("data_digest"), "losses_equal": same,
}
dest = os.path.join(out, f"digest-cost-{fam}-{gpu}.json")
json.dump(res, open(dest, "w"), indent=1)
print(json.dumps({k: res[k] for k in ("plain_folder_s", "hub_cache_s", "digest_cost_s", "digest_cost_fraction",
                                      "sha256_of_weights_python_s", "losses_equal")}))
print("same model digest both ways:", res["model_digest_plain"] == res["model_digest_hub"])
PY
