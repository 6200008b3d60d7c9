#!/usr/bin/env bash
# Samba through the commands a family goes through, on the CPU with the official tiny fixture:
# `info` (family, window, state size), `loss` (the result's loss equals the fp64 recomputation
# from the official logits is tests/test_samba.cpp; here: it runs and writes a finite loss),
# `inspect gates` (one summary per Mamba layer of its exp(dt * A) decays), `bench prefill` (the
# selective scan and the attention in the stage table), `bench generate` (decoding past the
# window), and a config it refuses with exit 2 naming the field.
# Usage: tests/cli_samba_test.sh path/to/foxeval   (run from the repository root)
PY=.venv/bin/python
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
S=tests/fixtures/official/samba

expect_ok "info" "$FOXEVAL" info --model $S
grep -q "Samba" "$tmp/out" && grep -q "window_size  *32" "$tmp/out" && grep -q "state_size  *8" "$tmp/out" && ok ||
  bad "info prints the family, window and state size"

expect_ok "loss" "$FOXEVAL" loss --model $S --data tests/fixtures/loss/tokens.npy --bos-id 0 --seq-len 128 --out "$tmp/loss.json"
$PY - "$tmp/loss.json" <<'PYEOF' && ok || bad "loss result"
import json, math, sys
r = json.load(open(sys.argv[1]))
v = [x for k, x in r.items() if k.startswith("val/loss_avg_len_")]
assert v and all(math.isfinite(x) and 0 < x < 20 for x in v), r.keys()
PYEOF

expect_ok "inspect gates" "$FOXEVAL" inspect gates --model $S --data tests/fixtures/loss/tokens.npy --tokens 640 --bos-id 0 \
  --out "$tmp/g.json"
$PY - "$tmp/g.json" <<'PYEOF' && ok || bad "inspect gates: a summary per Mamba layer"
import json, sys
r = json.load(open(sys.argv[1]))
d = r["decay"]
assert d["kind"] == "ssm_decay" and d["layers"] == 2 and d["heads"] == 1 and d["channels"] == 128 * 8, d
assert len(r["layers"]) == 2 and all(len(l["heads"]) == 1 for l in r["layers"])
for l in r["layers"]:
    h = l["heads"][0]
    assert h["n"] == 640 * 128 * 8 and 0 < h["gate"]["mean"] < 1 and h["mean_log_gate"] < 0, h["n"]
PYEOF
expect_error "inspect attention" "has no attention matrix" \
  "$FOXEVAL" inspect attention --model $S --text README.md --tokens 64 --layer 0 --head 0 -o "$tmp/x.svg"

expect_ok "bench prefill" "$FOXEVAL" bench prefill --models samba=$S --seq-lens 80 --repeats 2 --warmup 0 --device cpu \
  --out "$tmp/p.json"
$PY - "$tmp/p.json" <<'PYEOF' && ok || bad "bench prefill row"
import json, sys
r = json.load(open(sys.argv[1]))["rows"][0]
assert r["family"] == "Samba" and r["repeats_bit_identical"] is True, r
stages = {s["stage"] for s in r["stage_table"]["stages"]}
assert {"selective_scan", "attention", "conv"} <= stages, stages
PYEOF

expect_ok "bench generate" "$FOXEVAL" bench generate --model $S --device cpu --batch 2 --prompt-len 20 --new-tokens 40 \
  --bandwidth-gbs 50 --memory-check-len 0 --out "$tmp/g.json"
grep -q "Samba" "$tmp/out" && ok || bad "bench generate prints the family"

mkdir -p "$tmp/bad" && cp $S/model.safetensors "$tmp/bad/"
$PY -c "import json,sys; c=json.load(open('$S/config.json')); c['attn']['window_size']=None; json.dump(c, open('$tmp/bad/config.json','w'))"
expect_error "window_size null" 'window_size null (full attention) is not supported' "$FOXEVAL" info --model "$tmp/bad"
"$FOXEVAL" info --model "$tmp/bad" >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "a refused config exits 2"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
