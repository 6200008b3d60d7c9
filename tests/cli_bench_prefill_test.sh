#!/usr/bin/env bash
# `foxeval bench prefill` on the CPU with the official tiny FoX (Pro) fixture: the stage table adds
# up (the stages inside the forward plus the LM head and loss make the stage-pass total), names the
# attention and every linear layer by shape, the repeats give identical bits, and bad flags exit 2
# before anything loads. The 760M timings run on the GPU machine (scripts/device_prefill_bench.sh).
# Usage: tests/cli_bench_prefill_test.sh path/to/foxeval   (run from the repository root)
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
fx=tests/fixtures/official/fox_pro

expect_ok "bench prefill on the CPU" "$FOXEVAL" bench prefill --models tiny="$fx" --seq-lens 96,64 --repeats 2 \
  --warmup 0 --device cpu --out "$tmp/p.json"
python3 - "$tmp/p.json" <<'PY' && ok || bad "bench prefill JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["kind"] == "foxeval-bench-prefill", d["kind"]
rows = d["rows"]
assert [r["seq_len"] for r in rows] == [96, 64], rows
for r in rows:
    assert r["model"] == "tiny" and r["repeats_bit_identical"] is True, r
    assert len(r["all_seconds"]) == 2 and r["seconds_per_document"] > 0
    w0, w1 = r["timed_window_unix_s"]  # the timed repeats' span, for joining a GPU clock log
    assert 1.7e9 < w0 <= w1 and w1 - w0 >= sum(r["all_seconds"]) * 0.99, (w0, w1, r["all_seconds"])
    st = r["stage_table"]
    names = {s["stage"]: s for s in st["stages"]}
    assert "attention" in names and "forward" in names and "loss" in names, sorted(names)
    assert names["attention"]["calls"] > 0
    linear = [n for n in names if n.startswith("linear ")]
    assert linear and all("tflops" in names[n] for n in linear), linear
    assert abs(st["stage_pass_seconds"] - st["attention_seconds"] - st["non_attention_seconds"]) < 1e-9
    assert st["matmul_tflop"] > 0
print("ok")
PY
# The GPU clock/power join (scripts/gpu_clock_join.py) finds each row's samples by its window.
python3 - "$tmp/p.json" "$tmp/clocks.csv" <<'PY'
import json, sys, time
rows = json.load(open(sys.argv[1]))["rows"]
# A 10 ms grid around the rows, and one sample in each row's window (nvidia-smi stamps whole
# milliseconds: the window's end cut to the millisecond lies inside it, the window being longer).
t0, t1 = rows[0]["timed_window_unix_s"][0] - 1, rows[-1]["timed_window_unix_s"][1] + 1
stamps = [t0 + i * 0.01 for i in range(int((t1 - t0) / 0.01) + 1)] + [r["timed_window_unix_s"][1] for r in rows]
with open(sys.argv[2], "w") as f:
    for t in sorted(stamps):
        f.write(time.strftime("%Y/%m/%d %H:%M:%S", time.localtime(t)) + ".%03d, 1500, 690.5, 0x0000000000000004\n" % int(t % 1 * 1000))
PY
python3 scripts/gpu_clock_join.py "$tmp/p.json" "$tmp/clocks.csv" || bad "gpu_clock_join.py exited $?"
python3 - "$tmp/p.json" <<'PY' && ok || bad "GPU clock log joined to the bench rows"
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    g = r["gpu_during_timed_repeats"]
    assert g["samples"] > 0 and g["sm_clock_mhz_median"] == 1500 and g["power_capped_fraction"] == 1.0, g
print("ok")
PY
# A damaged sample before the last line is an error naming its line (only the last may be cut short).
{ echo "not a sample"; cat "$tmp/clocks.csv"; } >"$tmp/bad-clocks.csv"
expect_error "damaged clock log" "bad-clocks.csv:1: not a clock sample" python3 scripts/gpu_clock_join.py "$tmp/p.json" \
  "$tmp/bad-clocks.csv"
expect_error "missing --models" "--models is required" "$FOXEVAL" bench prefill --out "$tmp/x.json"
expect_error "bad --models item" "--models: 'tiny': expected NAME=DIR" "$FOXEVAL" bench prefill --models tiny \
  --out "$tmp/x.json"
expect_error "bad --seq-lens" "--seq-lens: 1 is out of range" "$FOXEVAL" bench prefill --models tiny="$fx" --seq-lens 1 \
  --out "$tmp/x.json"
expect_error "bad --repeats" "--repeats" "$FOXEVAL" bench prefill --models tiny="$fx" --repeats 0 --out "$tmp/x.json"
expect_error "no checkpoint" "does not exist" "$FOXEVAL" bench prefill --models tiny="$tmp/nope" --out "$tmp/x.json"
[ ! -e "$tmp/x.json" ] && ok || bad "no result written by a refused run"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
