#!/usr/bin/env bash
# The one way baselines change: reruns every task end to end (scripts/e2e_tasks.sh) and writes the
# results into results/baseline/, so a reviewer sees every moved number in the diff.
# Usage: scripts/update_baselines.sh [path/to/foxeval]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
"$here/scripts/e2e_tasks.sh" "$tmp" "${1:-$here/build/foxeval}"
while IFS=$'\t' read -r baseline result; do cp "$tmp/$result" "$here/results/baseline/$baseline"; done <"$tmp/baselines.tsv"
git -C "$here" --no-pager diff --stat -- results/baseline/ || true
