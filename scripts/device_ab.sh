#!/usr/bin/env bash
# On the GPU machine: this tree against a base commit, same machine, same calls (#50: "GPU tests
# pass; bench prefill and bench generate within noise of today, same call, before/after"):
#   tests  builds this tree (foxeval, foxeval_tests), keeps the binary, and runs the GPU tests (every
#          "*cuda*" case, the generation engine's cases, the one-kernel prefill glue, the switch
#          registry);
#   base   swaps the base commit's sources in (from .devdata/ab_base.tar.gz), rebuilds foxeval in the
#          same build folder, keeps that binary, and puts this tree's sources back (touched, so the
#          next build recompiles them);
#   ab     with both binaries kept: `foxeval loss` of both on the same random 760M checkpoints (bf16,
#          4 x 16384 random tokens): every per-position and averaged loss the same bits (FAMILIES,
#          default fox_pro hgrn2 delta_net: the GEMMs and attention, the GLA and delta-rule scans);
#          then `bench prefill` (FoX (Pro) at 64k and 16k: s/doc, the swiglu and loss stages) and
#          `bench generate` (FoX (Pro), batch 1 and 16, prompt 1024 and 8192, 128 new tokens),
#          base and this tree interleaved ROUNDS times (default 2).
#   all    the three in order (a warm build folder; each mode alone fits one device call cold).
# The binaries live in /tmp/device-ab, which lasts while the machine stays warm: run the modes in
# calls back to back. Usage: scripts/device_ab.sh OUTDIR [all|tests|base|ab]; carry .deps,
# .devdata/trained.tar.xz (the trained generation fixtures) and .devdata/ab_base.tar.gz, made in the
# checkout with: git archive --format=tar.gz -o .devdata/ab_base.tar.gz BASE -- CMakeLists.txt cli \
#   data kernels models tasks tests ':(exclude)tests/fixtures'
# Writes OUTDIR/device-ab.tar.gz (logs and JSONs) and prints a summary; exit 1 when a build or a
# test fails or a loss differs.
set -uo pipefail
out="$1"; what="${2:-all}"
here="$(cd "$(dirname "$0")/.." && pwd)"
base_tar="$here/.devdata/ab_base.tar.gz"
work=/tmp/device-ab
mkdir -p "$work/logs" "$out"
[ "$what" != base ] && [ "$what" != all ] || [ -f "$base_tar" ] || { echo "no $base_tar (see Usage)"; exit 2; }
# shellcheck source=scripts/device_lib.sh
source "$here/scripts/device_lib.sh"
finish() {
  tar -czf "$out/device-ab.tar.gz" -C "$work" logs
  echo "done at ${SECONDS}s"
}
status=0

if [ "$what" = tests ] || [ "$what" = all ]; then
  echo "== tests: this tree, build and GPU tests"
  device_build_or_exit "$out" foxeval foxeval_tests  # a failed build leaves OUTDIR/build.log
  cp "$here/build-gpu/foxeval" "$work/foxeval-new"
  device_restore_fixtures  # tests that read ../shared/fixtures/trained, where .devdata/trained.tar.xz is carried
  timeout 330 "$here/build-gpu/foxeval_tests" -tc='*cuda*,the one-kernel prefill glue*,the forget gate scan*,switches*,generate:*,generate_until:*,decode slots*' \
    -tce='*timings*' >"$work/logs/tests-new.log" 2>&1
  rc=$?; [ $rc -eq 0 ] || status=1
  echo "tests rc=$rc (at ${SECONDS}s)"; grep -E "test cases|ERROR|FAILED" "$work/logs/tests-new.log" | head -12
  [ "$what" = tests ] && { finish; exit $status; }
fi

if [ "$what" = base ] || [ "$what" = all ]; then
echo "== base: the base commit's sources, rebuilt in place"
mkdir -p "$work/base" && tar -xzf "$base_tar" -C "$work/base"
# swap BASE REPO STASH: every file of BASE that differs in REPO goes in (REPO's copy to STASH), and
# every REPO file under BASE's folders that BASE lacks goes to STASH; restore puts STASH back.
swap() {
  python3 - "$@" <<'PY'
import filecmp, json, os, shutil, sys
mode, base, repo, stash = sys.argv[1:5]
manifest = os.path.join(stash, "manifest.json")
if mode == "restore":
    m = json.load(open(manifest))
    for rel in m["added"]:  # files the base brought in
        os.remove(os.path.join(repo, rel))
    for rel in m["saved"]:
        dst = os.path.join(repo, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(os.path.join(stash, "files", rel), dst)
        os.utime(dst)  # newer than the base's objects: the next build recompiles it
    print(f"restored {len(m['saved'])} files, removed {len(m['added'])}")
    sys.exit()
saved, added = [], []
def keep(rel):
    src = os.path.join(repo, rel)
    os.makedirs(os.path.dirname(os.path.join(stash, "files", rel)), exist_ok=True)
    shutil.copy2(src, os.path.join(stash, "files", rel))
    saved.append(rel)
base_files = set()
for root, _, files in os.walk(base):
    for f in files:
        rel = os.path.relpath(os.path.join(root, f), base)
        base_files.add(rel)
        dst = os.path.join(repo, rel)
        if os.path.exists(dst) and filecmp.cmp(dst, os.path.join(root, f), shallow=False):
            continue
        if os.path.exists(dst):
            keep(rel)
        else:
            added.append(rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(os.path.join(root, f), dst)  # fresh mtime: rebuilt
tops = sorted({rel.split("/")[0] for rel in base_files if "/" in rel})
for top in tops:
    for root, dirs, files in os.walk(os.path.join(repo, top)):
        if os.path.relpath(root, repo).startswith("tests/fixtures"):
            dirs[:] = []
            continue
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), repo)
            if rel not in base_files:
                keep(rel)
                os.remove(os.path.join(repo, rel))
json.dump({"saved": saved, "added": added}, open(manifest, "w"))
print(f"base sources in: {len(saved)} files differ or are new here, {len(added)} only in the base")
PY
}
mkdir -p "$work/stash"
if swap in "$work/base" "$here" "$work/stash"; then
  (cd "$here" && source scripts/device_build.sh foxeval) >"$work/logs/build-base.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] && cp "$here/build-gpu/foxeval" "$work/foxeval-base"
  echo "base build rc=$rc (at ${SECONDS}s)"; [ $rc -eq 0 ] || { tail -20 "$work/logs/build-base.log"; status=1; }
  swap restore "$work/base" "$here" "$work/stash"
