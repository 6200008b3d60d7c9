#!/usr/bin/env bash
# `foxeval --nproc-per-node 2 ...` as a user reads it: one summary on stdout (rank 0's), progress
# totals over every rank (the last line is N/N, 100%), and niah's "(N cells this run)" counting the
# cells of all ranks; `loss` too prints its table once.
# Usage: tests/cli_nproc_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
model=../shared/fixtures/trained/fox_pro_tiny_pg
hay=../shared/data/PaulGrahamEssays
if [ ! -d $model ] || [ ! -d $hay ]; then echo "SKIP: $model or $hay is missing"; exit 0; fi
unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT SLURM_PROCID SLURM_NTASKS SLURM_LOCALID \
  SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE OMPI_COMM_WORLD_LOCAL_RANK
export OMP_NUM_THREADS=1 FOXEVAL_DIST_TIMEOUT=60

grid=(niah run --model $model --haystack $hay --lengths 300,500,700 --depths 0,50,100 --max-new-tokens 4 --device cpu)
expect_ok "niah, 2 processes" "$FOXEVAL" --nproc-per-node 2 "${grid[@]}" --out "$tmp/n.json"
[ "$(grep -c '^mean  ' "$tmp/out")" -eq 1 ] && [ "$(grep -c '^length ' "$tmp/out")" -eq 1 ] && ok \
  || { bad "niah: one summary on stdout"; cat "$tmp/out" >&2; }
grep -q '(9 cells this run on 2 ranks; rates of rank 0)' "$tmp/out" && ok || { bad "niah: the cells of both ranks counted"; cat "$tmp/out" >&2; }
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["this_run"]; assert t["cells"] == 9 and t["world_size"] == 2, t' "$tmp/n.json" \
  && ok || bad "niah: this_run counts 9 cells on 2 ranks"
last=$(grep -E '^\[niah rank [0-9], all ranks\] [0-9]+/9 ' "$tmp/err" | tail -1)
echo "$last" | grep -q '^\[niah rank 0, all ranks\] 9/9 (100.0%)' && ok || { bad "niah: the last progress line is rank 0's 9/9 (got '$last')"; }

[ "$(grep -oE '^\[niah rank [01]\] [0-9]+ items finished by this rank' "$tmp/err" | awk '{s += $4} END {print s}')" = 9 ] \
  && ok || { bad "niah: each rank's share, 9 in all"; grep 'finished by this rank' "$tmp/err" >&2; }

L=(loss --model tests/fixtures/official/fox_pro --data data/default/tokens.npy --bos-id 0 --seq-len 256 --batch-size 1 --device cpu)
expect_ok "loss, 2 processes" "$FOXEVAL" --nproc-per-node 2 "${L[@]}" --out "$tmp/l.json"
[ "$(grep -c '^val/loss_avg_len_256' "$tmp/out")" -eq 1 ] && ok || { bad "loss: one summary on stdout"; cat "$tmp/out" >&2; }
grep -qE '^\[loss rank 0, all ranks\] 16/16 \(100.0%\)' "$tmp/err" && ok || { bad "loss: rank 0 ends on 16/16"; grep '^\[loss' "$tmp/err" >&2; }

echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]
