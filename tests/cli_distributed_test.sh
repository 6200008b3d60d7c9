#!/usr/bin/env bash
# One command across processes (tasks/run/distributed.h): `loss` and `niah run` under torchrun with 2
# and 3 CPU processes write one result equal to the one-process run, and so do `longbench run` (2)
# and `lm-eval run` (2, 3), which take records / documents in batches from the shared counter; a rank killed mid-run (the test hook
# FOXEVAL_TEST_DIE_AFTER) leaves resumable journals and --resume with another process count gives
# the same result; foxeval's own --nproc-per-node launcher gives the same results and stops a run
# whose rank died; without torchrun (srun/mpirun style: rank 0 hosts the store) a dead rank stops
# the other within FOXEVAL_HEARTBEAT_TIMEOUT naming it; an unreachable store names its address.
# Usage: tests/cli_distributed_test.sh path/to/foxeval   (run from the repository root)
PY=.venv/bin/python
TORCHRUN=.venv/bin/torchrun
if [ ! -x "$TORCHRUN" ]; then
  echo "SKIP: $TORCHRUN not found (scripts/setup.sh installs torch into .venv); distributed runs not tested"
  echo "0 passed, 0 failed"
  exit 0
fi
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
# No launcher variables from the caller's environment (a CI job may itself run under SLURM).
unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT SLURM_PROCID SLURM_NTASKS SLURM_LOCALID \
  SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE OMPI_COMM_WORLD_LOCAL_RANK
export OMP_NUM_THREADS=1 FOXEVAL_DIST_TIMEOUT=60
grid=(niah run --model ../shared/fixtures/trained/fox_pro_tiny_pg --haystack ../shared/data/PaulGrahamEssays
  --lengths 300,500 --depths 0,100 --max-new-tokens 4 --batch-size 1 --device cpu)
core() { $PY -c 'import json,sys; r=json.load(open(sys.argv[1])); [r.pop(k,None) for k in ("header","this_run")]; print(json.dumps(r,sort_keys=True))' "$1"; }
free_port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
trun() { local n=$1; shift; "$TORCHRUN" --standalone --nproc-per-node "$n" --no-python "$FOXEVAL" "$@"; }
journals() { ls "$1".journal*.jsonl 2>/dev/null | wc -l; }

# ---- loss (the runner's reducer mode): batches of windows from the shared counter, exact sums
# merged at rank 0; a killed rank's saved state (OUT.state.rank<R>.json) resumed with 2 ranks ----
L=(loss --model tests/fixtures/official/fox_pro --data data/default/tokens.npy --bos-id 0 --seq-len 512 --batch-size 1 --device cpu)
lcore() { $PY -c 'import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps({k: v for k, v in r.items() if k.startswith("val/") or k == "documents"}, sort_keys=True))' "$1"; }
states() { ls "$1".state*.json 2>/dev/null | wc -l; }
"$FOXEVAL" "${L[@]}" --out "$tmp/l1.json" >/dev/null 2>"$tmp/err" && ok || { bad "loss: one process"; cat "$tmp/err" >&2; }
for n in 2 3; do
  if trun $n "${L[@]}" --out "$tmp/l$n.json" >/dev/null 2>"$tmp/err"; then ok; else bad "loss: torchrun $n"; tail -20 "$tmp/err" >&2; fi
  [ -f "$tmp/l$n.json" ] && [ "$(lcore "$tmp/l1.json")" = "$(lcore "$tmp/l$n.json")" ] && [ "$(states "$tmp/l$n.json")" -eq 0 ] \
    && ok || bad "loss: $n processes give the one-process numbers bit for bit, no state left"
done
FOXEVAL_TEST_DIE_AFTER=1 trun 3 "${L[@]}" --out "$tmp/lk.json" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -ne 0 ] && [ ! -f "$tmp/lk.json" ] && [ -f "$tmp/lk.json.state.rank1.json" ] && ok || { bad "loss: killed rank leaves states (rc $rc)"; tail -20 "$tmp/err" >&2; }
if trun 2 "${L[@]}" --out "$tmp/lk.json" --resume >/dev/null 2>"$tmp/err"; then ok; else bad "loss: resume with 2"; tail -20 "$tmp/err" >&2; fi
grep -q "resuming from [0-9]* state file(s) of $tmp/lk.json: [1-9][0-9]* of 8 items already done" "$tmp/err" && [ "$(lcore "$tmp/l1.json")" = "$(lcore "$tmp/lk.json")" ] && [ "$(states "$tmp/lk.json")" -eq 0 ] \
  && ok || bad "loss: killed with 3, resumed with 2: the same numbers"

