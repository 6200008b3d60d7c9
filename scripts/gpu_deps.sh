#!/usr/bin/env bash
# Run on a Debian 12 machine with network: downloads the Debian packages foxeval needs on the
# GPU machine (which has PyTorch + CUDA but no network) into .deps/ (git-ignored).
# Then carry `.deps` to the GPU machine and run scripts/device_build.sh there.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deps
cd .deps
pkgs="libfmt-dev libfmt9 nlohmann-json3-dev libcli11-dev doctest-dev libre2-dev libre2-9
      libblosc-dev libblosc1 libsnappy1v5 liblz4-1 libzstd1
      libcurl4-openssl-dev libcurl4 libldap-2.5-0 libssh2-1
      libzip-dev libzip4 python3-jieba libyaml-cpp-dev libyaml-cpp0.7"
# libyaml-cpp: `foxeval suite` files (YAML), its shared library only needs libc/libstdc++.
# libzip: LongBench's data.zip read in place. python3-jieba: only its data files (dict.txt, the
# finalseg tables) are read, by the Chinese LongBench metrics; unpack it and set FOXEVAL_JIEBA_DIR.
# libcurl (the NIAH judge): Debian's libcurl.so.4 needs libldap-2.5.so.0/liblber-2.5.so.0 and
# libssh2.so.1, which the Ubuntu 24.04 GPU image lacks (checked 2026-11-23 with ldconfig -p); the
# rest it links (OpenSSL 3, GnuTLS 30, krb5, nghttp2, idn2, psl, rtmp, brotli, sasl2, zlib, zstd)
# is there, so it is not carried (it would shadow the system's through LD_LIBRARY_PATH).
for p in $pkgs; do
  ls ${p}_*.deb >/dev/null 2>&1 || apt-get download "$p"
done
ls -la
