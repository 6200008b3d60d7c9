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

shared_fixtures=../shared/fixtures; [ -d "$shared_fixtures" ] || shared_fixtures=tests/fixtures
# What no case may change: every name, type, size, mtime and link target under $tmp (all but the
# cases' --out and the scratch files of stdout, stderr and the stubs), the bytes of its files, and
# the fixtures the cases read. Compared around every refused case of the main lane.
tree_state() {
  local skip=( \( -path "$out" -o -name e -o -name o -o -name e2 -o -name o2 -o -name lane2.counts -o -name port
               -o -name stub.log \) -prune -o )
  { find "$tmp" -mindepth 1 "${skip[@]}" -printf '%p %y %s %T@ %l\n'
    find "$tmp" -mindepth 1 "${skip[@]}" -type f -print0 | xargs -0 -r sha256sum
    find tests/fixtures "$shared_fixtures" -printf '%p %y %s %T@ %l\n'; } 2>/dev/null | sort
}

# refuse NAME TEXT CMD...: exit 2 within 30 s, stderr holds TEXT, no stack trace, no raw control
# characters, no 300-digit numbers, at most 12 lines; nothing outside $out changed (main lane).
refuse() {
  local name="$1" text="$2"; shift 2
  local o="$tmp/o$lane" e="$tmp/e$lane" before=""
  [ -z "$lane" ] && before=$(tree_state)
  timeout -s KILL 30 "$@" >"$o" 2>"$e" </dev/null
  local rc=$?
  if [ -z "$lane" ]; then
    local after; after=$(tree_state)
    if [ "$before" != "$after" ]; then
      bad "$name: changed outside --out: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | head -4 | tr '\n' ' ')"
      return
    fi
  fi
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
# A checkpoint folder made of links to files elsewhere (as clusters assemble them) loads (#57):
# links on disk are the user's own and are followed for reading; names inside files are confined.
mkdir -p "$tmp/store" "$tmp/mlinks"; cp $fox/config.json "$tmp/store/c.json"; cp $fox/model.safetensors "$tmp/store/w.bin"
ln -sf "$tmp/store/c.json" "$tmp/mlinks/config.json"; ln -sf "$tmp/store/w.bin" "$tmp/mlinks/model.safetensors"
timeout 60 "$FOXEVAL" info --model "$tmp/mlinks" >/dev/null 2>"$tmp/e" && ok || { bad "a checkpoint folder of symlinks loads"; head -c 600 "$tmp/e" >&2; }
mkmodel "$m"; rm "$m/config.json"; mkfifo "$tmp/store/fifo"; ln -s "$tmp/store/fifo" "$m/config.json"
refuse "config.json a link to a FIFO (no hang)" "not a regular file (a FIFO)" "$FOXEVAL" info --model "$m"
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
mkfifo "$tmp/pd2/Huggingface_len_1000_depth_0.txt"; touch "$tmp/pd2/Huggingface_len_1000_depth_0.txt.done"
refuse "prediction a FIFO in --pred-dir (no hang)" "not a regular file" "$FOXEVAL" niah score --pred-dir "$tmp/pd2" --out "$out/ps.json"
cp "$tmp/hay/e.txt" "$tmp/hay2/"; mkfifo "$tmp/hay2/z.txt"
refuse "haystack .txt a FIFO (no hang)" "not a regular file" "$FOXEVAL" niah prompts --haystack "$tmp/hay2" --out "$out/pp" --lengths 300
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
  # #55 class 4: credentials in the URL itself never reach a file (nor stderr).
  timeout 30 "$FOXEVAL" "${J[@]}" --judge-url "http://judgeuser:pw-secret-42@127.0.0.1:$port/ok/v1?api-key=qk-secret-43&m=x" \
    >/dev/null 2>"$tmp/e" && ok || bad "judge ok with credentials in the URL"
  ! grep -rqE "pw-secret-42|qk-secret-43" "$out" "$tmp/e" && grep -qF '"judge_url": "http://127.0.0.1:' "$out/j.json" && ok ||
    bad "a URL's password or api-key is stored or shown"
  # #55 class 6: a rating of 30,000 digits (std::regex overflowed the stack): a clean end, no signal.
  timeout 30 "$FOXEVAL" "${J[@]}" --judge-url "$url/digits/v1" --judge-tries 1 >/dev/null 2>"$tmp/e"; rc=$?
  { [ $rc -eq 0 ] || [ $rc -eq 2 ]; } && ! grep -qE 'frame #|Segmentation' "$tmp/e" && ok || bad "judge reply [[30,000 digits]]: exit $rc"
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

# ---- identical runs give identical bits: default threads, under load, any thread count ----
# (#55 class 7; models/cpu_threads.h.) The thread count never changes a bit: MKL's GEMMs run in its
# strict reproducible mode, every other op on one thread. Before, 3 threads (--threads 3 or
# OMP_NUM_THREADS=3) gave other last bits on this fixture than 1, 2 or 4: a sigmoid range ending
# off the vector grid. Here: one run alone with the default threads, then under two busy loops, at
# once: the default twice, OMP_NUM_THREADS=3, --threads 7, one CPU (taskset), and MKL_DYNAMIC /
# OMP_DYNAMIC asking the libraries to choose their own counts.
D=(loss --model $fox --data tests/fixtures/loss/tokens.npy --bos-id 0)
"$FOXEVAL" "${D[@]}" --out "$out/det/alone.json" >/dev/null 2>&1
busy=(); for _ in 1 2; do timeout 120 bash -c 'while :; do :; done' & busy+=($!); done
dets=()
"$FOXEVAL" "${D[@]}" --out "$out/det/a.json" >/dev/null 2>&1 & dets+=($!)
"$FOXEVAL" "${D[@]}" --out "$out/det/b.json" >/dev/null 2>&1 & dets+=($!)
OMP_NUM_THREADS=3 "$FOXEVAL" "${D[@]}" --out "$out/det/c.json" >/dev/null 2>&1 & dets+=($!)
"$FOXEVAL" "${D[@]}" --threads 7 --out "$out/det/d.json" >/dev/null 2>&1 & dets+=($!)
one_cpu=(); command -v taskset >/dev/null && one_cpu=(taskset -c 0)
"${one_cpu[@]}" "$FOXEVAL" "${D[@]}" --out "$out/det/e.json" >/dev/null 2>&1 & dets+=($!)
MKL_DYNAMIC=TRUE OMP_DYNAMIC=TRUE "$FOXEVAL" "${D[@]}" --out "$out/det/f.json" >/dev/null 2>&1 & dets+=($!)
det_rc=0; for p in "${dets[@]}"; do wait $p || det_rc=1; done
kill "${busy[@]}" 2>/dev/null; wait "${busy[@]}" 2>/dev/null
[ $det_rc -eq 0 ] && $PY -c '
import json, sys
runs = [json.load(open(p))["val/loss_per_token"] for p in sys.argv[1:]]
sys.exit(any(r != runs[0] for r in runs))' "$out"/det/{alone,a,b,c,d,e,f}.json && ok ||
  bad "identical loss runs differ (under load, at another thread count, or with the libraries asked to choose)"
# A non-strict MKL mode would let the thread count change bits again: refused, not overridden.
refuse "MKL_CBWR=COMPATIBLE" "MKL_CBWR=COMPATIBLE" env MKL_CBWR=COMPATIBLE "$FOXEVAL" "${D[@]}" --out "$out/det/g.json"

# ---- #55: an output never replaces an input; nothing written through a link; bounded reads ----
h="$tmp/h55"; mkdir -p "$h/data"; cp tests/fixtures/loss/tokens.npy "$h/data/t.npy"; mkmodel "$h/model"
ln -s "$h/data" "$h/datalink"
printf '{"kind": "loglikelihood", "context": "a", "continuation": " b"}\n' >"$h/req.jsonl"
cp "$tmp/p3.json" "$h/part.json"; cp -r "$tmp/hay" "$h/hay"; mkdir -p "$h/cfg"
cp tests/fixtures/results/loss_fox_pro.json "$h/data/r.json"
# Every file's bytes and every name under $h (links as links): compared after all the cases.
snapshot() { (cd "$h" && find . -type f -print0 | sort -z | xargs -0 sha256sum; find . -printf '%p %y %l\n' | sort); }
before=$(snapshot)
H=(loss --model "$h/model" --data "$h/data/t.npy" --bos-id 0)
refuse "loss --out its own --data" "an output never replaces an input" "$FOXEVAL" "${H[@]}" --out "$h/data/t.npy"
refuse "loss --out its --data spelled through a link and .." "is the input --data" "$FOXEVAL" "${H[@]}" --out "$h/datalink/../data/t.npy"
refuse "loss --out its --data through a linked folder" "is the input --data" "$FOXEVAL" "${H[@]}" --out "$h/datalink/t.npy"
refuse "loss --out the model's config.json" "is inside the input --model" "$FOXEVAL" "${H[@]}" --out "$h/model/config.json"
refuse "loss --out inside the data folder" "is inside the input --data" "$FOXEVAL" loss --model "$h/model" --data "$h/data" --bos-id 0 --out "$h/data/r.json"
refuse "loss --out relative, same file" "is the input --data" \
  env -C "$h/data" "$(realpath "$FOXEVAL")" loss --model ../model --data t.npy --bos-id 0 --out ./t.npy
refuse "score --out its --requests" "is the input --requests" "$FOXEVAL" score --model "$h/model" --requests "$h/req.jsonl" --out "$h/req.jsonl"
refuse "merge --out one of its parts" "is the input parts" "$FOXEVAL" merge --out "$h/part.json" "$h/part.json"
refuse "niah run --pred-dir the haystack" "is the input --haystack" "$FOXEVAL" niah run --model "$h/model" --haystack "$h/hay" --out "$out/n55.json" --lengths 300 --pred-dir "$h/hay"
refuse "longbench run --out its --config" "is the input --config" "$FOXEVAL" longbench run --model "$h/model" --data "$h/data" --config "$h/cfg" --out "$h/cfg"
refuse "lm-eval requests --out inside its --data" "is inside the input --data" "$FOXEVAL" lm-eval requests --tasks piqa --data "$h/data" --out "$h/data/q.jsonl"
# Nothing written through a link: a state file or lock that is a link is refused, its target untouched.
printf 'precious\n' >"$tmp/target.txt"; mkdir -p "$out/l55"; ln -s "$tmp/target.txt" "$out/l55/r.json.state.json"
refuse "loss --resume with a state file that is a link" "is a symbolic link" "$FOXEVAL" "${H[@]}" --out "$out/l55/r.json" --resume
rm -f "$out/l55/r.json.state.json"; ln -s "$tmp/target.txt" "$out/l55/r.json.lock"
refuse "a lock file that is a link" "--out $out/l55/r.json" "$FOXEVAL" "${H[@]}" --out "$out/l55/r.json"
rm -f "$out/l55/r.json.lock"
[ "$(cat "$tmp/target.txt")" = precious ] && ok || bad "a link's target was written"
# Names inside a file stay inside its folder: a zip member named /trec.jsonl.
$PY -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], "w"); z.writestr(zipfile.ZipInfo("/trec.jsonl"), "{}\n"); z.close()' "$tmp/evil.zip"
refuse "zip member /trec.jsonl" "not a relative path inside the archive" "$FOXEVAL" longbench prompts --data "$tmp/evil.zip" --tasks trec --out "$out/lb55.jsonl"
# refs/main through the whole hub resolution (a model id, a dataset): a FIFO is refused at once as
# "not a regular file", never waited on nor called missing; a link to nothing says so.
hub="$tmp/hub55"; mkdir -p "$hub/hub/models--org--m/refs" "$hub/hub/models--org--m/snapshots" "$hub/hub/datasets--piqa/refs"
mkfifo "$hub/hub/models--org--m/refs/main" "$hub/hub/datasets--piqa/refs/main" "$hub/fifo"
ln -s "$hub/fifo" "$hub/hub/models--org--m/refs/v2"; ln -s "$hub/nothing" "$hub/hub/models--org--m/refs/v3"
refuse "hub refs/main a FIFO (model id)" "refs/main: not a regular file" env HF_HUB_CACHE="$hub/hub" "$FOXEVAL" info --model org/m
refuse "hub refs/v2 a link to a FIFO (model id)" "refs/v2: not a regular file" env HF_HUB_CACHE="$hub/hub" "$FOXEVAL" info --model org/m@v2
refuse "hub refs/v3 a link to nothing" "refs/v3: a symbolic link to $hub/nothing, which does not exist" \
  env HF_HUB_CACHE="$hub/hub" "$FOXEVAL" info --model org/m@v3
