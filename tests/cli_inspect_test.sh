#!/usr/bin/env bash
# `foxeval inspect gates|attention` and `foxeval plot gates` end to end on the CPU: a result through
# the runner (header, shards + merge equal one run), every family's answer (a decay, or none),
# the attention figure and its matrices (rows of the softmax sum to 1), the heatmap, and refusals.
# The numbers themselves are checked against the official model in tests/test_inspect.cpp.
# Usage: tests/cli_inspect_test.sh path/to/foxeval   (run from the repository root)
PY=.venv/bin/python
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
fix=tests/fixtures/official
data=tests/fixtures/loss/tokens.npy  # 6 rows of 640 tokens, ids < 256
trained=../shared/fixtures/trained/fox_pro_tiny_pg

# ---- gates over token rows: one run, and two shards merged, give the same statistics ----
expect_ok "gates --data" "$FOXEVAL" inspect gates --model $fix/fox_pro --data $data --tokens 1920 --bos-id 0 --out "$tmp/g.json"
expect_ok "gates shard 0" "$FOXEVAL" inspect gates --model $fix/fox_pro --data $data --tokens 1920 --bos-id 0 \
  --num-shards 2 --shard-index 0 --out "$tmp/p0.json"
expect_ok "gates shard 1" "$FOXEVAL" inspect gates --model $fix/fox_pro --data $data --tokens 1920 --bos-id 0 \
  --num-shards 2 --shard-index 1 --out "$tmp/p1.json"
expect_ok "merge" "$FOXEVAL" merge --out "$tmp/m.json" "$tmp/p0.json" "$tmp/p1.json"
$PY - "$tmp/g.json" "$tmp/m.json" <<'PYEOF' && ok || bad "gates result layout / merge"
import json, sys
g, m = (json.load(open(p)) for p in sys.argv[1:3])
assert g["kind"] == "foxeval-inspect-gates" and g["header"]["task"] == "inspect-gates", g.get("kind")
assert g["documents"] == 3 and g["tokens"] == 3 * 640, (g["documents"], g["tokens"])
assert g["decay"]["kind"] == "forget_gate" and len(g["layers"]) == 2 and len(g["layers"][0]["heads"]) == 4
h = g["layers"][1]["heads"][2]
assert 0 < h["gate"]["mean"] < 1 and h["mean_log_gate"] < 0
assert set(h["gate"]["quantiles"]) == {"0.01", "0.1", "0.25", "0.5", "0.75", "0.9", "0.99"}
assert set(h["reach"]) == {"5", "10"} and 0 <= h["reach"]["5"]["prunable_fraction"] <= 1
q = h["gate"]["quantiles"]; assert q["0.01"] <= q["0.5"] <= q["0.99"]
assert g["layers"] == m["layers"], "two shards merged differ from one run"
PYEOF

# ---- every family: a decay, or a result that says there is none ----
for fam in transformer_pro transformer_llama delta_net; do
  expect_ok "gates $fam" "$FOXEVAL" inspect gates --model $fix/$fam --data $data --tokens 640 --bos-id 0 --out "$tmp/$fam.json"
  grep -q '"kind": "none"' "$tmp/$fam.json" && grep -qi "no forget gate\|no decay" "$tmp/out" && ok || bad "$fam says it has no decay"
done
for fam in mamba2 hgrn2; do
  expect_ok "gates $fam" "$FOXEVAL" inspect gates --model $fix/$fam --data $data --tokens 640 --bos-id 0 --out "$tmp/$fam.json"
  $PY -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['decay']['kind'] in ('ssm_decay','channel_forget_gate') and r['layers']" \
    "$tmp/$fam.json" && ok || bad "$fam decay result"
done
expect_error "attention of a recurrent family" "has no attention matrix" \
  "$FOXEVAL" inspect attention --model $fix/mamba2 --text README.md --tokens 64 --layer 0 --head 0 -o "$tmp/x.svg"

# ---- text, attention figure and matrices, heatmap (the trained model) ----
if [ -d "$trained" ]; then
  head -c 6000 README.md > "$tmp/text.txt"
  expect_ok "gates --text" "$FOXEVAL" inspect gates --model $trained --text "$tmp/text.txt" --out "$tmp/t.json"
  expect_ok "attention" "$FOXEVAL" inspect attention --model $trained --text "$tmp/text.txt" --layer 3 --head 1 --span 0:96 \
    -o "$tmp/att.svg" --matrices "$tmp/att.json"
  $PY - "$tmp/att.json" "$tmp/att.svg" <<'PYEOF' && ok || bad "attention matrices"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["begin"] == 0 and m["end"] == 96 and len(m["attention"]) == 96 and m["has_decay"]
