#!/usr/bin/env bash
# On the GPU machine (PyTorch + CUDA preinstalled, no network): unpack the carried Debian
# packages from .deps/ into /opt/deps and build foxeval with CUDA into build-gpu/.
# Usage: [FOXEVAL_UNITY=ON] source scripts/device_build.sh [targets...]   (exports LD_LIBRARY_PATH for the run;
# FOXEVAL_UNITY=ON builds as scripts/setup.sh does on a fresh machine)
set -e
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ ! -d /opt/deps/usr ]; then
  mkdir -p /opt/deps
  for f in "$here"/.deps/*.deb; do dpkg -x "$f" /opt/deps; done
fi
TORCH_PREFIX="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"
export PKG_CONFIG_SYSROOT_DIR=/opt/deps
export PKG_CONFIG_PATH=/opt/deps/usr/lib/x86_64-linux-gnu/pkgconfig:/opt/deps/usr/share/pkgconfig
export LD_LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
# python3-jieba's data (Chinese LongBench metrics), unpacked with the other packages.
[ -d /opt/deps/usr/lib/python3/dist-packages/jieba ] && export FOXEVAL_JIEBA_DIR=/opt/deps/usr/lib/python3/dist-packages/jieba
cxx=g++; [ -x /opt/gcc/bin/g++ ] && cxx=/opt/gcc/bin/g++
cmake -S "$here" -B "$here/build-gpu" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CUDA_HOST_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$TORCH_PREFIX;/opt/deps/usr" ${FOXEVAL_UNITY:+-DFOXEVAL_UNITY=$FOXEVAL_UNITY} >/dev/null
cmake --build "$here/build-gpu" ${1:+--target "$@"}
