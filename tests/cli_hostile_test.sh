#!/usr/bin/env bash
# Hostile and broken inputs, end to end: every case must end as a refusal with exit 2,
# a short message naming the flag/file/field (no stack trace, no control characters from outside),
# no signal, in bounded time, and nothing written outside the case's --out. Also: the judge
# against a hostile local server (127.0.0.1 only), and the lock that keeps two runs off one --out.
# Usage: tests/cli_hostile_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
stub_pid=""; bg_pid=""
trap '[ -n "$stub_pid" ] && kill $stub_pid 2>/dev/null; [ -n "$bg_pid" ] && kill -9 $bg_pid 2>/dev/null; rm -rf "$tmp"' EXIT
fox=tests/fixtures/official/fox_pro
trained=../shared/fixtures/trained/fox_pro_tiny_pg
[ -d "$trained" ] || trained=$fox
PY=python3
out="$tmp/out"  # every case writes (if at all) under here
mkdir -p "$out"

# refuse NAME TEXT CMD...: exit 2 within 30 s, stderr holds TEXT, no stack trace, no raw control
# characters, no 300-digit numbers, at most 12 lines.
refuse() {
  local name="$1" text="$2"; shift 2
  local o="$tmp/o$lane" e="$tmp/e$lane"
  timeout -s KILL 30 "$@" >"$o" 2>"$e" </dev/null
  local rc=$?
  if [ $rc -ne 2 ]; then bad "$name: exit $rc, expected 2"; head -c 600 "$e" >&2; echo >&2; return; fi
  if ! grep -qF -- "$text" "$e"; then bad "$name: stderr lacks '$text'"; head -c 600 "$e" >&2; echo >&2; return; fi
  if grep -qE 'frame #|Exception raised from|terminate called|[0-9]{60}' "$e" ||
     LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$e" || [ "$(wc -l <"$e")" -gt 12 ]; then
    bad "$name: not a clean one-paragraph message"; head -c 600 "$e" >&2; echo >&2; return
  fi
  ok
}
lane=""  # the flag cases run in a second lane (a background subshell) beside the rest: 2 cores

