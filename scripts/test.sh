#!/usr/bin/env bash
# One command from a fresh clone: install, build, and run every test (CPU; CUDA tests say they
# were skipped when no GPU is present).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cd build
ctest --output-on-failure