refuse "hub refs/main a FIFO (lm-eval dataset)" "datasets--piqa/refs/main: not a regular file" \
  env -u HF_HUB_CACHE -u HF_DATASETS_CACHE HF_HOME="$hub" "$FOXEVAL" lm-eval requests --tasks piqa --out "$out/q55h.jsonl"
# Other spellings of an input, for every kind of output: a trailing slash, a folder link and '.',
# a link at --out to the input, and the -o of table, report, compare and plot.
refuse "loss --out its --data with a trailing slash" "is the input --data" "$FOXEVAL" "${H[@]}" --out "$h/data/t.npy/"
refuse "loss --out its --data as link/./name" "is the input --data" "$FOXEVAL" "${H[@]}" --out "$h/datalink/./t.npy"
mkdir -p "$out/sp55"; ln -sf "$h/data/t.npy" "$out/sp55/linked.json"
refuse "loss --out a link to its --data" "is the input --data" "$FOXEVAL" "${H[@]}" --out "$out/sp55/linked.json"
refuse "table -o its input through a folder link" "an output never replaces an input" "$FOXEVAL" table "$h/data/r.json" -o "$h/datalink/r.json"
refuse "report -o its input spelled with .." "an output never replaces an input" "$FOXEVAL" report "$h/data/r.json" -o "$h/datalink/../data/r.json"
refuse "compare -o one of its inputs" "an output never replaces an input" "$FOXEVAL" compare "$h/data/r.json" "$h/data/r.json" -o "$h/data/r.json"
refuse "plot loss -o its input" "an output never replaces an input" "$FOXEVAL" plot loss "$h/data/r.json" -o "$h/data/r.json"
refuse "inspect gates -o the model's config.json" "is inside the input --model" "$FOXEVAL" inspect gates --model "$h/model" --data "$h/data/t.npy" -o "$h/model/config.json"
refuse "lm-eval run --log-samples inside its --data" "is inside the input --data" \
  "$FOXEVAL" lm-eval run --model "$h/model" --tasks piqa --data "$h/data" --out "$out/e55.json" --log-samples "$h/data/s"