# ---- usage ----
(
lane=2; pass=0; fail=0
refuse "no command" "subcommand" "$FOXEVAL"
refuse "unknown flag" "--no-such-flag" "$FOXEVAL" info --model $fox --no-such-flag
refuse "missing required flag" "--model" "$FOXEVAL" info
timeout 30 "$FOXEVAL" --help >/dev/null 2>&1 && ok || bad "--help exits 0"

# ---- every integer flag has a range, every float flag is finite ----
L=(loss --model $fox --data tests/fixtures/loss/tokens.npy --bos-id 0 --out "$out/l.json")
refuse "loss --batch-size 0" "--batch-size: '0' is not allowed: must be an integer in [1," "$FOXEVAL" "${L[@]}" --batch-size 0
refuse "loss --seq-len 0" "--seq-len: '0'" "$FOXEVAL" "${L[@]}" --seq-len 0
refuse "loss --seq-len -1" "--seq-len: '-1'" "$FOXEVAL" "${L[@]}" --seq-len -1
refuse "loss --tokens 0" "--tokens: '0' is not allowed: must be an integer >= 1" "$FOXEVAL" "${L[@]}" --tokens 0
refuse "loss --num-shards -2" "--num-shards: '-2'" "$FOXEVAL" "${L[@]}" --num-shards -2 --shard-index -1
refuse "loss --shard-index = --num-shards" "--shard-index 2 must be in [0, --num-shards 2)" "$FOXEVAL" "${L[@]}" --num-shards 2 --shard-index 2
refuse "loss --save-every nan" "--save-every: 'nan'" "$FOXEVAL" "${L[@]}" --save-every nan
refuse "loss --stop-after -1" "--stop-after: '-1'" "$FOXEVAL" "${L[@]}" --stop-after -1
refuse "loss --bos-id -1" "--bos-id" "$FOXEVAL" "${L[@]}" --bos-id -1
refuse "loss --tokens 1e3 (not an integer)" "--tokens: '1e3'" "$FOXEVAL" "${L[@]}" --tokens 1e3
G=(generate --model $fox --prompt-ids 1,2,3)
refuse "generate --temperature nan" "--temperature: 'nan'" "$FOXEVAL" "${G[@]}" --max-new-tokens 2 --temperature nan
refuse "generate --temperature -1" "--temperature: '-1'" "$FOXEVAL" "${G[@]}" --max-new-tokens 2 --temperature -1
refuse "generate --top-p 0" "--top-p: '0'" "$FOXEVAL" "${G[@]}" --max-new-tokens 2 --temperature 1 --top-p 0
refuse "generate --max-new-tokens 1e12" "--max-new-tokens: '1000000000000' is not allowed: must be an integer in [1, 1048576]" \
  "$FOXEVAL" "${G[@]}" --max-new-tokens 1000000000000
refuse "generate --batch-size 0" "--batch-size: '0' is not allowed: must be an integer in [1," "$FOXEVAL" "${G[@]}" --max-new-tokens 2 --batch-size 0
refuse "generate --stop-id -5" "--stop-id: '-5'" "$FOXEVAL" "${G[@]}" --max-new-tokens 2 --stop-id -5
refuse "generate --prompt-file /dev/zero" "not a file" "$FOXEVAL" generate --model $fox --prompt-file /dev/zero --max-new-tokens 2
refuse "lm-eval run --limit -1" "--limit: '-1' is not allowed: must be an integer >= 1" \
  "$FOXEVAL" lm-eval run --model $fox --tasks piqa --data "$tmp/none" --out "$out/e.json" --limit -1
refuse "lm-eval requests --limit -1" "--limit: '-1'" "$FOXEVAL" lm-eval requests --tasks piqa --data "$tmp/none" --out "$out/q.jsonl" --limit -1
refuse "lm-eval --max-length 1" "--max-length: '1'" "$FOXEVAL" lm-eval run --model $fox --tasks piqa --data "$tmp/none" --out "$out/e.json" --max-length 1
refuse "score --batch-size -1" "--batch-size: '-1'" "$FOXEVAL" score --model $fox --requests "$tmp/none" --out "$out/s.jsonl" --batch-size -1
refuse "score --requests /dev/zero" "not a file" "$FOXEVAL" score --model $fox --requests /dev/zero --out "$out/s.jsonl"
refuse "check --tol nan" "--tol m=nan" "$FOXEVAL" check "$tmp/none" --baseline "$tmp/none" --tol m=nan
refuse "check --atol -1" "--atol: '-1'" "$FOXEVAL" check "$tmp/none" --baseline "$tmp/none" --atol -1
refuse "plot loss --bins 0" "--bins: '0'" "$FOXEVAL" plot loss "$tmp/none" -o "$out/p.svg" --bins 0
refuse "plot loss --ymin nan" "--ymin: 'nan'" "$FOXEVAL" plot loss "$tmp/none" -o "$out/p.svg" --ymin nan
refuse "tokenize --file /dev/zero" "is a device" "$FOXEVAL" tokenize --file /dev/zero

echo "$pass $fail" >"$tmp/lane2.counts"
) & lane2_pid=$!

