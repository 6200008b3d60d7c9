#!/usr/bin/env bash
# `foxeval bench generate` on the CPU with the tiny FoX (Pro) fixture: the JSON's rows (timings,
# bound and fraction consistent with each other, every request decoded to its length), the memory
# check (taken from the grid or run as an extra row), the anchor rows matched by batch and prompt
# length (and the missing ones named), and errors for bad flags and anchor files (nothing written).
# Usage: tests/cli_bench_generate_test.sh path/to/foxeval   (run from the repository root)
PY=.venv/bin/python
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
fox=tests/fixtures/official/fox_pro
common=(bench generate --model $fox --new-tokens 5 --bandwidth-gbs 50)
base=("${common[@]}" --device cpu --batch 1,2 --prompt-len 16,40)

# An anchor as scripts/bench_generate_anchor.py writes it: rows for (1, 16) and (2, 40, out of memory).
cat >"$tmp/anchor.json" <<'EOF'
{"gpu": "cpu", "official_commit": "883f260", "new_tokens": 64,
 "rows": [{"batch": 1, "context": 16, "decode_tokens_per_s": 2.5, "ms_per_step": 400.0, "prefill_tokens_per_s": 8.0, "peak_gib": 0.1},
          {"batch": 2, "context": 40, "new_tokens": 64, "error": "out of memory: test"}]}
EOF

expect_ok "run" "$FOXEVAL" "${base[@]}" --memory-check-len 24 --anchor "$tmp/anchor.json" --out "$tmp/a.json"
grep -q "decode_t/s" "$tmp/out" && grep -q "of_bound" "$tmp/out" && ok || bad "prints the table"
grep -q "no anchor row for batch 2 at 16, batch 1 at 40" "$tmp/out" && ok || bad "names the rows without an anchor"
grep -q "memory check: not on a GPU" "$tmp/out" && ok || bad "prints the memory check"
$PY - "$tmp/a.json" <<'PYEOF' && ok || bad "JSON: rows, bound, memory check, anchor"
import json, sys
r = json.load(open(sys.argv[1]))
for k in ("gpu", "date", "git_revision", "machine", "model", "family", "num_parameters", "dtype", "bandwidth_bytes_per_s"):
    assert k in r, k
assert r["gpu"] == "cpu" and r["bandwidth_bytes_per_s"] == 50e9 and r["bandwidth_measured"] is False
assert r["header"]["task"] == "bench-generate" and r["git_revision"] == r["header"]["foxeval_version"]
assert r["machine"]["cpu"]
rows = r["rows"]
assert [(x["prompt_len"], x["batch"]) for x in rows] == [(16, 1), (16, 2), (40, 1), (40, 2)], rows
for x in rows:
    assert "error" not in x, x
    b, n = x["batch"], x["new_tokens"]
    assert n == 5 and x["fits"] is True and x["slots"] == b and x["oom_backoffs"] == 0
    assert x["generated_tokens"] == b * n and x["prompt_tokens"] == b * x["prompt_len"]
    assert x["wall_s"] > 0 and x["prefill_s"] > 0 and x["decode_s"] > 0 and x["wall_s"] >= x["decode_s"]
    assert x["weight_bytes"] == 4 * r["num_parameters"]  # float32
    assert x["state_bytes"] > 0
    bound = b / ((x["weight_bytes"] + x["state_bytes"]) / 50e9)
    assert abs(x["bound_tokens_per_s"] / bound - 1) < 1e-9
    dec = b * (n - 1) / x["decode_s"]
    assert abs(x["decode_tokens_per_s"] / dec - 1) < 1e-9
    assert abs(x["fraction_of_bound"] / (dec / bound) - 1) < 1e-9
    assert abs(x["prefill_tokens_per_s"] / (x["prompt_tokens"] / x["prefill_s"]) - 1) < 1e-9
    assert "peak_allocated_bytes" not in x  # no GPU
# state grows with the context: 40-token rows hold more per row than 16-token ones
assert rows[2]["state_bytes"] > rows[0]["state_bytes"] and rows[1]["state_bytes"] == 2 * rows[0]["state_bytes"]
# anchor: (1, 16) matched with a speed-up, (2, 40) matched but failed there, two rows without one
assert rows[0]["anchor"]["decode_tokens_per_s"] == 2.5
assert abs(rows[0]["speedup_decode"] - rows[0]["decode_tokens_per_s"] / 2.5) < 1e-9
assert abs(rows[0]["speedup_prefill"] - rows[0]["prefill_tokens_per_s"] / 8.0) < 1e-9
assert rows[3]["anchor"]["error"].startswith("out of memory") and "speedup_decode" not in rows[3]
assert rows[1]["anchor"] is None and rows[2]["anchor"] is None
assert r["anchor_missing"] == [{"batch": 2, "prompt_len": 16}, {"batch": 1, "prompt_len": 40}]
assert r["anchor"]["official_commit"] == "883f260" and r["anchor"]["file"].endswith("anchor.json")
m = r["memory_check"]
assert m["from"] == "extra row" and m["prompt_len"] == 24 and m["batch"] == 1 and m["under_limit"] is None
assert m["limit_bytes"] == 8 * 2**30
PYEOF

