#!/usr/bin/env bash
# `foxeval compare`, `table --stderr` and `report` on the committed e2e baselines (results/baseline/,
# which keep per_item scores) and copies with a known change: no model runs.
# Usage: tests/cli_compare_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
B=results/baseline
# A copy of a result: another model (its digest), EXPR applied to every per_item value of METRIC.
derive() {  # derive IN OUT METRIC PYTHON_EXPR_OF_v [SETTING=VALUE]
  python3 - "$@" <<'PY'
import json, sys
src, dst, metric, expr = sys.argv[1:5]
r = json.load(open(src))
r["header"]["settings"]["model_digest"] = "sha256:" + "b" * 64
e = r["per_item"][metric]
e["values"] = [eval(expr, {"v": v}) for v in e["values"]]
for extra in sys.argv[5:]:
    k, val = extra.split("=", 1)
    r["header"]["settings"][k] = val
json.dump(r, open(dst, "w"))
PY
}

# A result against itself: every metric paired, no difference.
expect_ok "compare niah with itself" "$FOXEVAL" compare $B/e2e-niah.json $B/e2e-niah.json
grep -q "| mean | higher | 6 |" "$tmp/out" && grep -q "no clear difference" "$tmp/out" && ok || bad "compare: niah mean, n 6"
# Every cell 3 points better: the interval is [+3, +3], marked, better.
derive $B/e2e-niah.json "$tmp/better.json" mean "v + 3"
expect_ok "compare niah better" "$FOXEVAL" compare $B/e2e-niah.json "$tmp/better.json" --label A --label B
grep -q "| mean | higher | 6 | 1 | 4 | +3 \* | \[+3, +3\] | – | better |" "$tmp/out" && ok || { bad "compare: +3 better"; cat "$tmp/out" >&2; }
# Other data is refused (exit 2), naming the digest.
derive $B/e2e-niah.json "$tmp/other.json" mean "v" "haystack_digest=sha256:$(printf 'c%.0s' {1..64})"
expect_error "compare other data" "haystack_digest" "$FOXEVAL" compare $B/e2e-niah.json "$tmp/other.json"
"$FOXEVAL" compare $B/e2e-niah.json "$tmp/other.json" >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "compare other data exits 2"
# lm-eval: accuracies with McNemar, JSON out; folders pair their results by name.
expect_ok "compare lm-eval json" "$FOXEVAL" compare $B/e2e-lm_eval.json $B/e2e-lm_eval.json --format json -o "$tmp/c.json"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["comparisons"][0]["metrics"]
m={x["metric"]: x for x in c}; a=m["results/piqa/acc,none"]
assert a["n"]==3 and a["difference"]==0 and a["mcnemar"]["p"]==1 and a["better"]=="higher", a
assert m["results/wikitext/word_perplexity,none"]["better"]=="lower"' "$tmp/c.json" && ok || bad "compare json"
mkdir -p "$tmp/x" "$tmp/y"; cp $B/e2e-niah.json "$tmp/x/niah.json"; cp "$tmp/better.json" "$tmp/y/niah.json"
cp $B/e2e-longbench.json "$tmp/x/longbench.json"
expect_ok "compare folders" "$FOXEVAL" compare "$tmp/x" "$tmp/y"
grep -q "### niah: y vs x" "$tmp/out" && grep -q "longbench.json has no counterpart" "$tmp/err" && ok || bad "compare folders"
expect_error "compare a file and a folder" "two result files or two folders" "$FOXEVAL" compare "$tmp/x" $B/e2e-niah.json

# Tables: n always, ± on request.
expect_ok "table --stderr" "$FOXEVAL" table $B/e2e-niah.json --stderr
grep -q "| \*n\* | 6 |" "$tmp/out" && grep -q "±" "$tmp/out" && ok || bad "table shows n and ±"
expect_ok "report --stderr" "$FOXEVAL" report $B/e2e-niah.json $B/e2e-lm_eval.json --stderr -o "$tmp/r.html"
grep -q 'class="item-counts"' "$tmp/r.html" && grep -q "±" "$tmp/r.html" && ok || bad "report shows n and ±"

# -o and --out are one flag wherever a command writes a file.
for cmd in "loss" "niah run" "niah score" "longbench run" "lm-eval run" "merge" "score" "table" "report" "compare" \
  "inspect gates" "bench prefill"; do
  # shellcheck disable=SC2086
  "$FOXEVAL" $cmd --help 2>&1 | grep -q -- "-o,--out" && ok || bad "$cmd --help lists -o,--out"
done
"$FOXEVAL" merge -o "$tmp/m.json" "$tmp/nope.json" >/dev/null 2>"$tmp/err"; grep -q "nope.json" "$tmp/err" && ok || bad "merge -o parses"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