# Journals: a FIFO is refused at once (never opened for reading); a damaged line names file and line.
mkdir -p "$out/j55"; mkfifo "$out/j55/n.json.journal.jsonl"
NJ=(niah run --model $trained --haystack "$tmp/hay" --out "$out/j55/n.json" --lengths 300 --depths 0 --resume)
refuse "a journal that is a FIFO (no hang)" "the journal is not a regular file" "$FOXEVAL" "${NJ[@]}"
rm -f "$out/j55/n.json.journal.jsonl"; printf 'garbage\n{"a": 1}\n' >"$out/j55/n.json.journal.jsonl"
refuse "a damaged journal line" "n.json.journal.jsonl line 1: not a JSON line" "$FOXEVAL" "${NJ[@]}"
rm -f "$out/j55/n.json.journal.jsonl"
# Zip members with Windows separators or a drive letter leave the folder for Windows tools: refused.
$PY -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], "w"); z.writestr(zipfile.ZipInfo(sys.argv[2]), "{}\n"); z.close()' \
  "$tmp/evil2.zip" '..\..\trec.jsonl'
refuse "zip member ..\\..\\trec.jsonl" "a backslash" "$FOXEVAL" longbench prompts --data "$tmp/evil2.zip" --tasks trec --out "$out/lb55.jsonl"
$PY -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], "w"); z.writestr(zipfile.ZipInfo("data/../../trec.jsonl"), "{}\n"); z.close()' "$tmp/evil3.zip"
refuse "zip member data/../../trec.jsonl" "not a relative path inside the archive" "$FOXEVAL" longbench prompts --data "$tmp/evil3.zip" --tasks trec --out "$out/lb55.jsonl"
# Bounded: a FIFO where a .npy belongs, a safetensors header nested 100k deep.
mkfifo "$tmp/fifo.npy"
refuse "loss --data a FIFO (no hang)" "not a regular file" "$FOXEVAL" loss --model "$h/model" --data "$tmp/fifo.npy" --bos-id 0 --out "$out/f55.json"
mkmodel "$m"
$PY -c '
import struct, sys
hb = b"{\"a\": " + b"[" * 100000 + b"]" * 100000 + b"}"
hb += b" " * (-len(hb) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(hb)) + hb)' "$m/model.safetensors"
refuse "safetensors header nested 100000 deep (no stack overflow)" "nested more than 512 levels" "$FOXEVAL" info --model "$m"
# Launcher variables are flags: range-checked.
refuse "WORLD_SIZE=1000000000" "WORLD_SIZE=1000000000 is not allowed" env WORLD_SIZE=1000000000 RANK=0 "$FOXEVAL" "${H[@]}" --out "$out/w55.json"
refuse "FOXEVAL_DIST_TIMEOUT=inf" "FOXEVAL_DIST_TIMEOUT=inf is not allowed" \
  env WORLD_SIZE=2 RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=9 FOXEVAL_DIST_TIMEOUT=inf "$FOXEVAL" "${H[@]}" --out "$out/w55.json"
