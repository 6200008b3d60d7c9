#!/usr/bin/env bash
# README's "Adding a task", held to the letter: foxeval_toy is foxeval plus the toy task of
# tests/toy_task/ (its folder and its one cli file, nothing else touched), and the generic commands
# know it: `table` (its table), `check` (its direction and tolerance), identity (its data path is
# information), `merge` (its shards), `info --tasks`, the announcement's settings and `suite run`.
# Usage: tests/cli_toy_task_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
TOY="$(dirname "$FOXEVAL")/foxeval_toy"
printf '1\n2.5\n4\n7.25\n' >"$tmp/numbers.txt"
mkdir -p "$tmp/moved" && cp "$tmp/numbers.txt" "$tmp/moved/numbers.txt"
run=(toy run --device cpu --data "$tmp/numbers.txt")

expect_ok "run" "$TOY" "${run[@]}" --scale 2 --toy-verbose --out "$tmp/one.json"
grep -q "^toy: settings --scale 2$" "$tmp/err" && ok || { bad "announced settings: --scale, not --toy-verbose"; cat "$tmp/err" >&2; }
for i in 0 1; do expect_ok "shard $i" "$TOY" "${run[@]}" --scale 2 --num-shards 2 --shard-index $i --out "$tmp/p$i.json"; done
expect_ok "merge" "$TOY" merge --out "$tmp/merged.json" "$tmp/p0.json" "$tmp/p1.json"
expect_ok "merged == one run" "$TOY" check "$tmp/merged.json" --baseline "$tmp/one.json"

# Table: its own table; the best score (higher) and the best error (lower) in bold, by its directions.
expect_ok "run x3" "$TOY" "${run[@]}" --scale 3 --out "$tmp/three.json"
expect_ok "table" "$TOY" table "$tmp/one.json" "$tmp/three.json" --label "$tmp/one.json=two" --label "$tmp/three.json=three"
grep -q "Toy task" "$tmp/out" && grep -q "^| two | <u>7.375</u> | \*\*0.125\*\* |" "$tmp/out" \
  && grep -q "^| three | \*\*11.06[23]\*\* | <u>0.188</u> |" "$tmp/out" \
  && ok || { bad "table ranked by the toy's directions"; cat "$tmp/out" >&2; }
expect_error "the binary without the task" "has no table" "$FOXEVAL" table "$tmp/one.json"

# Identity: the same numbers under another path are the same data; its path key is information.
expect_ok "moved data" "$TOY" toy run --device cpu --data "$tmp/moved/numbers.txt" --scale 2 --out "$tmp/moved.json"
expect_ok "check: another path, same data" "$TOY" check "$tmp/moved.json" --baseline "$tmp/one.json"
printf '1\n2.5\n4\n7\n' >"$tmp/other.txt"
expect_ok "other data" "$TOY" toy run --device cpu --data "$tmp/other.txt" --scale 2 --out "$tmp/other.json"
"$TOY" check "$tmp/other.json" --baseline "$tmp/one.json" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "data_digest" "$tmp/err" && ok || { bad "check: other data refused (exit 2)"; cat "$tmp/err" >&2; }

# Check: the error within its declared tolerance (0.25) passes; the score down is WORSENED.
python3 - "$tmp/one.json" "$tmp/worse.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
r["toy_error"] += 0.2
r["toy_score"] -= 1
json.dump(r, open(sys.argv[2], "w"))
PYEOF
"$TOY" check "$tmp/worse.json" --baseline "$tmp/one.json" >"$tmp/out" 2>&1
[ $? -eq 1 ] && grep "toy_score" "$tmp/out" | grep -q WORSENED && ! grep "toy_error" "$tmp/out" | grep -q "WORSENED\|CHANGED" && ok \
  || { bad "check: direction and tolerance of the toy's metrics"; cat "$tmp/out" >&2; }

expect_ok "info --tasks" "$TOY" info --tasks
grep -q "^toy$" "$tmp/out" && grep -q '"--toy-verbose"' "$tmp/out" && grep -q '"toy_file"' "$tmp/out" && ok || bad "info --tasks lists the toy"
# Suite: its definition's suite entry runs it from a one-task suite file (the cap is its --limit),
# as `toy run` with those flags would.
cat >"$tmp/toy.yaml" <<EOF
models:
  - {label: official, path: "$(pwd)/tests/fixtures/official/fox_pro"}
tasks:
  - task: toy
    data: numbers.txt
    scale: 2
cap: 2
EOF
expect_ok "suite run" "$TOY" suite run "$tmp/toy.yaml" --device cpu -o "$tmp/suite"
expect_ok "toy run --limit 2" "$TOY" toy run --device cpu --data "$tmp/numbers.txt" --scale 2 --limit 2 --out "$tmp/two.json"
python3 - "$tmp/suite/official/toy.json" "$tmp/two.json" <<'PYEOF' && ok || bad "suite run: the toy's result is toy run's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["items"] == 2 and a["toy_score"] == b["toy_score"] and a["per_item"] == b["per_item"], (a, b)
PYEOF
grep -q "Toy task" "$tmp/suite/tables.md" && ok || bad "suite run: tables.md has the toy's table"
sed -i 's/^    scale: 2$/    scale: 2\n    scael: 3/' "$tmp/toy.yaml"
expect_error "suite run: a misspelled toy setting" "not a setting of task 'toy'" "$TOY" suite run "$tmp/toy.yaml" --device cpu -o "$tmp/suite2"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