# ---- niah (a generation task through tasks/run/runner.h) ----
"$FOXEVAL" "${grid[@]}" --out "$tmp/one.json" >/dev/null 2>"$tmp/err" && ok || { bad "one-process run"; cat "$tmp/err" >&2; }

for n in 2 3; do
  if trun $n "${grid[@]}" --out "$tmp/d$n.json" >"$tmp/out$n" 2>"$tmp/err$n"; then ok; else bad "torchrun $n processes"; tail -20 "$tmp/err$n" >&2; fi
  [ -f "$tmp/d$n.json" ] && [ "$(core "$tmp/one.json")" = "$(core "$tmp/d$n.json")" ] && ok || bad "$n processes: one result equal to one process"
  [ "$(journals "$tmp/d$n.json")" -eq 0 ] && [ "$(ls "$tmp" | grep -c "^d$n.json")" -eq 1 ] && ok || bad "$n processes: journals removed, no parts"
  grep -q "rank $((n - 1)) of $n" "$tmp/err$n" && $PY -c 'import json,sys; assert json.load(open(sys.argv[1]))["header"]["world_size"] == int(sys.argv[2])' \
    "$tmp/d$n.json" $n && ok || bad "$n processes: ranks announced, world_size in the header"
done

# A rank killed after its first item (torchrun then stops the other with SIGTERM: it saves and
# exits 3); --resume with 3 processes finishes the same result and redoes nothing.
FOXEVAL_TEST_DIE_AFTER=1 FOXEVAL_TEST_DIE_RANK=1 trun 2 "${grid[@]}" --out "$tmp/k.json" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -ne 0 ] && [ ! -f "$tmp/k.json" ] && [ "$(journals "$tmp/k.json")" -ge 1 ] && grep -q "FOXEVAL_TEST_DIE_AFTER=1: rank 1" "$tmp/err" \
  && ok || { bad "killed rank: non-zero exit, journals kept, no result (rc $rc)"; tail -20 "$tmp/err" >&2; }
done_before=$(cat "$tmp"/k.json.journal*.jsonl | grep -c '"id"')
[ "$done_before" -ge 1 ] && ok || bad "killed rank: its finished item is in its journal"
trun 3 "${grid[@]}" --out "$tmp/k.json" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -ne 0 ] && grep -q "pass --resume" "$tmp/err" && [ ! -f "$tmp/k.json" ] && ok || bad "journals without --resume: every rank refuses (rc $rc)"
if trun 3 "${grid[@]}" --out "$tmp/k.json" --resume >/dev/null 2>"$tmp/err"; then ok; else bad "resume with 3 processes"; tail -20 "$tmp/err" >&2; fi
grep -q "items already done" "$tmp/err" && [ -f "$tmp/k.json" ] && [ "$(core "$tmp/one.json")" = "$(core "$tmp/k.json")" ] \
  && [ "$(journals "$tmp/k.json")" -eq 0 ] && ok || bad "resumed with 3 processes: equal to one process, journals removed"

# ---- foxeval's own launcher (cli/launch.h): the same run without torchrun's Python start ----
if "$FOXEVAL" --nproc-per-node 2 "${grid[@]}" --out "$tmp/b2.json" >/dev/null 2>"$tmp/err"; then ok; else bad "--nproc-per-node 2"; tail -20 "$tmp/err" >&2; fi
[ -f "$tmp/b2.json" ] && [ "$(core "$tmp/one.json")" = "$(core "$tmp/b2.json")" ] && [ "$(journals "$tmp/b2.json")" -eq 0 ] \
  && grep -q "rank 1 of 2 (from RANK/WORLD_SIZE)" "$tmp/err" && ok || bad "--nproc-per-node 2: one result equal to one process"