# ---- niah sizes ----
printf 'Some essay text. It is short. ' >"$tmp/hay.txt"; mkdir -p "$tmp/hay"; for i in 1 2 3; do cat "$tmp/hay.txt" >>"$tmp/hay/e.txt"; done
N=(niah run --model $trained --haystack "$tmp/hay" --out "$out/n.json")
refuse "niah --lengths ''" "--lengths '': no length given" "$FOXEVAL" "${N[@]}" --lengths ''
refuse "niah --lengths 1e12 (was a hang)" "--lengths: 1000000000000 is out of range" "$FOXEVAL" "${N[@]}" --lengths 1000000000000
refuse "niah --depths 101" "--depths: 101" "$FOXEVAL" "${N[@]}" --lengths 300 --depths 101
refuse "niah --max-new-tokens 1e12" "--max-new-tokens: '1000000000000'" "$FOXEVAL" "${N[@]}" --lengths 300 --max-new-tokens 1000000000000
refuse "niah --batch-size 0" "--batch-size: '0' is not allowed: must be an integer in [1," "$FOXEVAL" "${N[@]}" --lengths 300 --batch-size 0
refuse "niah --gpu-memory-fraction nan" "--gpu-memory-fraction: 'nan'" "$FOXEVAL" "${N[@]}" --lengths 300 --gpu-memory-fraction nan
refuse "niah prompts --lengths 1e12" "out of range" "$FOXEVAL" niah prompts --haystack "$tmp/hay" --out "$out/pp" --lengths 1000000000000

# ---- degenerate data ----
mknpy() {  # PATH SHAPE: an int32 .npy header with no data
  $PY - "$1" "$2" <<'EOF'
import sys
h = "{'descr': '<i4', 'fortran_order': False, 'shape': %s, }" % sys.argv[2]
h = h + ' ' * ((64 - (10 + len(h) + 1) % 64) % 64) + '\n'
open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + len(h).to_bytes(2, 'little') + h.encode())
EOF
}
mknpy "$tmp/c0.npy" "(6, 0)"; mknpy "$tmp/r0.npy" "(0, 6)"
refuse "loss on a (6, 0) array (was SIGFPE)" "6 rows of 0 tokens" "$FOXEVAL" loss --model $fox --data "$tmp/c0.npy" --out "$out/d.json"
refuse "loss on a (0, 6) array" "0 rows of 6 tokens" "$FOXEVAL" loss --model $fox --data "$tmp/r0.npy" --out "$out/d.json"

# ---- outputs that cannot be files ----
printf x >"$tmp/afile"
refuse "--out under a regular file" "is not a folder" "$FOXEVAL" loss --model $fox --data tests/fixtures/loss/tokens.npy --bos-id 0 --out "$tmp/afile/x.json"
refuse "--out a folder" "is a folder" "$FOXEVAL" loss --model $fox --data tests/fixtures/loss/tokens.npy --bos-id 0 --out "$out"
refuse "niah prompts --out under a regular file" "--out $tmp/afile/p" "$FOXEVAL" niah prompts --haystack "$tmp/hay" --out "$tmp/afile/p" --lengths 300

# ---- model folders: index entries, symlinks, safetensors headers, config numbers ----
mkmodel() { rm -rf "$1"; mkdir -p "$1"; cp $fox/config.json $fox/model.safetensors "$1/"; }
index() {  # DIR FIRST-SHARD-NAME: an index naming FIRST-SHARD-NAME for one tensor
  $PY - "$1" "$2" <<'EOF'
import json, struct, sys
d, bad = sys.argv[1], sys.argv[2]
b = open(d + "/model.safetensors", "rb").read(); n = struct.unpack("<Q", b[:8])[0]
names = sorted(k for k in json.loads(b[8:8 + n]) if k != "__metadata__")
wm = {k: "model.safetensors" for k in names}; wm[names[0]] = bad
json.dump({"metadata": {}, "weight_map": wm}, open(d + "/model.safetensors.index.json", "w"))
EOF
}
m="$tmp/m"
mkmodel "$m"; index "$m" "../../../../etc/passwd"
refuse "index naming ../../etc/passwd" "is not a plain file name" "$FOXEVAL" info --model "$m"
mkmodel "$m"; index "$m" "/etc/hostname"
refuse "index naming an absolute path" "is not a plain file name" "$FOXEVAL" info --model "$m"
mkmodel "$m"; ln -s /etc/hostname "$m/outside.safetensors"; index "$m" "outside.safetensors"
refuse "index naming a symlink out of the folder" "outside the folder" "$FOXEVAL" info --model "$m"
mkmodel "$m"; rm "$m/config.json"; ln -s /etc/hostname "$m/config.json"
refuse "config.json a symlink out of the folder" "outside the folder" "$FOXEVAL" info --model "$m"
grep -qF "$(head -c 20 /etc/hostname)" "$tmp/e" && bad "the outside file's text shows" || ok
mkmodel "$m"; rm "$m/model.safetensors"; mkfifo "$m/model.safetensors"
refuse "a FIFO as the weights (no hang)" "not a regular file" "$FOXEVAL" info --model "$m"

