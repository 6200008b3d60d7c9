#!/usr/bin/env bash
# `foxeval score` end to end: JSONL requests in, one answer per line out in the same order; the
# empty-context and rolling quirks of lm-eval's HFLM; batch sizes; errors naming line and field.
# Usage: tests/cli_score_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
# check NAME PYTHON-EXPRESSION: evaluated with a = answers of $tmp/a.jsonl, b = of $tmp/b.jsonl
check() {
  if python3 - "$2" "$tmp/a.jsonl" "$tmp/b.jsonl" <<'PY'
import json, math, os, sys
load = lambda p: [json.loads(l) for l in open(p)] if os.path.exists(p) else None
a, b = load(sys.argv[2]), load(sys.argv[3])
sys.exit(0 if eval(sys.argv[1]) else 1)
PY
  then ok; else bad "$1"; fi
}
model=../shared/fixtures/trained/fox_pro_tiny_pg
[ -d "$model" ] || model=tests/fixtures/official/fox_pro

long_text="$(printf 'The essays are about startups, programming and painting. %.0s' $(seq 12))"
cat >"$tmp/req.jsonl" <<EOF2
{"kind": "loglikelihood", "context": "The most important thing in a startup is", "continuation": " the founders."}
{"kind": "loglikelihood", "context": "Question: is it raining?\nAnswer: ", "continuation": "yes", "task": "extra fields are ignored"}
{"kind": "loglikelihood", "context": "", "continuation": "$long_text"}
{"kind": "loglikelihood_rolling", "text": "$long_text"}
{"kind": "loglikelihood", "context": "Caf\u00e9 \u65e5\u672c", "continuation": " \ud83d\ude42"}
EOF2

expect_ok "score" "$FOXEVAL" score --model $model --requests "$tmp/req.jsonl" --out "$tmp/a.jsonl"
check "one answer per request line" "len(a) == 5 and all(set(x) == {'logprob', 'is_greedy'} for x in a)"
check "log-likelihoods are finite and negative" "all(math.isfinite(x['logprob']) and x['logprob'] < 0 for x in a)"
# lm-eval: an empty context is [BOS] and the continuation starts with BOS; a rolling text's first
# window is the same pair. With max length 16384 both are one identical request.
check "rolling = empty-context loglikelihood of the same text" "abs(a[3]['logprob'] - a[2]['logprob']) < 1e-6"

expect_ok "score --batch-size 1" "$FOXEVAL" score --model $model --requests "$tmp/req.jsonl" --out "$tmp/b.jsonl" --batch-size 1
check "batch size 1 = default batching" "all(abs(x['logprob'] - y['logprob']) < 1e-4 and x['is_greedy'] == y['is_greedy'] for x, y in zip(a, b))"

# Small windows: the rolling text is split (the text has more than 32 tokens), so it differs.
expect_ok "score --max-length 32" "$FOXEVAL" score --model $model --requests <(sed -n 4p "$tmp/req.jsonl") --out "$tmp/b.jsonl" --max-length 32
check "rolling windows of 32 tokens change the answer" "len(b) == 1 and abs(b[0]['logprob'] - a[3]['logprob']) > 1e-3"
expect_error "continuation longer than --max-length" "line 1: the continuation has" \
  "$FOXEVAL" score --model $model --requests <(sed -n 3p "$tmp/req.jsonl") --out "$tmp/x.jsonl" --max-length 32

# bad_requests N NAME TEXT LINES: score refuses $tmp/badN.jsonl holding LINES, its stderr naming TEXT.
bad_requests() {
  printf '%s' "$4" >"$tmp/bad$1.jsonl"
  expect_error "$2" "$3" "$FOXEVAL" score --model $model --requests "$tmp/bad$1.jsonl" --out "$tmp/x.jsonl"
}
bad_requests 1 "malformed JSON names the line" "bad1.jsonl line 2: malformed JSON" \
  $'{"kind": "loglikelihood", "context": "a", "continuation": " b"}\n{"kind": "loglikelihood", "context": "a"\n'
bad_requests 2 "missing field" 'line 1: missing field "continuation"' $'{"kind": "loglikelihood", "context": "a"}\n'
bad_requests 3 "field of the wrong type" 'line 1: field "text" must be a string' $'{"kind": "loglikelihood_rolling", "text": 3}\n'
bad_requests 4 "unknown kind" 'field "kind" is "generate_until"' $'{"kind": "generate_until", "context": "a"}\n'
bad_requests 5 "empty continuation" "line 1: fields \"context\"/\"continuation\"" \
  $'{"kind": "loglikelihood", "context": "abc", "continuation": ""}\n'
bad_requests 6 "not an object" "line 1: a request must be a JSON object" $'[1, 2]\n'
expect_error "missing requests file" "nope.jsonl" "$FOXEVAL" score --model $model --requests "$tmp/nope.jsonl" --out "$tmp/x.jsonl"
expect_error "bad --dtype" "--dtype" "$FOXEVAL" score --model $model --requests "$tmp/req.jsonl" --out "$tmp/x.jsonl" --dtype fp8
[ ! -e "$tmp/x.jsonl" ] && [ ! -e "$tmp/x.jsonl.tmp" ] && ok || bad "no output file after errors"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