if "$FOXEVAL" --nproc-per-node=3 "${L[@]}" --out "$tmp/lb3.json" >/dev/null 2>"$tmp/err"; then ok; else bad "loss: --nproc-per-node=3"; tail -20 "$tmp/err" >&2; fi
[ -f "$tmp/lb3.json" ] && [ "$(lcore "$tmp/l1.json")" = "$(lcore "$tmp/lb3.json")" ] && ok || bad "loss: --nproc-per-node=3 gives the one-process numbers"
# A rank that dies: the launcher stops the other (SIGTERM: it saves and exits 3), exits non-zero,
# the journals stay; --resume with one process finishes the same result.
FOXEVAL_TEST_DIE_AFTER=1 FOXEVAL_TEST_DIE_RANK=1 "$FOXEVAL" --nproc-per-node 2 "${grid[@]}" --out "$tmp/bk.json" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -ne 0 ] && [ ! -f "$tmp/bk.json" ] && [ "$(journals "$tmp/bk.json")" -ge 1 ] && grep -q "rank 1 exited with signal 9: stopping the other ranks" "$tmp/err" \
  && ok || { bad "--nproc-per-node: a dead rank stops the run, journals kept (rc $rc)"; tail -20 "$tmp/err" >&2; }
if "$FOXEVAL" "${grid[@]}" --out "$tmp/bk.json" --resume >/dev/null 2>"$tmp/err"; then ok; else bad "--nproc-per-node: resume in one process"; cat "$tmp/err" >&2; fi
[ -f "$tmp/bk.json" ] && [ "$(core "$tmp/one.json")" = "$(core "$tmp/bk.json")" ] && ok || bad "--nproc-per-node: killed, resumed: equal to one process"
# Refusals: a bad count, no command, a launcher inside a launcher.
"$FOXEVAL" --nproc-per-node 0 "${grid[@]}" --out "$tmp/x.json" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "nproc-per-node 0: expected a number of processes" "$tmp/err" && ok || bad "--nproc-per-node 0 refused (rc $rc)"
"$FOXEVAL" --nproc-per-node 2 >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "no command to run" "$tmp/err" && ok || bad "--nproc-per-node without a command refused (rc $rc)"
env RANK=0 WORLD_SIZE=2 "$FOXEVAL" --nproc-per-node 2 "${grid[@]}" --out "$tmp/x.json" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "already one of a launcher's ranks (RANK=0)" "$tmp/err" && [ ! -f "$tmp/x.json" ] && ok || bad "--nproc-per-node under another launcher refused (rc $rc)"

# ---- longbench and lm-eval: records / documents taken in batches from the shared counter ----
# Both ranks take batches (each says how many items it finished), and the result equals the
# one-process run bit for bit: the k-th batch holds the same items whichever rank takes it.
worked() { grep -q "rank 0\] [1-9][0-9]* items finished by this rank" "$1" && grep -q "rank 1\] [1-9][0-9]* items finished by this rank" "$1"; }
# 12 records, --batch-size 2: batches of 8 (4 x the slots) then 4, two slots decoding together.
LB=(longbench run --model ../shared/fixtures/trained/fox_pro_tiny_pg --data tests/fixtures/longbench/data --tasks qasper,trec,lcc,samsum
  --max-length 512 --max-new-tokens 4 --batch-size 2 --device cpu)
"$FOXEVAL" "${LB[@]}" --out "$tmp/lb1" >/dev/null 2>"$tmp/err" && ok || { bad "longbench: one process"; cat "$tmp/err" >&2; }
if trun 2 "${LB[@]}" --out "$tmp/lb2" >/dev/null 2>"$tmp/err"; then ok; else bad "longbench: torchrun 2"; tail -20 "$tmp/err" >&2; fi
same_lb=1
for f in qasper.jsonl trec.jsonl lcc.jsonl samsum.jsonl samsum.jsonl.done result.json; do cmp -s "$tmp/lb1/$f" "$tmp/lb2/$f" || same_lb=0; done
[ $same_lb -eq 1 ] && [ -f "$tmp/lb2/run.json" ] && [ "$(core "$tmp/lb1/run.json")" = "$(core "$tmp/lb2/run.json")" ] \
  && [ "$(journals "$tmp/lb2/run.json")" -eq 0 ] && ok || bad "longbench: 2 processes write the one-process run.json and official files, no journal left"