safetensors() {  # DIR MODE: rewrites DIR/model.safetensors with a broken header
  $PY - "$1/model.safetensors" "$2" <<'EOF'
import json, struct, sys
p, mode = sys.argv[1], sys.argv[2]
b = open(p, "rb").read(); n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n]); data = b[8 + n:]
names = sorted((k for k in h if k != "__metadata__"), key=lambda k: h[k]["data_offsets"][0])
a, c = names[0], names[1]
if mode == "overlap":
    size = lambda k: h[k]["data_offsets"][1] - h[k]["data_offsets"][0]
    c = next(k for k in names[1:] if size(k) <= size(a))
    h[c]["data_offsets"] = [0, size(c)]
elif mode == "float":
    h[a]["data_offsets"] = [float(h[a]["data_offsets"][0]), float(h[a]["data_offsets"][1])]
elif mode == "negative":
    h[a]["shape"] = [-x for x in h[a]["shape"]]
elif mode == "dtype":
    h[a]["dtype"] = "Q4_K"
elif mode == "trailing":
    data += b"\0" * 8
elif mode == "hugeheader":
    open(p, "wb").write(struct.pack("<Q", 1 << 62) + b[8:]); sys.exit()
hb = json.dumps(h).encode(); hb += b" " * (-len(hb) % 8)
open(p, "wb").write(struct.pack("<Q", len(hb)) + hb + data)
EOF
}
for case in "overlap:must not share bytes" "float:data_offsets" "negative:must hold integers >= 0" "dtype:unsupported dtype \"Q4_K\"" \
            "trailing:trailing bytes" "hugeheader:header says"; do
  mkmodel "$m"; safetensors "$m" "${case%%:*}"
  refuse "safetensors ${case%%:*}" "${case#*:}" "$FOXEVAL" info --model "$m"
done
config() {  # DIR KEY JSON-VALUE
  $PY -c 'import json,sys; p=sys.argv[1]+"/config.json"; c=json.load(open(p)); c[sys.argv[2]]=json.loads(sys.argv[3]); json.dump(c,open(p,"w"))' "$@"
}
for case in 'hidden_ratio:-3.5' 'num_hidden_layers:0' 'norm_eps:-1' 'vocab_size:1e12'; do
  mkmodel "$m"; config "$m" "${case%%:*}" "${case#*:}"
  refuse "config.json ${case}" "field \"${case%%:*}\"" "$FOXEVAL" info --model "$m"
done

