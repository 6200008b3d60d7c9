#!/usr/bin/env bash
# On the GPU machine: `foxeval ruler run` on a random 760M FoX (Pro) (bf16 weights; the bundled GPT-2
# tokenizer sizes the haystacks) at 4k, 8k, 16k and 32k, a few docs of every task at each length
# (LIMIT, default 8: 104 docs a length over the 13 tasks), one run per length so each has its own wall time; then
# `bench generate` at the same prompt lengths for the memory-bandwidth bound of decoding. The data
# are the committed synthetic fixtures (tests/fixtures/ruler: essays, word lists, Punkt parameters,
# SQuAD/HotpotQA files):
# the speed does not depend on the words, and ../shared does not travel to the GPU machine.
# A random model rarely stops early, so nearly every doc generates its task's max_gen_toks.
# Usage: scripts/device_ruler.sh OUTDIR   (carry .deps)
# Writes OUTDIR/ruler-{L}.json (the results), OUTDIR/summary.json and logs, tarred as OUTDIR/ruler.tar.gz.
set -uo pipefail
out="$1"
here="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/device_lib.sh
source "$here/scripts/device_lib.sh"
mkdir -p "$out/w"
bin="$here/build-gpu/foxeval"
device_build_or_exit "$out" foxeval
ckpt=/tmp/ckpt-fox_pro
[ -f "$ckpt/model.safetensors" ] || python3 "$here/scripts/make_random_checkpoint.py" fox_pro "$ckpt" --bf16 >/dev/null || exit 1
F="$here/tests/fixtures/ruler"
data=(--haystack "$F/haystack" --words "$F/wonderwords" --punkt "$F/nltk_data/tokenizers/punkt_tab/english" --squad "$F/qa" --hotpot "$F/qa")
limit="${LIMIT:-8}"
for L in 4096 8192 16384 32768; do
  echo "== ruler run at $L (limit $limit)"
  t0=$SECONDS
  timeout 420 "$bin" ruler run --model "$ckpt" "${data[@]}" --lengths "$L" --limit "$limit" --device cuda --dtype bfloat16 \
    --out "$out/w/ruler-$L.json" >"$out/w/ruler-$L.out" 2>"$out/w/ruler-$L.log"
  echo "rc=$? wall $((SECONDS - t0)) s"; tail -2 "$out/w/ruler-$L.out"; grep -E "ruler samples: ruler_cwe|error" "$out/w/ruler-$L.log" | head -3
done
echo "== bench generate (the decode bound at the run's prompt lengths)"
timeout 400 "$bin" bench generate --model "$ckpt" --device cuda --dtype bfloat16 --batch 16,64 --prompt-len 4096,8192,16384,32768 \
  --new-tokens 128 --out "$out/w/bench-generate.json" >"$out/w/bench-generate.out" 2>"$out/w/bench-generate.log"
echo "bench rc=$?"; cat "$out/w/bench-generate.out"
python3 - "$out/w" <<'PYEOF' | tee "$out/w/summary.txt"
import glob, json, os, sys
w = sys.argv[1]
rows = []
for p in sorted(glob.glob(os.path.join(w, "ruler-*.json")), key=lambda p: int(p.split("-")[-1][:-5])):
    r = json.load(open(p))
    s = r["samples"]
    el = r["header"]["elapsed_s"]
    prompt = sum(x["prompt_tokens"] for x in s); new = sum(x["new_tokens"] for x in s)
    rows.append({"length": r["lengths"][0], "docs": len(s), "elapsed_s": el, "prompt_tokens": prompt, "new_tokens": new,
                 "tokens_per_s": (prompt + new) / el, "new_tokens_per_s": new / el, "ruler": r["ruler"]})
bound = {}
try:
    b = json.load(open(os.path.join(w, "bench-generate.json")))
    for row in b.get("rows", b.get("results", [])):
        bound[(row.get("prompt_len"), row.get("batch"))] = row
except Exception as e:  # the table above still stands
    print("no bench-generate.json:", e)
for r in rows:
    bs = {k[1]: v for k, v in bound.items() if k[0] == r["length"]}
    r["bench_generate"] = {str(k): {f: v.get(f) for f in ("decode_tokens_per_s", "bound_tokens_per_s", "fraction_of_bound")} for k, v in bs.items()}
    print(f'{r["length"]:>6} {r["docs"]:>4} docs {r["elapsed_s"]:7.1f} s  {r["tokens_per_s"]:9.0f} tok/s  '
          f'{r["new_tokens_per_s"]:7.0f} new tok/s  bench: {r["bench_generate"]}')
json.dump(rows, open(os.path.join(w, "summary.json"), "w"), indent=1)
PYEOF
tar -czf "$out/ruler.tar.gz" -C "$out/w" . && rm -rf "$out/w"
echo "done at ${SECONDS}s"
