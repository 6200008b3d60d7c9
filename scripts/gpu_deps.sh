#!/usr/bin/env bash
# Run on a Debian 12 machine with network: downloads the Debian packages foxeval needs on the
# GPU machine (which has PyTorch + CUDA but no network) into .deps/ (git-ignored).
# Then carry `.deps` to the GPU machine and run scripts/device_build.sh there.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deps
cd .deps
pkgs="libfmt-dev libfmt9 nlohmann-json3-dev libcli11-dev doctest-dev libre2-dev libre2-9
      libblosc-dev libblosc1 libsnappy1v5 liblz4-1 libzstd1"
for p in $pkgs; do
  ls ${p}_*.deb >/dev/null 2>&1 || apt-get download "$p"
done
ls -la