# ---- result and prediction files are input too ----
$PY -c 'import sys; open(sys.argv[1], "w").write("[" * 100000 + "]" * 100000)' "$tmp/deep.json"
refuse "JSON nested 100000 deep (no stack overflow)" "nested more than 512 levels" "$FOXEVAL" table "$tmp/deep.json"
mkmodel "$m"; $PY -c 'import sys; p=sys.argv[1]+"/config.json"; t=open(p).read().rstrip().rstrip("}"); open(p,"w").write(t+", \"x\": "+"["*100000+"]"*100000+"}")' "$m"
refuse "config.json nested 100000 deep" "nested more than 512 levels" "$FOXEVAL" info --model "$m"
printf "[1, 2]" >"$tmp/array.json"
refuse "check on a JSON array" "not a foxeval result" "$FOXEVAL" check "$tmp/array.json" --baseline "$tmp/array.json"
mkdir -p "$tmp/pd1" "$tmp/pd2" "$tmp/hay2"
touch "$tmp/pd1/Huggingface_len_99999999999999999999_depth_0.txt" "$tmp/pd1/Huggingface_len_99999999999999999999_depth_0.txt.done"
refuse "prediction named with a 20-digit length" "out of range" "$FOXEVAL" niah score --pred-dir "$tmp/pd1" --out "$out/ps.json"
ln -s /etc/hostname "$tmp/pd2/Huggingface_len_1000_depth_0.txt"; touch "$tmp/pd2/Huggingface_len_1000_depth_0.txt.done"
refuse "prediction a symlink out of --pred-dir" "outside the folder" "$FOXEVAL" niah score --pred-dir "$tmp/pd2" --out "$out/ps.json"
cp "$tmp/hay/e.txt" "$tmp/hay2/"; ln -s /etc/hostname "$tmp/hay2/z.txt"
refuse "haystack .txt a symlink out of --haystack" "outside the folder" "$FOXEVAL" niah prompts --haystack "$tmp/hay2" --out "$out/pp" --lengths 300
printf '{"cells": [{"length": "x", "depth": 0, "prediction": 5}], "header": {"settings": {"answer": "a b", "mode": "standard"}}}' >"$tmp/bad_result.json"
refuse "niah score --result with cells of the wrong types" "--result $tmp/bad_result.json" "$FOXEVAL" niah score --result "$tmp/bad_result.json" --out "$out/ps.json"

# ---- merge: shard parts are input too ----
printf '{"kind": "foxeval-part", "task": "loss", "identity": {"seq_len": 4}, "items": ["w"], "num_shards": 1000000000000000000, "shard_index": 0, "done": ["w"], "state": {"sum_fixed": [1,2,3,4], "documents": 1, "rows": 1, "tokens_dropped": 0, "rows_unread": 0}, "elapsed_s": 1}' >"$tmp/p1.json"
refuse "merge: a part claiming 1e18 shards (no hang)" "num_shards" "$FOXEVAL" merge --out "$out/m.json" "$tmp/p1.json"
printf '{"kind": "foxeval-part", "task": "loss", "identity": {"num_shards": 1, "seq_len": 400}, "items": ["w"], "num_shards": 1, "shard_index": 0, "done": ["w"], "state": {"sum_fixed": [1], "documents": 1, "rows": 1, "tokens_dropped": 0, "rows_unread": 0}, "elapsed_s": 1}' >"$tmp/p2.json"
refuse "merge: a part with too few sums" "sum_fixed has 1 positions" "$FOXEVAL" merge --out "$out/m.json" "$tmp/p2.json"
printf '{"kind": "foxeval-part", "task": "niah", "identity": {}, "items": ["a"], "num_shards": 3, "shard_index": 7, "records": {}}' >"$tmp/p3.json"
refuse "merge: a shard index out of range" "shard_index 7 is outside [0, 3)" "$FOXEVAL" merge --out "$out/m.json" "$tmp/p3.json"

