#!/usr/bin/env bash
# Shared steps of the scripts/device_*.sh calls on the GPU machine; source it, then call:
#   device_build_or_exit OUTDIR TARGET...   source scripts/device_build.sh for TARGETs (its
#     environment stays for the run), quietly; when the build fails its log goes to
#     OUTDIR/build.log (the device tool returns OUTDIR), its tail to stdout, and the script exits 1.
#     Afterwards errors no longer stop the script (set +e: one failed step must not lose the rest).
device_build_or_exit() {
  local out="$1"; shift
  # shellcheck source=/dev/null
  if ! source "$(dirname "${BASH_SOURCE[0]}")/device_build.sh" "$@" >/tmp/foxeval-build.log 2>&1; then
    cp /tmp/foxeval-build.log "$out/build.log"; tail -30 "$out/build.log"; exit 1
  fi
  set +e
  echo "build done at ${SECONDS}s"
}
#   device_build_and_test OUTDIR LOG FILTER   OUTDIR made, foxeval and its tests built
#     (device_build_or_exit), then the tests matching FILTER (device_run_tests): the A/B scripts' start.
device_build_and_test() {
  mkdir -p "$1"
  device_build_or_exit "$1" foxeval foxeval_tests
  device_run_tests "$@"
}
#   device_run_tests OUTDIR LOG FILTER   the test binary's cases matching FILTER (a doctest -tc
#     filter) within 200 s; the log goes to OUTDIR/LOG, its summary and errors to stdout.
device_run_tests() {
  local out="$1" log="$2" filter="$3" here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  timeout 200 "$here/build-gpu/foxeval_tests" -tc="$filter" >"$out/$log" 2>&1
  echo "tests rc=$? (at ${SECONDS}s)"; grep -E "test cases|ERROR|FAILED|CHECK" "$out/$log" | head -12
}
#   device_ab_rounds FN SETTING...   FN ROUND I SETTING for every environment setting given ("" is
#     the default; a setting may hold several VAR=value words), ROUNDS times interleaved (default
#     2), so every variant sees the same GPU state.
device_ab_rounds() {
  local fn="$1"; shift
  local settings=("$@") round i
  [ ${#settings[@]} -eq 0 ] && settings=("")
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for i in "${!settings[@]}"; do "$fn" "$round" "$i" "${settings[$i]}"; done
  done
  echo "done at ${SECONDS}s"
}
#   device_random_checkpoint FAMILY [ARGS...]   /tmp/ckpt-FAMILY: a random bf16 checkpoint of
#     scripts/make_random_checkpoint.py (ARGS go to it, e.g. --layers 4), made once per machine;
#     the script exits 1 when it cannot be made.
device_random_checkpoint() {
  local fam="$1" here; shift
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  [ -d "/tmp/ckpt-$fam" ] || python3 "$here/scripts/make_random_checkpoint.py" "$fam" "/tmp/ckpt-$fam" --bf16 "$@" >/dev/null ||
    { echo "could not make /tmp/ckpt-$fam" >&2; exit 1; }
}
#   device_bench_setup OUTDIR FAMILY   for a benchmark of a built foxeval on a random checkpoint:
#     exits 2 unless build-gpu/foxeval is built (scripts/device_build.sh), makes the checkpoint
#     (device_random_checkpoint) and OUTDIR, and sets fox (the binary) and ckpt (/tmp/ckpt-FAMILY).
device_bench_setup() {
  fox="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build-gpu/foxeval"
  [ -x "$fox" ] || { echo "no $fox: source scripts/device_build.sh foxeval first" >&2; exit 2; }
  device_random_checkpoint "$2"
  ckpt="/tmp/ckpt-$2"
  mkdir -p "$1"
}
#   device_restore_fixtures   ../shared does not travel to the GPU machine, so the tests that read
#     ../shared/fixtures/trained fail there; a carried .devdata/trained.tar.xz (made here with
#     `tar -cJf .devdata/trained.tar.xz -C ../shared/fixtures trained`, ~17 MB: the tree, .deps and
#     it fit the 64 MiB a call carries) is unpacked there first. Without it nothing happens.
device_restore_fixtures() {
  local here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  [ -f "$here/.devdata/trained.tar.xz" ] && [ ! -d "$here/../shared/fixtures/trained" ] || return 0
  mkdir -p "$here/../shared/fixtures" && tar -xJf "$here/.devdata/trained.tar.xz" -C "$here/../shared/fixtures" &&
    echo "restored ../shared/fixtures/trained from .devdata/trained.tar.xz"
}
