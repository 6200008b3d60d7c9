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