# ---- the judge: only http(s), bounded replies and time, never the key ----
mkdir -p "$tmp/jp"
printf 'eat a sandwich' >"$tmp/jp/Huggingface_len_1000_depth_0.txt"; touch "$tmp/jp/Huggingface_len_1000_depth_0.txt.done"
J=(niah score --pred-dir "$tmp/jp" --mode standard --judge-model m --judge-backoff 0.05 --out "$out/j.json")
refuse "judge file://" "only http:// and https://" "$FOXEVAL" "${J[@]}" --judge-url file:///etc/hostname
refuse "judge --judge-timeout -1" "--judge-timeout: '-1'" "$FOXEVAL" "${J[@]}" --judge-url http://127.0.0.1:9/v1 --judge-timeout -1
refuse "judge --judge-backoff -1" "--judge-backoff: '-1'" "$FOXEVAL" "${J[@]}" --judge-url http://127.0.0.1:9/v1 --judge-backoff -1
refuse "judge --judge-tries 0" "--judge-tries: '0'" "$FOXEVAL" "${J[@]}" --judge-url http://127.0.0.1:9/v1 --judge-tries 0
refuse "judge --judge-key-env unset" "--judge-key-env FOXEVAL_SURELY_UNSET_VARIABLE" \
  env -u FOXEVAL_SURELY_UNSET_VARIABLE "$FOXEVAL" "${J[@]}" --judge-url http://127.0.0.1:9/v1 --judge-key-env FOXEVAL_SURELY_UNSET_VARIABLE

$PY tests/tools/hostile_http_stub.py "$tmp/port" "$tmp/stub.log" 50 & stub_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port" 2>/dev/null)
if [ -z "$port" ]; then
  bad "the hostile stub did not start"
else
  url="http://127.0.0.1:$port"
  export FOXEVAL_TEST_JUDGE_KEY="sk-hostile-test-0123456789"
  refuse "judge echoing the request" "HTTP 500" "$FOXEVAL" "${J[@]}" --judge-url "$url/echo/v1" --judge-key-env FOXEVAL_TEST_JUDGE_KEY
  grep -qF "$FOXEVAL_TEST_JUDGE_KEY" "$tmp/e" && bad "the API key appears in stderr" || ok
  grep -qF "[redacted]" "$tmp/e" && ok || bad "the echoed key is shown redacted"
  : >"$tmp/stub.log"
  refuse "judge reply over the cap" "larger than 8388608 bytes" "$FOXEVAL" "${J[@]}" --judge-url "$url/big/v1"
  [ "$(grep -c big "$tmp/stub.log")" -eq 1 ] && ok || bad "an oversized reply is not retried ($(grep -c big "$tmp/stub.log") requests)"
  refuse "judge Content-Length over the cap" "larger than 8388608 bytes" "$FOXEVAL" "${J[@]}" --judge-url "$url/biglen/v1"
  start=$(date +%s)
  refuse "judge slow reply" "--judge-timeout 0.5 s" "$FOXEVAL" "${J[@]}" --judge-url "$url/slow/v1" --judge-timeout 0.5 --judge-tries 2
  [ $(( $(date +%s) - start )) -le 10 ] && ok || bad "--judge-timeout bounds the whole request"
  refuse "judge reply with control characters" "HTTP 502" "$FOXEVAL" "${J[@]}" --judge-url "$url/control/v1" --judge-tries 1
  grep -qF '\x1b' "$tmp/e" && ok || bad "control characters are shown escaped"
  timeout 30 "$FOXEVAL" "${J[@]}" --judge-url "$url/ok/v1" --judge-key-env FOXEVAL_TEST_JUDGE_KEY >/dev/null 2>"$tmp/e" && ok || bad "judge ok"
  ! grep -qF "$FOXEVAL_TEST_JUDGE_KEY" "$out/j.json" "$tmp/e" && grep -qF '"judge_score": 7' "$out/j.json" && ok ||
    bad "a judged result holds the rating and never the key"
  kill $stub_pid 2>/dev/null; wait $stub_pid 2>/dev/null; stub_pid=""
fi