else
  echo "the swap failed"; status=1
fi
  [ -x "$work/foxeval-base" ] || { finish; exit 1; }
  [ "$what" = base ] && { finish; exit $status; }
fi

for v in base new; do [ -x "$work/foxeval-$v" ] || { echo "no $work/foxeval-$v: run the tests and base modes first"; finish; exit 2; }; done
export LD_LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}  # as device_build.sh exports it
echo "== ab: foxeval loss, base vs this tree: the same bits"
python3 -c "import numpy as np; np.save('$work/tokens.npy', np.random.default_rng(0).integers(0, 50257, size=(4, 16384)).astype(np.int64))"
for fam in ${FAMILIES:-fox_pro hgrn2 delta_net}; do
  ckpt="/tmp/ckpt-$fam"
  [ -f "$ckpt/model.safetensors" ] || python3 "$here/scripts/make_random_checkpoint.py" "$fam" "$ckpt" --bf16 >/dev/null
  for v in base new; do
    timeout 120 "$work/foxeval-$v" loss --model "$ckpt" --data "$work/tokens.npy" --device cuda --dtype bfloat16 \
      --seq-len 16384 --out "$work/logs/loss-$fam-$v.json" >/dev/null 2>"$work/logs/loss-$fam-$v.log"
  done
  python3 - "$work/logs/loss-$fam-base.json" "$work/logs/loss-$fam-new.json" "$fam" <<'PY' || status=1
import json, sys
try:
    a, b = (json.load(open(p)) for p in sys.argv[1:3])
except (OSError, ValueError) as e:
    print(f"{sys.argv[3]}: no result ({e})"); sys.exit(1)
keys = [k for k in a if k.startswith("val/")]
diff = [k for k in keys if a[k] != b.get(k)]
n = len(a.get("val/loss_per_token", []))
print(f"{sys.argv[3]}: {'identical' if keys and not diff else 'DIFFERENT ' + ','.join(diff[:5])} "
      f"({len(keys)} values, {n} positions, loss_avg_len_16384 {a.get('val/loss_avg_len_16384')})")
sys.exit(0 if keys and not diff else 1)
PY
done
echo "(at ${SECONDS}s)"

# bench_round KIND ROUND I ARGS...: `foxeval bench KIND ARGS` of the base (I = 0) or this tree's
# binary, and a line of its rows (s/doc and the GEMM stages for prefill; rates and wall for generate).
bench_round() {
  local kind="$1" round="$2" v=base f
  [ "$3" = 0 ] || v=new
  shift 3
  f="$work/logs/$kind-$v-$round.json"
  timeout 150 "$work/foxeval-$v" bench "$kind" "$@" --device cuda --dtype bfloat16 --out "$f" >/dev/null \
    2>"$work/logs/$kind-$v-$round.log"
  python3 - "$f" "round $round $v" "$kind" <<'PY'
import json, sys
try:
    rows = json.load(open(sys.argv[1]))["rows"]
except (OSError, ValueError, KeyError) as e:
    print(sys.argv[2], "| no result:", e); sys.exit()
cells = []
for r in rows:
    if sys.argv[3] == "prefill":
        st = {s["stage"]: s["seconds"] for s in r["stage_table"]["stages"]}
        extra = " ".join(f"{w} {1e3 * st[w]:.2f} ms" for w in ("swiglu", "loss") if w in st)
        cells.append(f'{r["seq_len"]}: {r["seconds_per_document"]:.4f} s/doc {extra}')
    else:
        cells.append(f'b{r["batch"]} p{r["prompt_len"]}: decode {r["decode_tokens_per_s"]:.0f} tok/s, '
                     f'prefill {r["prefill_tokens_per_s"]:.0f} tok/s, wall {r["wall_s"]:.2f} s')
print(sys.argv[2], "|", " | ".join(cells))
PY
}
prefill_run() { bench_round prefill "$1" "$2" --models fox_pro=/tmp/ckpt-fox_pro --seq-lens 65536,16384 --repeats 2; }
generate_run() {
  bench_round generate "$1" "$2" --model /tmp/ckpt-fox_pro --batch 1,16 --prompt-len 1024,8192 --new-tokens 128
}
echo "== ab: bench prefill FoX (Pro), base and this tree interleaved"
device_ab_rounds prefill_run base new
echo "== ab: bench generate FoX (Pro), base and this tree interleaved"
device_ab_rounds generate_run base new
finish
exit $status