# Values accepted before but meaningless.
refuse "niah --lengths 300,,400" "--lengths: an empty item" "$FOXEVAL" niah run --model "$h/model" --haystack "$h/hay" --out "$out/n55.json" --lengths 300,,400
refuse "lm-eval --limit 0x10" "--limit: '0x10' is not allowed" "$FOXEVAL" lm-eval requests --tasks piqa --data "$tmp/none" --out "$out/q55.jsonl" --limit 0x10
refuse "longbench --stop-after -1" "--stop-after: '-1'" "$FOXEVAL" longbench run --model "$h/model" --data "$tmp/none" --out "$out/lb55" --stop-after -1
mkmodel "$m"; config "$m" hidden_ratio 0.0001
refuse "config.json hidden_ratio giving an MLP width of 0" "MLP width of 0" "$FOXEVAL" info --model "$m"
mkmodel "$m"; $PY -c 'import json,sys; p=sys.argv[1]+"/config.json"; c=json.load(open(p)); c["norm_eps"]=float("nan"); json.dump(c,open(p,"w"))' "$m"
refuse "config.json norm_eps NaN" 'field "norm_eps"' "$FOXEVAL" info --model "$m"
bad_name=$(printf '%s/bad\377name.npy' "$tmp")
refuse "an invalid UTF-8 path" 'not valid UTF-8' "$FOXEVAL" loss --model "$h/model" --data "$bad_name" --bos-id 0 --out "$out/u55.json"
grep -qF 'bad\xffname' "$tmp/e" && ok || bad "the invalid byte is shown escaped"
# score, merge and lm-eval requests take the output lock, as task runs do.
sleep 30 & holder=$!; echo $holder >"$out/s55.jsonl.lock"; echo $holder >"$out/m55.json.lock"; echo $holder >"$out/q55.jsonl.lock"
refuse "score on a held --out" "pid $holder" "$FOXEVAL" score --model "$h/model" --requests "$h/req.jsonl" --out "$out/s55.jsonl"
refuse "merge on a held --out" "pid $holder" "$FOXEVAL" merge --out "$out/m55.json" "$h/part.json"
refuse "lm-eval requests on a held --out" "pid $holder" "$FOXEVAL" lm-eval requests --tasks piqa --data "$tmp/none" --out "$out/q55.jsonl"
kill $holder 2>/dev/null; wait $holder 2>/dev/null; rm -f "$out/s55.jsonl.lock" "$out/m55.json.lock" "$out/q55.jsonl.lock"
# One job, one run: ranks given different --data refuse together; a second job on the same
# MASTER_PORT is told at once; FOXEVAL_DIST_TIMEOUT bounds the wait for missing ranks as a whole.
cp tests/fixtures/loss/tokens.npy "$out/u.npy"; $PY -c 'import sys; b=bytearray(open(sys.argv[1],"rb").read()); b[-1]^=1; open(sys.argv[1],"wb").write(b)' "$out/u.npy"
port=$((20000 + RANDOM % 20000))
DE=(env MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 FOXEVAL_DIST_TIMEOUT=60)
"${DE[@]}" RANK=0 "$FOXEVAL" "${H[@]}" --out "$out/d55/r.json" >/dev/null 2>"$out/e_r0" & r0=$!
refuse "ranks given different --data" "was given another run than rank 0" \
  "${DE[@]}" RANK=1 "$FOXEVAL" loss --model "$h/model" --data "$out/u.npy" --bos-id 0 --out "$out/d55/r.json"
