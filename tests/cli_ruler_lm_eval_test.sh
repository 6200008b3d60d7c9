#!/usr/bin/env bash
# RULER's goldens are lm-eval 0.4.13's own output: reruns tests/tools/ruler_goldens.py (lm-eval's
# generator code, offline, on the synthetic data it writes) into a scratch folder with the RULER test
# venv that scripts/setup.sh makes, and requires every file it writes to equal the committed one
# under tests/fixtures/ruler/ byte for byte. cli_ruler_test then holds `foxeval ruler samples` to
# those goldens, so foxeval's samples equal what lm-eval generates here.
# Usage: tests/cli_ruler_lm_eval_test.sh path/to/foxeval   (run from the source root; the binary is unused)
set -uo pipefail
PY="${RULER_VENV:-/opt/ruler-venv}/bin/python"
if ! "$PY" -c 'import lm_eval, nltk, wonderwords, numpy, tiktoken; assert lm_eval.__version__ == "0.4.13"' 2>/dev/null; then
  echo "cli_ruler_lm_eval_test: $PY cannot import lm-eval 0.4.13 with nltk, wonderwords, numpy, tiktoken; run scripts/setup.sh" >&2
  exit 1
fi
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
F=tests/fixtures/ruler
cp -r "$F/nltk_data" "$tmp/nltk_data"   # the synthetic Punkt parameters it reads (made by make_punkt_tables.py)
RULER_GOLDENS_OUT="$tmp" "$PY" tests/tools/ruler_goldens.py >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; echo "FAILED: ruler_goldens.py" >&2; exit 1; }
fail=0; n=0
while IFS= read -r f; do
  rel="${f#"$tmp"/}"
  [ "$rel" = log ] && continue
  n=$((n + 1))
  if ! cmp -s "$f" "$F/$rel"; then echo "FAILED: $rel differs from lm-eval's output" >&2; fail=1; fi
done < <(find "$tmp" -type f ! -path "$tmp/nltk_data/*")
[ "$n" -gt 10 ] || { echo "FAILED: only $n files written" >&2; fail=1; }
echo "$n files equal lm-eval 0.4.13's output ($(tail -1 "$tmp/log"))"
exit $fail