for i, row in enumerate(m["attention"]):  # from position 0 the span holds every key: each row is the whole softmax
    assert len(row) == i + 1 and abs(sum(row) - 1) < 1e-9, (i, sum(row))
    assert abs(m["decay"][i][i] - 1) < 1e-12 and all(0 < d <= 1 for d in m["decay"][i])
svg = open(sys.argv[2]).read()
assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>") and "attention" in svg
PYEOF
  for sort in head reach; do
    expect_ok "plot gates --sort $sort" "$FOXEVAL" plot gates "$tmp/t.json" --sort $sort --tolerance 10 -o "$tmp/h_$sort.svg"
    grep -q "</svg>" "$tmp/h_$sort.svg" && ok || bad "heatmap $sort"
  done
  # Every label inside the canvas, measured in Chromium: the 2-head model's rotated "heads by reach"
  # caption, the colour bar's caption and ticks, and a long title.
  expect_ok "plot gates, a long title" "$FOXEVAL" plot gates "$tmp/t.json" --sort reach \
    --title "a rather long title for a two-layer model's median decay reach at e^-5" -o "$tmp/h_title.svg"
  expect_ok "plot gates, the official fixture" "$FOXEVAL" plot gates "$tmp/g.json" -o "$tmp/h_small.svg"
  CHROMIUM="$(command -v chromium || command -v chromium-browser || true)"
  if [ -z "$CHROMIUM" ]; then
    echo "SKIP: chromium is not installed: plot gates' labels were NOT measured"
  else
    { echo '<html><body style="margin:0">'
      for f in h_head h_reach h_title h_small; do echo "<div id=\"$f\">"; cat "$tmp/$f.svg"; echo '</div>'; done
      cat <<'HTMLEOF'
<script>
var out = [];
document.querySelectorAll('svg').forEach(function (svg) {
  var box = svg.getBoundingClientRect();
  svg.querySelectorAll('text').forEach(function (t) {
    var r = t.getBoundingClientRect();
    if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
      out.push(svg.parentNode.id + ':' + t.textContent);
  });
});
var p = document.createElement('pre'); p.id = 'check';
p.textContent = 'svgs=' + document.querySelectorAll('svg').length + ';outside=' + out.join('|') + ';end';
document.body.appendChild(p);
</script></body></html>
HTMLEOF
    } >"$tmp/svgs.html"
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --user-data-dir="$tmp/profile" \
      --window-size=2000,3000 --virtual-time-budget=3000 --dump-dom "file://$tmp/svgs.html" >"$tmp/svgs_dom.html" 2>/dev/null
    grep -q 'svgs=4;outside=;end' "$tmp/svgs_dom.html" && ok \
      || { bad "plot gates: every label inside the canvas ($(grep -o 'svgs=[^<]*' "$tmp/svgs_dom.html"))"; }
  fi
else
  echo "skipped the trained-model part: $trained is not there"
fi

# ---- refusals: exit 2, one line naming the flag or file ----
expect_error "both --data and --text" "give one of --data and --text" \
  "$FOXEVAL" inspect gates --model $fix/fox_pro --data $data --text README.md --out "$tmp/x.json"
expect_error "span too long" "at most 512" \
  "$FOXEVAL" inspect attention --model $fix/fox_pro --text README.md --layer 0 --head 0 --span 0:600 -o "$tmp/x.svg"
expect_error "layer out of range" "--layer 5" \
  "$FOXEVAL" inspect attention --model $fix/fox_pro --text README.md --tokens 100 --layer 5 --head 0 -o "$tmp/x.svg"
expect_error "plot gates of another result" "not a \`foxeval inspect gates\` result" \
  "$FOXEVAL" plot gates tests/fixtures/results/loss_fox_pro.json -o "$tmp/x.svg"
expect_error "plot gates --sort" "--sort" "$FOXEVAL" plot gates "$tmp/g.json" --sort sideways -o "$tmp/x.svg"
"$FOXEVAL" inspect gates --model $fix/fox_pro --text README.md --tokens 0 --out "$tmp/x.json" >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad "--tokens 0 exits 2"
[ ! -e "$tmp/x.json" ] && [ ! -e "$tmp/x.svg" ] && ok || bad "a refusal wrote a file"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
