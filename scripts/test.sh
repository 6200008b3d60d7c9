#!/usr/bin/env bash
# One command from a fresh clone: install, build, and run every test (CPU; CUDA tests say they
# were skipped when no GPU is present).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Test tooling only: `zip` makes archives as users do (tests/cli_longbench_zip_test.sh).
if ! command -v zip >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "[test] apt-get install zip (makes LongBench-style data.zip archives in a test)" >&2
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq zip >/dev/null
fi
# Test tooling only: headless Chromium renders `foxeval report` in tests/cli_report_test.sh.
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "[test] apt-get install chromium (renders the HTML report in a test)" >&2
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null ||
    echo "[test] chromium could not be installed: the report's rendering test will say SKIP" >&2
fi
cd build
ctest --output-on-failure