# The memory check from the grid's batch-1 row; no anchor; the results-file form of the anchor.
expect_ok "memory check from the grid" "$FOXEVAL" "${base[@]}" --memory-check-len 40 --out "$tmp/b.json"
$PY -c 'import json,sys; r=json.load(open(sys.argv[1])); m=r["memory_check"]; assert m["from"]=="grid row" and m["prompt_len"]==40; assert "anchor" not in r and "anchor" not in r["rows"][0]' \
  "$tmp/b.json" && ok || bad "memory check taken from the grid row"
$PY -c 'import json,sys; json.dump({"hf_generate_anchor_official_code": json.load(open(sys.argv[1]))}, open(sys.argv[2], "w"))' \
  "$tmp/anchor.json" "$tmp/nested.json"
expect_ok "anchor nested in a results file" "$FOXEVAL" bench generate --model $fox --batch 1 --prompt-len 16 --new-tokens 3 \
  --memory-check-len 0 --anchor "$tmp/nested.json" --out "$tmp/c.json"
$PY -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["rows"][0]["anchor"]["batch"]==1 and r["anchor_missing"]==[] and "memory_check" not in r' \
  "$tmp/c.json" && ok || bad "anchor rows found under hf_generate_anchor_official_code"

# ---- errors: named flags and files, nothing written ----
echo '{"gpu": "x"}' >"$tmp/norows.json"
echo '{"rows": [{"context": 16, "decode_tokens_per_s": 1}]}' >"$tmp/nobatch.json"
echo '{"rows": [{"batch": 1, "context": 16}]}' >"$tmp/nospeed.json"
echo '{"rows": [' >"$tmp/broken.json"
expect_error "--batch 0" "--batch: values must be positive" "$FOXEVAL" "${common[@]}" --batch 0,1 --out "$tmp/x.json"
expect_error "--prompt-len text" "--prompt-len: not an integer" "$FOXEVAL" "${common[@]}" --prompt-len 16,abc --out "$tmp/x.json"
expect_error "--batch empty" "--batch: empty list" "$FOXEVAL" "${common[@]}" --batch , --out "$tmp/x.json"
expect_error "--new-tokens 1" "--new-tokens" "$FOXEVAL" "${base[@]}" --new-tokens 1 --out "$tmp/x.json"
expect_error "--memory-check-len -1" "--memory-check-len" "$FOXEVAL" "${base[@]}" --memory-check-len -1 --out "$tmp/x.json"
expect_error "--gpu-memory-fraction 2" "--gpu-memory-fraction" "$FOXEVAL" "${base[@]}" --gpu-memory-fraction 2 --out "$tmp/x.json"
expect_error "--dtype" "--dtype" "$FOXEVAL" "${base[@]}" --dtype fp8 --out "$tmp/x.json"
expect_error "no --model" "--model" "$FOXEVAL" bench generate --out "$tmp/x.json"
expect_error "missing anchor" "--anchor $tmp/nope.json: no such file" "$FOXEVAL" "${base[@]}" --anchor "$tmp/nope.json" --out "$tmp/x.json"
expect_error "anchor without rows" 'no "rows" array' "$FOXEVAL" "${base[@]}" --anchor "$tmp/norows.json" --out "$tmp/x.json"
expect_error "anchor row without batch" 'rows[0] has no integer "batch"' "$FOXEVAL" "${base[@]}" --anchor "$tmp/nobatch.json" --out "$tmp/x.json"
expect_error "anchor row without timing" 'rows[0] has neither "decode_tokens_per_s" nor "error"' "$FOXEVAL" "${base[@]}" \
  --anchor "$tmp/nospeed.json" --out "$tmp/x.json"
expect_error "anchor not JSON" "broken.json" "$FOXEVAL" "${base[@]}" --anchor "$tmp/broken.json" --out "$tmp/x.json"
if ! command -v nvidia-smi >/dev/null 2>&1; then
  expect_error "cuda without a GPU" "no CUDA device" "$FOXEVAL" "${common[@]}" --device cuda --out "$tmp/x.json"
fi
[ ! -e "$tmp/x.json" ] && ok || bad "errors write nothing"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