worked "$tmp/err" && ok || bad "longbench: both ranks took records"

# 11 tasks x 3 documents, --batch-size 2: batches of a few documents (8 forwards of 2 requests),
# the wikitext documents (longest) first.
LE=(lm-eval run --model ../shared/fixtures/trained/fox_pro_tiny_pg --data tests/fixtures/lm_eval/data --limit 3 --max-length 256
  --tasks wikitext,lambada_openai,piqa,hellaswag,winogrande,arc_easy,arc_challenge,boolq,sciq,copa,openbookqa --batch-size 2 --device cpu)
"$FOXEVAL" "${LE[@]}" --out "$tmp/le1.json" --log-samples "$tmp/le1.samples.jsonl" >/dev/null 2>"$tmp/err" && ok \
  || { bad "lm-eval: one process"; cat "$tmp/err" >&2; }
for n in 2 3; do
  if trun $n "${LE[@]}" --out "$tmp/le$n.json" --log-samples "$tmp/le$n.samples.jsonl" >/dev/null 2>"$tmp/err"; then ok; else
    bad "lm-eval: torchrun $n"; tail -20 "$tmp/err" >&2; fi
  [ -f "$tmp/le$n.json" ] && [ "$(core "$tmp/le1.json")" = "$(core "$tmp/le$n.json")" ] && cmp -s "$tmp/le1.samples.jsonl" "$tmp/le$n.samples.jsonl" \
    && [ "$(journals "$tmp/le$n.json")" -eq 0 ] && ok || bad "lm-eval: $n processes give the one-process result and --log-samples bit for bit"
  worked "$tmp/err" && ok || bad "lm-eval: $n processes: ranks 0 and 1 took documents"
done

# srun/mpirun style (no torchrun agent: rank 0 hosts the store). Rank 1 dies after one item and
# nobody kills rank 0: it must stop on the missing heartbeats, naming rank 1, and exit non-zero.
port=$(free_port)
dist_env() { env MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 RANK=$1 LOCAL_RANK=$1 FOXEVAL_HEARTBEAT_TIMEOUT=4 "${@:2}"; }
# (FOXEVAL_TEST_DIE_AFTER on rank 0 too: it then waits for rank 1's first claim, see distributed.h.)
dist_env 0 env FOXEVAL_TEST_DIE_AFTER=1 "$FOXEVAL" "${grid[@]}" --out "$tmp/h.json" >/dev/null 2>"$tmp/err0" & p0=$!
dist_env 1 env FOXEVAL_TEST_DIE_AFTER=1 "$FOXEVAL" "${grid[@]}" --out "$tmp/h.json" >/dev/null 2>"$tmp/err1" & p1=$!
wait $p1; wait $p0; rc=$?
[ $rc -ne 0 ] && grep -q "rank 1 sent no heartbeat" "$tmp/err0" && [ ! -f "$tmp/h.json" ] && ok \
  || { bad "dead rank without torchrun: rank 0 stops naming rank 1 (rc $rc)"; tail -5 "$tmp/err0" >&2; }
# ... and one process (no launcher) finishes it from both ranks' journals.
if "$FOXEVAL" "${grid[@]}" --out "$tmp/h.json" --resume >/dev/null 2>"$tmp/err"; then ok; else bad "resume in one process"; cat "$tmp/err" >&2; fi
[ -f "$tmp/h.json" ] && [ "$(core "$tmp/one.json")" = "$(core "$tmp/h.json")" ] && [ "$(journals "$tmp/h.json")" -eq 0 ] \
  && ok || bad "resumed in one process: equal, journals removed"

# A store nobody hosts: the error names the address tried.
port=$(free_port)
env MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 RANK=1 FOXEVAL_DIST_TIMEOUT=2 "$FOXEVAL" "${grid[@]}" --out "$tmp/u.json" \
  >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -ne 0 ] && grep -q "cannot reach the rendezvous store at 127.0.0.1:$port" "$tmp/err" && ok || { bad "unreachable store names its address (rc $rc)"; cat "$tmp/err" >&2; }

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
