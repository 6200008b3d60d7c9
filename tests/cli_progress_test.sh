#!/usr/bin/env bash
# Progress inside a generation group, as a user sees it on stderr: `niah run` and `longbench run`
# print cells/records done, new tokens against their bound, rates and an ETA while no request has
# finished yet; a CPU run estimated over a few minutes says so once, naming the flags that shorten
# it, and a SIGINT then stops it resumably (exit 3).
# Usage: tests/cli_progress_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
model=../shared/fixtures/trained/fox_pro_tiny_pg
hay=../shared/data/PaulGrahamEssays
if [ ! -d $model ] || [ ! -d $hay ]; then echo "SKIP: $model or $hay is missing"; exit 0; fi
export FOXEVAL_PROGRESS_SECONDS=0  # a line after every decode run (default: every 10 s)

# A short sweep: progress lines before the first cell finishes (2 cells of 64 new tokens each).
expect_ok "niah run" "$FOXEVAL" niah run --model $model --haystack $hay --lengths 400 --depths 0,100 --max-new-tokens 64 \
  --device cpu --out "$tmp/n.json"
grep -qE '^\[niah\] 0/2 cells, [0-9]+/128 new tokens \(at most\), [0-9]+/[0-9]+ prompt tokens; prefill [0-9]+ tok/s, decode [0-9.]+ tok/s, elapsed [0-9]+ s, ETA [0-9.]+ (s|min|h) if nothing stops early$' \
  "$tmp/err" && ok || { bad "niah: progress within the group"; grep '^\[niah\]' "$tmp/err" >&2; }
! grep -q "this CPU run may take" "$tmp/err" && ok || bad "a short run does not warn"
expect_ok "longbench run" "$FOXEVAL" longbench run --model $model --data tests/fixtures/longbench/data --tasks trec \
  --max-length 512 --max-new-tokens 32 --device cpu --out "$tmp/lb"
grep -qE '^\[longbench\] [0-9]+/3 records, [0-9.k]+/[0-9.k]+ new tokens \(at most\)' "$tmp/err" && ok \
  || { bad "longbench: progress within the group"; grep '^\[longbench\]' "$tmp/err" >&2; }
expect_error "a bad FOXEVAL_PROGRESS_SECONDS" "FOXEVAL_PROGRESS_SECONDS=soon" env FOXEVAL_PROGRESS_SECONDS=soon \
  "$FOXEVAL" niah run --model $model --haystack $hay --lengths 400 --depths 0 --max-new-tokens 4 --device cpu --out "$tmp/x.json"

# A long CPU run (11 cells of up to 100000 new tokens: hours): warned about, then interrupted.
"$FOXEVAL" niah run --model $model --haystack $hay --lengths 300 --max-new-tokens 100000 --device cpu \
  --out "$tmp/long.json" >"$tmp/long.out" 2>"$tmp/long.err" &
pid=$!
for _ in $(seq 600); do grep -q "this CPU run may take" "$tmp/long.err" && break; kill -0 $pid 2>/dev/null || break; sleep 0.2; done
kill -INT $pid 2>/dev/null; wait $pid; rc=$?
grep -qE '^\[niah\] this CPU run may take about [0-9.]+ (min|h): each of the 11 open cells may generate its full max_new_tokens .*; --max-new-tokens, --lengths or --depths shorten it$' \
  "$tmp/long.err" && ok || { bad "a long CPU run says so and names the flags"; tail -5 "$tmp/long.err" >&2; }
[ "$(grep -c 'this CPU run may take' "$tmp/long.err")" -eq 1 ] && ok || bad "the warning comes once"
[ $rc -eq 3 ] && grep -q "run again with --resume" "$tmp/long.err" && ok || { bad "SIGINT stops it resumably (exit $rc)"; tail -3 "$tmp/long.err" >&2; }

echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]
