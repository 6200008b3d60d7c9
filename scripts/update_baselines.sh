#!/usr/bin/env bash
# The one way baselines change: reruns every task end to end (scripts/e2e_tasks.sh) and writes the
# results into results/baseline/, so a reviewer sees every moved number in the diff.
# Usage: scripts/update_baselines.sh [path/to/foxeval]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
"$here/scripts/e2e_tasks.sh" "$tmp" "${1:-$here/build/foxeval}"
while IFS=$'\t' read -r baseline result; do cp "$tmp/$result" "$here/results/baseline/$baseline"; done <"$tmp/baselines.tsv"
# The smoke suite (tests/cli_suite_test.sh `suite check`s against it): suite.json and the result
# files it lists (a longbench folder's run.json, not its official prediction files).
# Its second GPT-2-vocabulary model is made, not committed (seeded: the same bytes every time).
(cd "$here" && .venv/bin/python tests/tools/make_random_gpt2_model.py .scratch/fox_llama_gpt2_random)
"${1:-$here/build/foxeval}" suite run --preset smoke -o "$tmp/suite" >/dev/null
dest="$here/results/baseline/suite-smoke"
rm -rf "$dest" && mkdir -p "$dest"
cp "$tmp/suite/suite.json" "$dest/"
python3 -c 'import json,sys; [print(t["result"]) for t in json.load(open(sys.argv[1]))["tasks"]]' "$tmp/suite/suite.json" |
  while read -r f; do mkdir -p "$dest/$(dirname "$f")" && cp "$tmp/suite/$f" "$dest/$f"; done
git -C "$here" --no-pager diff --stat -- results/baseline/ || true