wait $r0; rc=$?
[ $rc -eq 2 ] && grep -qF "was given another run than rank 0" "$out/e_r0" && [ ! -e "$out/d55/r.json" ] && ok ||
  bad "rank 0 of a job whose ranks disagree refuses too (exit $rc)"
port=$((20000 + RANDOM % 20000))
env MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 RANK=0 FOXEVAL_DIST_TIMEOUT=30 "$FOXEVAL" "${H[@]}" --out "$out/d55/a.json" >/dev/null 2>&1 & r0=$!
sleep 3
start=$(date +%s.%N)
refuse "a second job on the same MASTER_PORT" "another job uses MASTER_PORT=$port" \
  env MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=3 RANK=1 FOXEVAL_DIST_TIMEOUT=30 "$FOXEVAL" "${H[@]}" --out "$out/d55/b.json"
took=$($PY -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$start" "$(date +%s.%N)")
$PY -c "import sys; sys.exit(float(sys.argv[1]) > 8)" "$took" && ok || bad "a second job on MASTER_PORT is told at once, not after its 30 s ($took s)"
# Its rank 0 too: the port is taken, said at once.
start=$(date +%s.%N)
refuse "a second job's rank 0 on the same MASTER_PORT" "is another job using MASTER_PORT=$port" \
  env MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 RANK=0 FOXEVAL_DIST_TIMEOUT=30 "$FOXEVAL" "${H[@]}" --out "$out/d55/c.json"
took=$($PY -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$start" "$(date +%s.%N)")
$PY -c "import sys; sys.exit(float(sys.argv[1]) > 8)" "$took" && ok || bad "a second job's rank 0 is told at once ($took s)"
kill $r0 2>/dev/null; wait $r0 2>/dev/null; rm -f "$out/d55/a.json.lock"  # killed before its signal handler: a stale lock
port=$((20000 + RANDOM % 20000)); start=$(date +%s.%N)
refuse "FOXEVAL_DIST_TIMEOUT=3 with two ranks missing" "FOXEVAL_DIST_TIMEOUT" \
  env MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=3 RANK=0 FOXEVAL_DIST_TIMEOUT=3 "$FOXEVAL" "${H[@]}" --out "$out/d55/t.json"
took=$($PY -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$start" "$(date +%s.%N)")
echo "  (FOXEVAL_DIST_TIMEOUT=3 with two ranks missing: exit after $took s)"
$PY -c "import sys; sys.exit(float(sys.argv[1]) > 3 + 3)" "$took" && ok || bad "FOXEVAL_DIST_TIMEOUT=3 took $took s"
# A store that accepts and never answers (or answers garbage): TCPStore's reads have no timeout of
# their own, so FOXEVAL_DIST_TIMEOUT must still hold (3 s + the start, well under the 30 s cap).
for mode in silent garbage; do
  $PY -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
open(sys.argv[1], "w").write(str(s.getsockname()[1])); s.settimeout(0.5); held = []; end = time.time() + 40
while time.time() < end:
    try:
        c, _ = s.accept(); held.append(c)
        if sys.argv[2] == "garbage": c.sendall(b"\xff" * 64)
    except socket.timeout: pass' "$out/sport" $mode & stub_pid=$!
  for _ in $(seq 100); do [ -s "$out/sport" ] && break; sleep 0.1; done
  start=$(date +%s.%N)
  refuse "a $mode store at MASTER_PORT, FOXEVAL_DIST_TIMEOUT=3" "within 3 s" \
    env MASTER_ADDR=127.0.0.1 MASTER_PORT=$(cat "$out/sport") WORLD_SIZE=2 RANK=1 FOXEVAL_DIST_TIMEOUT=3 "$FOXEVAL" "${H[@]}" --out "$out/d55/s.json"
  took=$($PY -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$start" "$(date +%s.%N)")
  echo "  (a $mode store, FOXEVAL_DIST_TIMEOUT=3: exit after $took s)"
  # What is asserted: the deadline holds, not TCPStore's 30 s. Measured on this 2-core machine from
  # the command's start: 4.9 s (2026-11-28), 5.6-6.2 s (2026-11-29, the same binary as the day before
  # too: the start and the store's teardown vary by machine), so 3 s + 5 s, as the port checks above.
  $PY -c "import sys; sys.exit(float(sys.argv[1]) > 3 + 5)" "$took" && ok || bad "a $mode store: FOXEVAL_DIST_TIMEOUT=3 took $took s"
  kill $stub_pid 2>/dev/null; wait $stub_pid 2>/dev/null; stub_pid=""; rm -f "$out/sport"
done
after=$(snapshot)
[ "$before" = "$after" ] && ok || bad "an input changed: $(diff <(echo "$before") <(echo "$after") | head -5 | tr '\n' ' ')"

# ---- nothing written outside the cases' --out, no temp or lock file left behind ----
extra=$(cd "$tmp" && find . -mindepth 1 -maxdepth 1 ! -name out ! -name 'e' ! -name 'o' ! -name e2 ! -name o2 ! -name lane2.counts ! -name 'hay*' ! -name afile ! -name '*.npy' \
          ! -name m ! -name 'p?.json' ! -name jp ! -name port ! -name stub.log ! -name deep.json ! -name array.json ! -name 'pd?' \
          ! -name bad_result.json ! -name store ! -name mlinks ! -name h55 ! -name target.txt ! -name evil.zip \
          ! -name fifo.npy ! -name 'bad*name.npy' ! -name hub55 ! -name 'evil?.zip' | tr '\n' ' ')
[ -z "$extra" ] && ok || bad "files written outside --out: $extra"
left=$(find "$out" \( -name '*.lock' -o -name '*.tmp.*' \) | tr '\n' ' ')
[ -z "$left" ] && ok || bad "left behind: $left"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
