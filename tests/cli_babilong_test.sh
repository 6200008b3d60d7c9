#!/usr/bin/env bash
# `foxeval babilong requests | run` end to end on the CPU: the requests written equal lm-eval 0.4.13's
# (tests/fixtures/babilong/golden.json, made by lm-eval itself); a run over the default tasks at the
# lengths present, through the runner (header, shards merged == one run), its table; refusals.
# Usage: tests/cli_babilong_test.sh path/to/foxeval   (run from the repository root)
PY=.venv/bin/python
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
trained=../shared/fixtures/trained/fox_pro_tiny_pg
fix=tests/fixtures/babilong
offline_hub "$fix"

expect_ok "requests" "$FOXEVAL" babilong requests --tasks $(seq -s, -f 'qa%g' 1 20) --out "$tmp/req.jsonl"
$PY - "$tmp/req.jsonl" $fix/golden.json <<'PYEOF' && ok || bad "requests equal lm-eval's"
import json, sys
mine = [json.loads(l) for l in open(sys.argv[1])]
gold = json.load(open(sys.argv[2]))["requests"]
key = lambda r: (r["length"], r["task"], r["doc_id"])
assert len(mine) == len(gold) == 75, (len(mine), len(gold))
m = {key(r): r for r in mine}
for g in gold:
    assert m[key(g)]["context"] == g["context"], key(g)
    assert m[key(g)]["gen_kwargs"] == g["gen_kwargs"], key(g)
PYEOF

run=(--model $trained --limit 1 --batch-size 4)
expect_ok "run" "$FOXEVAL" babilong run "${run[@]}" --out "$tmp/r.json"
head -1 "$tmp/out" | grep -q "^task	0k	2k$" && grep -q "^qa5	" "$tmp/out" && grep -q "^mean	" "$tmp/out" && ok || bad "task x length table printed"
for i in 0 1; do
  expect_ok "shard $i" "$FOXEVAL" babilong run "${run[@]}" --num-shards 2 --shard-index $i --out "$tmp/p$i.json"
done
expect_ok "merge" "$FOXEVAL" merge --out "$tmp/m.json" "$tmp/p0.json" "$tmp/p1.json"
$PY - "$tmp/r.json" "$tmp/m.json" <<'PYEOF' && ok || bad "result layout / merge"
import json, sys
r, m = (json.load(open(p)) for p in sys.argv[1:3])
assert r["header"]["task"] == "babilong" and r["kind"] == "foxeval-babilong"
assert r["tasks"] == ["qa1", "qa2", "qa3", "qa4", "qa5"] and r["lengths"] == ["0k", "2k"], (r["tasks"], r["lengths"])
assert len(r["samples"]) == 10 and all(s["new_tokens"] <= 16 for s in r["samples"])
assert r["acc"] == m["acc"] and r["samples"] == m["samples"], "two shards merged differ from one run"
n = sum(s["acc"] for s in r["samples"] if s["length"] == "2k")
assert abs(r["mean_by_length"]["2k"] - n / 5) < 1e-12
PYEOF
expect_ok "table" "$FOXEVAL" table "$tmp/r.json"
grep -q "BABILong: accuracy" "$tmp/out" && grep -q "BABILong qa3" "$tmp/out" && ok || bad "babilong tables"
expect_ok "plot" "$FOXEVAL" plot babilong "$tmp/r.json" "$tmp/m.json" --label A --label B -o "$tmp/b.svg"
[ "$(grep -c '<polyline' "$tmp/b.svg")" -eq 2 ] && grep -q ">2k<" "$tmp/b.svg" && ok || bad "plot: a line per result over the lengths"
expect_ok "report" "$FOXEVAL" report "$tmp/r.json" -o "$tmp/r.html"
grep -q 'id="figure-babilong"' "$tmp/r.html" && ok || bad "report: the BABILong figure"

expect_error "absent length" "length 8k (--lengths) is not in" "$FOXEVAL" babilong run "${run[@]}" --lengths 8k --out "$tmp/x.json"
expect_error "unknown task" "unknown task 'qa0'" "$FOXEVAL" babilong requests --tasks qa0 --out "$tmp/x.jsonl"
expect_error "no data" "datasets.load_dataset('RMT-team/babilong-1k-samples', '0k', split='qa1')" \
  "$FOXEVAL" babilong requests --data "$tmp/empty" --out "$tmp/x.jsonl"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
