#!/usr/bin/env bash
# The small things a first hour trips on, as typed: `loss` prints its lengths in numeric order,
# `detokenize` ends with a newline (--no-newline: the bytes alone), `info --help` says a folder or a
# repo id, `inspect gates` names the gate alike in its header and columns, no `{false}` in any help,
# and `--mode`/`--format` list their choices in help and refusals.
# Usage: tests/cli_small_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
fox=tests/fixtures/official/fox_pro

expect_ok "loss" "$FOXEVAL" loss --model $fox --data data/default/tokens.npy --bos-id 0 --out "$tmp/l.json"
[ "$(grep -o '^val/loss_avg_len_[0-9]*' "$tmp/out" | tr '\n' ' ')" = "val/loss_avg_len_512 val/loss_avg_len_1024 " ] \
  && [ "$(grep -o '^val/perplexity_len_[0-9]*' "$tmp/out" | tr '\n' ' ')" = "val/perplexity_len_512 val/perplexity_len_1024 " ] \
  && ok || { bad "loss: lengths in numeric order"; cat "$tmp/out" >&2; }

"$FOXEVAL" detokenize --ids 15496,11,995 >"$tmp/d.txt" && [ "$(tail -c 1 "$tmp/d.txt" | od -An -tx1 | tr -d ' ')" = 0a ] \
  && [ "$(cat "$tmp/d.txt")" = "Hello, world" ] && ok || { bad "detokenize ends with a newline"; od -c "$tmp/d.txt" >&2; }
"$FOXEVAL" detokenize --ids 15496,11,995 --no-newline >"$tmp/d2.txt" && [ "$(wc -c <"$tmp/d2.txt")" -eq 12 ] \
  && ok || bad "detokenize --no-newline: the bytes alone"

# (CLI11 may wrap the description onto the next line: read the help as one line.)
"$FOXEVAL" info --help >"$tmp/h" && tr -s ' \n' ' ' <"$tmp/h" | grep -q -- '--model .*checkpoint folder, or Hugging Face repo id' \
  && ok || { bad "info --help: a folder or a repo id"; cat "$tmp/h" >&2; }

printf 'The quick brown fox jumps over the lazy dog. %.0s' $(seq 40) >"$tmp/t.txt"
expect_ok "inspect gates" "$FOXEVAL" inspect gates --model ../shared/fixtures/trained/fox_pro_tiny_pg --text "$tmp/t.txt" --out "$tmp/g.json"
head -1 "$tmp/out" | grep -q 'forget gate f_t = ' && grep -qE '^layer +head +mean f_t +f_t p50 +f_t>0.99 ' "$tmp/out" \
  && ok || { bad "inspect gates: f_t in the header and the columns"; head -4 "$tmp/out" >&2; }

# No help shows CLI11's "{false}" of a negated flag.
found=""
for c in "niah run" "longbench run" "generate" "bench generate" "loss" "lm-eval run" "score"; do
  $FOXEVAL $c --help 2>&1 | grep -q '{false}' && found="$found $c"
done
[ -z "$found" ] && ok || bad "help without {false}:$found"
"$FOXEVAL" niah run --help | grep -q -- '--no-cuda-graphs .*default: off' && ok || bad "--no-cuda-graphs: a plain flag, default off"

"$FOXEVAL" niah run --help | grep -qE -- '--mode .*(standard, easy|\{standard,easy\})' && ok || bad "niah --help lists the modes"
"$FOXEVAL" table --help | grep -qE -- '--format .*(markdown, latex, csv|\{markdown,latex,csv\})' && ok || bad "table --help lists the formats"
expect_error "--mode hard" "standard" "$FOXEVAL" niah prompts --haystack ../shared/data/PaulGrahamEssays --mode hard --out "$tmp/p"
grep -q 'easy' "$tmp/err" && ok || bad "--mode refusal lists the modes"
expect_error "--format html" "markdown" "$FOXEVAL" table "$tmp/l.json" --format html
grep -q 'latex' "$tmp/err" && grep -q 'csv' "$tmp/err" && ok || bad "--format refusal lists the formats"

echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]
