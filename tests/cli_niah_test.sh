#!/usr/bin/env bash
# `foxeval niah` end to end: prompts equal the official prompt.py logic (tests/tools/niah_reference.py),
# bad input errors leave nothing behind, a tiny CPU sweep (kill + --resume, 2 shards + merge,
# --pred-dir + score), the judge against a local stub server, and the heatmap.
# Usage: tests/cli_niah_test.sh path/to/foxeval   (run from the repository root)
PY=.venv/bin/python
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
stub_pid=""
trap '[ -n "$stub_pid" ] && kill $stub_pid 2>/dev/null; rm -rf "$tmp"' EXIT
pg=../shared/data/PaulGrahamEssays
model=../shared/fixtures/trained/fox_pro_tiny_pg

# ---- prompts: every cell of both modes equals the reference, on a haystack made here ----
$PY - "$tmp/hay" <<'PYEOF'
import os, random, sys
d = sys.argv[1]; os.makedirs(d)
rng = random.Random(2024)
pieces = ["A line. ", "ünïcödé — “x” ", "astral 🙂𝔘 ", "\\u00e9 \\\\ \\", "\r\n", "\r", "<|endoftext|>", "\"q\" ",
          "中文。", "\x7f\x02", "Dr. No... ", ".", "\u2029", "word " * 7]
for name in ["essay1.txt", "Essay2.txt", "ß.txt"]:
    with open(os.path.join(d, name), "w", encoding="utf-8", newline="") as f:
        f.write("".join(rng.choice(pieces) for _ in range(rng.randint(30, 90))))
PYEOF
for mode in standard easy; do
  expect_ok "prompts $mode" "$FOXEVAL" niah prompts --haystack "$tmp/hay" --mode $mode --lengths 205,240,333,700 \
    --depths 0,5,45,50,95,100 --out "$tmp/p_$mode"
  $PY tests/tools/niah_reference.py --haystack "$tmp/hay" --mode $mode --lengths 205,240,333,700 --depths 0,5,45,50,95,100 \
    --out "$tmp/r_$mode" && [ "$(ls "$tmp/p_$mode" | wc -l)" -eq 24 ] && diff -r "$tmp/p_$mode" "$tmp/r_$mode" >/dev/null \
    && ok || bad "prompts $mode equal the reference on every cell"
done
for mode in standard easy; do
  expect_ok "prompts pg $mode" "$FOXEVAL" niah prompts --haystack $pg --mode $mode --lengths 300,1000,4100 --depths 0,10,50,100 --out "$tmp/pp_$mode"
  $PY tests/tools/niah_reference.py --haystack $pg --mode $mode --lengths 300,1000,4100 --depths 0,10,50,100 --out "$tmp/pr_$mode" &&
    diff -r "$tmp/pp_$mode" "$tmp/pr_$mode" >/dev/null && [ -f "$tmp/pp_$mode/Huggingface_len_4100_depth_1000_prompts.json" ] \
    && ok || bad "prompts on the essays ($mode) equal the reference (depth 10 is depth_1000)"
done

# ---- bad input: clear errors, nothing written ----
mkdir -p "$tmp/empty" && echo x >"$tmp/empty/notes.md"
expect_error "no .txt" "no .txt files" "$FOXEVAL" niah prompts --haystack "$tmp/empty" --out "$tmp/bad1"
expect_error "unknown mode" "unknown NIAH mode 'hard'" "$FOXEVAL" niah prompts --haystack $pg --mode hard --out "$tmp/bad2"
expect_error "length in the buffer" "200 is not above the 200-token buffer" "$FOXEVAL" niah prompts --haystack $pg \
  --lengths 1000,200 --out "$tmp/bad3"
expect_error "run: length in the buffer" "150 is not above" "$FOXEVAL" niah run --model $model --haystack $pg \
  --lengths 150 --out "$tmp/bad4.json"
[ ! -e "$tmp/bad1" ] && [ ! -e "$tmp/bad2" ] && [ ! -e "$tmp/bad3" ] && [ ! -e "$tmp/bad4.json" ] \
  && [ ! -e "$tmp/bad4.json.journal.jsonl" ] && ok || bad "bad input writes nothing"

