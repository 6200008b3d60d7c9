#!/usr/bin/env bash
# Installs what foxeval needs on Debian 12 (idempotent), then configures and builds build/.
# Usage: scripts/setup.sh [TARGET...]   (CMake targets; default: all of them, tests included.
#        scripts/quickstart.sh builds only `foxeval`, scripts/test.sh everything.)
#   Debian packages: compilers, CMake/Ninja, CLI11, nlohmann/json, re2, fmt, doctest, blosc,
#   libcurl (the NIAH judge's HTTP client), libzip (LongBench's data.zip), yaml-cpp (suite files), libssl-dev (OpenSSL's
#   SHA-256 for the content digests of models and data), python3-jieba (the
#   dictionary and HMM tables LongBench's Chinese metrics segment with; read at run time).
#   LibTorch: from PyPI's torch wheel (2.11, CUDA 13) in .venv/, plus test tooling.
#   CUDA: the CUDA 13.0 toolkit (nvcc) must be installed (as on the CI image): kernels are
#   compiled and linked everywhere, and run where a GPU is.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
pkgs="build-essential cmake ninja-build pkg-config python3-venv libfmt-dev nlohmann-json3-dev libcli11-dev
      doctest-dev libre2-dev libblosc-dev libcurl4-openssl-dev libzip-dev libssl-dev python3-jieba libyaml-cpp-dev"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "[setup] apt-get install$missing" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

export PATH="/usr/local/cuda/bin:$PATH"
if ! command -v nvcc >/dev/null; then
  echo "[setup] error: nvcc (CUDA toolkit 13.0) not found; install it or put it on PATH" >&2
  exit 1
fi

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "[setup] creating .venv" >&2
  "$PY" -m venv .venv
fi
# The torch wheel's dependencies (CUDA libraries from PyPI, ~2.5 GB) are needed only to link and run:
# on a fresh machine they download in the background while the libraries compile (pip_rest below).
pip_rest=""
if ! .venv/bin/python -c 'import torch, numpy, safetensors, tiktoken, pyarrow' 2>/dev/null; then
  .venv/bin/pip install -q --upgrade pip
  if ! .venv/bin/python -c 'import importlib.util as u; assert u.find_spec("torch") and u.find_spec("pyarrow")' 2>/dev/null; then
    echo "[setup] pip install torch 2.11 (LibTorch headers and libraries) and pyarrow" >&2
    .venv/bin/pip install -q --no-deps "$(grep -E '^torch==' scripts/requirements.txt)"
    .venv/bin/pip install -q "$(grep -E '^pyarrow' scripts/requirements.txt)"
  fi
  echo "[setup] pip install the rest of scripts/requirements.txt in the background (.venv/pip-rest.log)" >&2
  .venv/bin/pip install -q -r scripts/requirements.txt > .venv/pip-rest.log 2>&1 &
  pip_rest=$!
fi
wait_for_pip_rest() {
  [ -n "$pip_rest" ] || return 0
  echo "[setup] waiting for pip (the CUDA libraries torch links against)" >&2
  if ! wait "$pip_rest"; then
    echo "[setup] error: pip install -r scripts/requirements.txt failed:" >&2
    cat .venv/pip-rest.log >&2
    exit 1
  fi
  pip_rest=""
}
# Test tooling, only for a build of every target (scripts/test.sh): scripts/quickstart.sh builds
# `foxeval` alone and needs none of it.
if [ $# -eq 0 ]; then
  wait_for_pip_rest  # one pip at a time in .venv
  # lm-eval 0.4.4's own code reads foxeval's --output_path tree in tests/cli_lm_eval_test.sh: its
  # utils.py only (no torch/transformers stack), so the package goes in without its dependencies.
  if ! .venv/bin/python -c 'import importlib.util as u, pytablewriter, yaml, jinja2; assert u.find_spec("lm_eval")' 2>/dev/null; then
    .venv/bin/pip install -q --no-deps lm_eval==0.4.4
    .venv/bin/pip install -q pytablewriter pyyaml jinja2
  fi

  # RULER's test tooling (tests/tools/python_random_goldens.py, make_punkt_tables.py, punkt_goldens.py,
  # ruler_goldens.py, ruler_metric_goldens.py regenerate data/python/punkt_tables.cpp and the goldens
  # under tests/fixtures/ruler/, byte for byte from a fresh venv): lm-eval 0.4.13's RULER generator with
  # only what it imports, nltk (Punkt) with its `regex`, wonderwords, NumPy, tiktoken (the GPT-2 BPE for
  # the stand-in tokenizer). CI reads the goldens and does not run these.
  RULER_VENV="${RULER_VENV:-/opt/ruler-venv}"
  if ! "$RULER_VENV/bin/python" -c 'import nltk, regex, wonderwords, numpy, lm_eval, packaging, tiktoken, yaml' 2>/dev/null; then
    echo "[setup] creating $RULER_VENV (RULER test tooling)" >&2
    $SUDO "$PY" -m venv "$RULER_VENV"
    $SUDO "$RULER_VENV/bin/pip" install -q --no-deps lm-eval==0.4.13
    $SUDO "$RULER_VENV/bin/pip" install -q nltk==3.10.4 regex==2026.11.19 wonderwords==3.0.1 numpy==2.4.6 tqdm packaging \
      tiktoken==0.14.0 pyyaml==6.0.2
  fi
fi

# torch.utils.cmake_prefix_path without importing torch (its CUDA libraries may still be downloading).
TORCH_PREFIX="$(.venv/bin/python -c 'import importlib.util as u, os; print(os.path.join(u.find_spec("torch").submodule_search_locations[0], "share", "cmake"))')"
gen=""; command -v ninja >/dev/null && gen="-G Ninja"
if [ ! -f build/CMakeCache.txt ]; then
  # A fresh folder builds in batches (FOXEVAL_UNITY, CMakeLists.txt): about twice as fast on 2 cores.
  cmake -S . -B build $gen -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" -DFOXEVAL_UNITY=ON >/dev/null
fi
echo "[setup] packages installed and build configured after $SECONDS s" >&2
if [ -n "$pip_rest" ]; then
  # Everything but linking needs only torch's headers: compile the layers while pip downloads.
  cmake --build build -j "$(nproc)" --target foxeval_tasks
  wait_for_pip_rest
fi
targets=""
for t in "$@"; do targets="$targets --target $t"; done
cmake --build build -j "$(nproc)" $targets
echo "[setup] built ${*:-every target} after $SECONDS s" >&2