# ---- one run per --out ----
$PY - "$tmp/big.npy" <<'EOF'
import random, struct, sys
rows, cols = 64, 1024
h = "{'descr': '<i4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
h = h + ' ' * ((64 - (10 + len(h) + 1) % 64) % 64) + '\n'
r = random.Random(1)
data = struct.pack('<%di' % (rows * cols), *[r.randrange(256) for _ in range(rows * cols)])
open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + len(h).to_bytes(2, 'little') + h.encode() + data)
EOF
B=(loss --model $fox --data "$tmp/big.npy" --bos-id 0 --save-every 1000 --out "$out/lock/r.json")
wait_lock() { for _ in $(seq 200); do [ -s "$out/lock/r.json.lock" ] && return 0; sleep 0.05; done; return 1; }
"$FOXEVAL" "${B[@]}" >/dev/null 2>&1 & bg_pid=$!
if wait_lock; then
  refuse "a second run on a held --out" "another foxeval run (pid $bg_pid)" "$FOXEVAL" "${B[@]}"
  kill -TERM $bg_pid; wait $bg_pid; rc=$?
  [ $rc -eq 3 ] && [ ! -e "$out/lock/r.json.lock" ] && ok || bad "SIGTERM: exit 3 ($rc) and the lock released"
  rm -f "$out/lock/r.json.state.json"
else
  bad "the first run did not take the lock"; kill -9 $bg_pid
fi
"$FOXEVAL" "${B[@]}" >/dev/null 2>&1 & bg_pid=$!
if wait_lock; then
  kill -KILL $bg_pid; wait $bg_pid 2>/dev/null
  [ -e "$out/lock/r.json.lock" ] && ok || bad "SIGKILL leaves the lock file behind"
  timeout 60 "$FOXEVAL" loss --model $fox --data "$tmp/big.npy" --bos-id 0 --tokens 2048 --out "$out/lock/r.json" >/dev/null 2>"$tmp/e" &&
    [ -f "$out/lock/r.json" ] && [ ! -e "$out/lock/r.json.lock" ] && ok || { bad "a dead run's lock is taken over"; cat "$tmp/e" >&2; }
else
  bad "the second run did not take the lock"; kill -9 $bg_pid
fi
bg_pid=""
sleep 30 & holder=$!
echo $holder >"$out/lock/r.json.lock"
refuse "a lock naming a live process" "pid $holder" "$FOXEVAL" loss --model $fox --data "$tmp/big.npy" --bos-id 0 --tokens 2048 --out "$out/lock/r.json"
kill $holder 2>/dev/null; wait $holder 2>/dev/null; rm -f "$out/lock/r.json.lock"

wait $lane2_pid
read -r p2 f2 <"$tmp/lane2.counts" 2>/dev/null || { p2=0; f2=1; echo "FAILED: the flag lane did not finish" >&2; }
pass=$((pass + p2)); fail=$((fail + f2))

# ---- identical runs give identical bits, also when two run at once (load) ----
D=(loss --model $fox --data tests/fixtures/loss/tokens.npy --bos-id 0)
"$FOXEVAL" "${D[@]}" --out "$out/det/a.json" >/dev/null 2>&1 & p1=$!
"$FOXEVAL" "${D[@]}" --out "$out/det/b.json" >/dev/null 2>&1 & p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && $PY -c 'import json,sys; a,b=(json.load(open(p))["val/loss_per_token"] for p in sys.argv[1:]); sys.exit(a != b)' \
  "$out/det/a.json" "$out/det/b.json" && ok || bad "two identical loss runs differ"

# ---- nothing written outside the cases' --out, no temp or lock file left behind ----
extra=$(cd "$tmp" && find . -mindepth 1 -maxdepth 1 ! -name out ! -name 'e' ! -name 'o' ! -name e2 ! -name o2 ! -name lane2.counts ! -name 'hay*' ! -name afile ! -name '*.npy' \
          ! -name m ! -name 'p?.json' ! -name jp ! -name port ! -name stub.log ! -name deep.json ! -name array.json ! -name 'pd?' \
          ! -name bad_result.json | tr '\n' ' ')
[ -z "$extra" ] && ok || bad "files written outside --out: $extra"
left=$(find "$out" \( -name '*.lock' -o -name '*.tmp.*' \) | tr '\n' ' ')
[ -z "$left" ] && ok || bad "left behind: $left"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