# ---- a tiny sweep on CPU ----
grid=(--model $model --haystack $pg --mode standard --lengths 300,600 --depths 0,50,100 --max-new-tokens 8 --batch-size 2)
# The result without its header and this run's timings: what must not depend on how it was run.
core() { $PY -c 'import json,sys; r=json.load(open(sys.argv[1])); [r.pop(k,None) for k in ("header","this_run")]; print(json.dumps(r,sort_keys=True))' "$1"; }
expect_ok "run" "$FOXEVAL" niah run "${grid[@]}" --out "$tmp/a.json" --pred-dir "$tmp/pred"
grep -q "mean score" "$tmp/out" && ok || bad "run prints the table"
$PY - "$tmp/a.json" <<'PYEOF' && ok || bad "result holds 6 cells with scores, means and settings"
import json, sys
r = json.load(open(sys.argv[1]))
c = r["cells"]
assert len(c) == 6 and [(x["length"], x["depth"]) for x in c] == [(300, 0), (300, 50), (300, 100), (600, 0), (600, 50), (600, 100)]
assert all(1 <= x["score"] <= 10 and x["generated_tokens"] <= 8 and x["stop"] in ("eos", "length") for x in c)
assert len(r["mean_by_length"]) == 2 and len(r["mean_by_depth"]) == 3 and "mean" in r
s = r["header"]["settings"]
assert s["mode"] == "standard" and s["lengths"] == [300, 600] and s["haystack_digest"].startswith("sha256:")
assert s["max_new_tokens"] == 8 and s["answer"]
PYEOF
[ "$(ls "$tmp/pred"/*.txt | wc -l)" -eq 6 ] && [ "$(ls "$tmp/pred"/*.txt.done | wc -l)" -eq 6 ] \
  && [ -f "$tmp/pred/Huggingface_len_600_depth_5000.txt" ] && ok || bad "--pred-dir writes pred.py's layout"

# Stop part-way (exit 3, journal kept, no result), resume: the same result.
"$FOXEVAL" niah run "${grid[@]}" --out "$tmp/b.json" --stop-after 2 >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 3 ] && [ -f "$tmp/b.json.journal.jsonl" ] && [ ! -f "$tmp/b.json" ] && ok || { bad "--stop-after exits 3 with a journal (rc $rc)"; cat "$tmp/err" >&2; }
expect_error "journal without --resume" "--resume" "$FOXEVAL" niah run "${grid[@]}" --out "$tmp/b.json"
expect_error "resume with other settings" "other settings" "$FOXEVAL" niah run "${grid[@]/#8/9}" --out "$tmp/b.json" --resume
expect_ok "resume" "$FOXEVAL" niah run "${grid[@]}" --out "$tmp/b.json" --resume
grep -q "already done" "$tmp/err" && ok || bad "resume redoes no finished cell"
[ "$(core "$tmp/a.json")" = "$(core "$tmp/b.json")" ] && [ ! -f "$tmp/b.json.journal.jsonl" ] && ok || bad "resumed result equals the uninterrupted one"

# Two shards, merged.
for i in 0 1; do
  "$FOXEVAL" niah run "${grid[@]}" --num-shards 2 --shard-index $i --out "$tmp/part$i.json" >/dev/null 2>&1 || bad "shard $i"
done
expect_ok "merge" "$FOXEVAL" merge --out "$tmp/m.json" "$tmp/part0.json" "$tmp/part1.json"
[ "$(core "$tmp/a.json")" = "$(core "$tmp/m.json")" ] && ok || bad "2 shards merged equal one run"

# Score the prediction folder: the same scores as the run.
expect_ok "score --pred-dir" "$FOXEVAL" niah score --pred-dir "$tmp/pred" --mode standard --out "$tmp/s.json"
$PY -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]));
assert [(c["length"],c["depth"],c["prediction"],c["score"]) for c in a["cells"]] == [(c["length"],c["depth"],c["prediction"],c["score"]) for c in b["cells"]]
assert a["mean"] == b["mean"]' "$tmp/a.json" "$tmp/s.json" && ok || bad "score --pred-dir equals the run's scores"

