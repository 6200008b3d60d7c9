#!/usr/bin/env bash
# One command from a fresh clone: install, build, and run the main job (`foxeval loss`) on the
# bundled default: a tiny FoX (Pro) checkpoint made by the official code (random weights,
# byte-level vocabulary of 256) and a small token file. Writes results/default-loss.json.
# Builds only the `foxeval` target (the tests are built by scripts/test.sh), and prints how long
# each step took.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
step() { echo "[quickstart] $1: $((SECONDS - t0)) s since the start" >&2; }
scripts/setup.sh foxeval
step "installed and built"
build/foxeval info --model tests/fixtures/official/fox_pro
build/foxeval loss --model tests/fixtures/official/fox_pro --data data/default/tokens.npy --bos-id 0 \
  --out results/default-loss.json
# The committed baseline of this run: a regression check, as CI would do for real results.
build/foxeval check results/default-loss.json --baseline results/baseline/default-loss.json
step "first result (results/default-loss.json) checked"