expect_ok "score --result" "$FOXEVAL" niah score --result "$tmp/a.json" --out "$tmp/rs.json"
$PY -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]));
assert a["cells"] == b["cells"] and a["mean_by_depth"] == b["mean_by_depth"] and b["header"]["settings"]["answer"]' \
  "$tmp/a.json" "$tmp/rs.json" && ok || bad "score --result re-scores a result to the same cells"

# ---- the judge, against a local stub (bounded: it stops itself) ----
start_stub() {  # MODE -> sets port, stub_pid
  rm -f "$tmp/port" "$tmp/judge.log" "$tmp/judge.log.bodies"
  $PY tests/tools/niah_judge_stub.py "$1" "$tmp/port" "$tmp/judge.log" 60 & stub_pid=$!
  for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  port=$(cat "$tmp/port")
}
stop_stub() { kill $stub_pid 2>/dev/null; wait $stub_pid 2>/dev/null; stub_pid=""; }
mkdir -p "$tmp/jp"
printf 'eat a sandwich and sit in Dolores Park on a sunny day.' >"$tmp/jp/Huggingface_len_1000_depth_0.txt"
printf 'no idea' >"$tmp/jp/Huggingface_len_1000_depth_10000.txt"
touch "$tmp/jp/Huggingface_len_1000_depth_0.txt.done" "$tmp/jp/Huggingface_len_1000_depth_10000.txt.done"
judge=(niah score --pred-dir "$tmp/jp" --mode standard --judge-model stub-model --judge-backoff 0.2 --judge-tries 3)
start_stub flaky
expect_ok "judge with retries" "$FOXEVAL" "${judge[@]}" --judge-url "http://127.0.0.1:$port/v1/chat/completions" --out "$tmp/j.json"
stop_stub
$PY - "$tmp/j.json" "$tmp/judge.log" <<'PYEOF' && ok || bad "judge: ratings parsed, 2 failures retried with growing waits, eval.py's request"
import json, sys
r = json.load(open(sys.argv[1]))
assert [c["judge_score"] for c in r["cells"]] == [10, 1] and r["judge"]["mean"] == 5.5 and r["judge"]["model"] == "stub-model"
t = [float(l.split()[0]) for l in open(sys.argv[2])]
assert len(t) == 4, t                          # 500, 500, then one rating per cell
assert t[1] - t[0] >= 0.18 and t[2] - t[1] >= 0.38  # backoff 0.2 s, doubled
b = json.loads(open(sys.argv[2] + ".bodies").readline())
assert b["model"] == "stub-model" and b["temperature"] == 0 and b["messages"][0]["content"] == "You are a helpful assistant."
assert "[Question]\nWhat is the best thing to do in San Francisco?\n" in b["messages"][1]["content"]
PYEOF
start_stub garbage
expect_error "judge garbage" "no [[rating]]" "$FOXEVAL" "${judge[@]}" --judge-url "http://127.0.0.1:$port/v1/chat/completions" --out "$tmp/jg.json"
stop_stub
start_stub error
expect_error "judge errors" "after 3 tries: HTTP 503" "$FOXEVAL" "${judge[@]}" --judge-url "http://127.0.0.1:$port/v1/chat/completions" --out "$tmp/je.json"
stop_stub
expect_error "judge unreachable" "http://127.0.0.1:9/v1 failed for cell len_1000_depth_0 after 3 tries" "$FOXEVAL" "${judge[@]}" \
  --judge-url "http://127.0.0.1:9/v1" --out "$tmp/ju.json"
[ ! -e "$tmp/jg.json" ] && [ ! -e "$tmp/je.json" ] && [ ! -e "$tmp/ju.json" ] && ok || bad "a failed judge writes no result"

# ---- heatmap ----
expect_ok "plot niah" "$FOXEVAL" plot niah "$tmp/a.json" "$tmp/j.json" --label "tiny FoX" --label judged -o "$tmp/h.svg" --train-length 400
[ "$(grep -c '<title>length' "$tmp/h.svg")" -eq 8 ] && grep -q "tiny FoX, standard" "$tmp/h.svg" && ok || bad "heatmap: one rect per cell, titles"
expect_error "plot --judge without judge scores" "judge_score" "$FOXEVAL" plot niah "$tmp/a.json" --judge -o "$tmp/h2.svg"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
