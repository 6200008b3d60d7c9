#!/usr/bin/env bash
# `foxeval table` and `foxeval report` end to end on tests/fixtures/results, and the report as a
# person sees it: rendered by headless Chromium at 1280 px, with a measuring script injected into a
# test copy (every table and figure present and drawn, no box wider than its container, no
# horizontal page scroll), then a screenshot of the whole page.
# Usage: tests/cli_report_test.sh path/to/foxeval   (run from the repository root)
# Without Chromium (Debian: apt-get install -y chromium) the rendering checks are SKIPPED, said so.
# REPORT_SCREENSHOT=FILE.png also saves the top 2400 px of the page at 1280 px width:
#   REPORT_SCREENSHOT=results/report-example.png tests/cli_report_test.sh build/foxeval
. "$(dirname "$0")/cli_lib.sh"  # FOXEVAL, tmp, ok, bad, expect_ok, expect_error
check() { local name="$1"; shift; if "$@"; then ok; else bad "$name"; fi; }
R=tests/fixtures/results

# --- foxeval table ---
expect_ok "table latex lm-eval" "$FOXEVAL" table --format latex -o "$tmp/lm.tex" \
  $R/lm_eval_fox_pro.json $R/lm_eval_mamba2.json $R/lm_eval_transformer_pro.json
check "lm-eval LaTeX equals the hand-checked file" cmp -s "$tmp/lm.tex" $R/expected_lm_eval.tex
expect_ok "table latex longbench" "$FOXEVAL" table --format latex \
  $R/longbench_fox_pro.json $R/longbench_mamba2.json $R/longbench_transformer_pro.json
check "LongBench LaTeX on stdout equals the hand-checked file" cmp -s "$tmp/out" $R/expected_longbench.tex
expect_ok "table markdown, every kind" "$FOXEVAL" table $R/*.json
for title in "### LongBench" "### lm-evaluation-harness" "### Held-out loss" "### Needle in a haystack"; do
  check "markdown has '$title'" grep -qF "$title" "$tmp/out"
done
check "markdown: one row per model" test "$(grep -c '^| FoX (Pro)\(<sup>[0-9]*</sup>\)\? |' "$tmp/out")" -eq 4
check "markdown: Mamba-2's missing NIAH easy is a dash" grep -qF "| Mamba-2 | 3.31 | – |" "$tmp/out"
expect_ok "table csv" "$FOXEVAL" table --format csv $R/loss_fox_pro.json $R/loss_mamba2.json --label A --label B
# The loss fixtures were made with --seq-len 2048: the CSV says so in its last column.
check "csv header and rows" grep -qx "model,loss_len_512,loss_len_1024,loss_len_2048,settings" "$tmp/out"
check "csv names the other setting" grep -q '^A,.*,--seq-len 2048 (paper: 65536)$' "$tmp/out"
check "csv row named by --label" grep -q "^B,2.87" "$tmp/out"
# A --limit run: marked, with a footnote, and not ranked against the full runs (which stay unmarked).
sed 's/"limit": -1,/"limit": 3,/' $R/lm_eval_mamba2.json >"$tmp/limited.json"
expect_ok "table with a --limit result" "$FOXEVAL" table $R/lm_eval_fox_pro.json "$tmp/limited.json" $R/lm_eval_transformer_pro.json
check "the --limit row is marked" grep -q '^| Mamba-2<sup>1</sup> | 23.76 | 15.38 | 41.72 | 71.22 |' "$tmp/out"
check "its footnote names the setting" grep -qxF -e "- <sup>1</sup> Not the paper's settings: --limit 3 (paper: all documents)" "$tmp/out"
check "the full runs are ranked among themselves" grep -q '^| FoX (Pro) | \*\*23.04\*\* | .* | \*\*70.67\*\* |' "$tmp/out"
expect_ok "table of full runs" "$FOXEVAL" table $R/lm_eval_fox_pro.json $R/lm_eval_mamba2.json $R/lm_eval_transformer_pro.json
check "full runs carry no marker" bash -c "! grep -q 'sup>' '$tmp/out'"
expect_error "bad --format" "--format 'html'" "$FOXEVAL" table --format html $R/loss_fox_pro.json
expect_error "--label count" "--label: 1 labels for 2 files" "$FOXEVAL" table $R/loss_fox_pro.json $R/loss_mamba2.json --label A
echo '{"kind": "foxeval-part", "task": "niah"}' >"$tmp/part.json"
expect_error "a shard part" "foxeval merge" "$FOXEVAL" table "$tmp/part.json"
expect_error "a missing file" "$tmp/nope.json" "$FOXEVAL" table "$tmp/nope.json"

# --- foxeval report: the file itself ---
expect_ok "report" "$FOXEVAL" report $R/*.json -o "$tmp/report.html" --title "foxeval report: fixtures"
html="$tmp/report.html"
check "report: title" grep -qF "<title>foxeval report: fixtures</title>" "$html"
check "report: no script" bash -c "! grep -q '<script' '$html'"
check "report: nothing to fetch (src=, url( but the page's own #fragments, @import, external href)" \
  bash -c "! grep -Eq 'src=|url\\([^#]|@import|href=\"[^#]' '$html'"
check "report: no temp file left" test ! -e "$html.tmp"

# --- the page as Chromium renders it ---
CHROMIUM="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$CHROMIUM" ]; then
  echo "SKIP: chromium is not installed (Debian: apt-get install -y chromium); the report's rendering was NOT checked"
  echo "$pass passed, $fail failed"
  [ $fail -eq 0 ]; exit
fi
chrome() { timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --user-data-dir="$tmp/profile" "$@" 2>>"$tmp/chromium.log"; }

cat >"$tmp/measure.html" <<'EOF'
<script>
(function () {
  var over = [], empty = [];
  document.querySelectorAll('.table-box, figure.figure-box, .header-box, section, pre').forEach(function (e) {
    if (e.scrollWidth > e.clientWidth + 1) over.push((e.id || e.className || e.tagName) + ':' + e.scrollWidth + '>' + e.clientWidth);
  });
  // NIAH heatmaps: drawn at their own size (not stretched or squeezed), in the page's font.
  var scaled = [], fonts = [];
  var bodyFont = getComputedStyle(document.body).fontFamily;
  document.querySelectorAll('figure[id^="figure-niah"] svg').forEach(function (e) {
    var w = e.getBoundingClientRect().width, own = e.width.baseVal.value;
    if (Math.abs(w - own) > 1) scaled.push(e.closest('[id]').id + ':' + Math.round(w) + '!=' + own);
    var t = e.querySelector('text');
    if (t && getComputedStyle(t).fontFamily !== bodyFont) fonts.push(e.closest('[id]').id);
  });
  document.querySelectorAll('table.results, figure.figure-box svg').forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (r.width < 100 || r.height < 60) empty.push(e.closest('[id]').id);
  });
  var out = document.createElement('pre');
  out.id = 'render-check';
  out.textContent = 'title=' + document.title + ';h1=' + document.querySelector('h1').textContent +
    ';tables=' + document.querySelectorAll('table.results').length +
    ';figures=' + document.querySelectorAll('figure.figure-box svg').length +
    ';headers=' + document.querySelectorAll('.header-box').length +
    ';cardmodels=' + document.querySelectorAll('.header-box h3 .model').length +
    ';scaled=' + scaled.join(',') + ';fonts=' + fonts.join(',') +
    ';overflow=' + over.join(',') + ';empty=' + empty.join(',') +
    ';page=' + document.documentElement.scrollWidth + ';viewport=' + window.innerWidth +
    ';height=' + document.documentElement.scrollHeight + ';end';
  document.body.appendChild(out);
})();
</script>
EOF
awk -v f="$tmp/measure.html" '/<\/body>/ { while ((getline l < f) > 0) print l } { print }' "$html" >"$tmp/check.html"
chrome --window-size=1280,900 --virtual-time-budget=5000 --dump-dom "file://$tmp/check.html" >"$tmp/dom.html"
m="$(grep -o 'id="render-check">[^<]*' "$tmp/dom.html" | sed 's/.*>//')"
if [ -z "$m" ]; then
  bad "chromium rendered the page and ran the measuring script"; tail -5 "$tmp/chromium.log" >&2
else
  ok
  echo "rendered: $m"
  field() { echo "$m" | tr ';' '\n' | sed -n "s/^$1=//p"; }
  n_json=$(ls $R/*.json | wc -l)
  check "rendered title" test "$(field title)" = "foxeval report: fixtures"
  check "rendered heading" test "$(field h1)" = "foxeval report: fixtures"
  check "4 tables (LongBench, lm-eval, loss, NIAH)" test "$(field tables)" -eq 4
  # Loss curves, one heatmap per NIAH result (5), LongBench bars.
  check "7 figures" test "$(field figures)" -eq 7
  check "a header box per result" test "$(field headers)" -eq "$n_json"
  check "no box overflows at 1280 px ($(field overflow))" test -z "$(field overflow)"
  check "every result card names its model" test "$(field cardmodels)" -eq "$n_json"
  check "NIAH heatmaps drawn at their own size ($(field scaled))" test -z "$(field scaled)"
  check "NIAH heatmaps in the page's font ($(field fonts))" test -z "$(field fonts)"
  check "every table and figure has a size ($(field empty))" test -z "$(field empty)"
  check "no horizontal page scroll ($(field page) <= $(field viewport))" test "$(field page)" -le "$(field viewport)"
  check "missing cells render as a dash" grep -q 'class="missing"[^>]*>–<' "$tmp/dom.html"
  # The measurement can fail: a copy with a too-wide block in the lm-eval table's box is caught.
  sed 's|<div class="table-box" id="table-lm-eval">|&<div style="width:3000px">wide</div>|' "$tmp/check.html" >"$tmp/wide.html"
  chrome --window-size=1280,900 --virtual-time-budget=5000 --dump-dom "file://$tmp/wide.html" >"$tmp/wide_dom.html"
  check "a too-wide box is detected" grep -q 'overflow=table-lm-eval:' "$tmp/wide_dom.html"
  height="$(field height)"
  chrome --window-size=1280,"$height" --screenshot="$tmp/report.png" "file://$html" >/dev/null
  if [ -s "$tmp/report.png" ]; then
    ok
    read -r w0 w1 w2 w3 h0 h1 h2 h3 < <(od -An -tu1 -j16 -N8 "$tmp/report.png")
    check "screenshot is 1280 px wide" test $(( (w0 << 24) | (w1 << 16) | (w2 << 8) | w3 )) -eq 1280
    check "screenshot holds the whole page" test $(( (h0 << 24) | (h1 << 16) | (h2 << 8) | h3 )) -eq "$height"
    # A blank page compresses to a few KB; this one has tables, curves and heatmaps.
    check "screenshot is not blank" test "$(stat -c %s "$tmp/report.png")" -gt 100000
    # The commit-ready example: the page's first 2400 px (tables, loss curves, NIAH heatmaps).
    if [ -n "${REPORT_SCREENSHOT:-}" ]; then
      chrome --window-size=1280,2400 --screenshot="$REPORT_SCREENSHOT" "file://$html" >/dev/null && echo "screenshot: $REPORT_SCREENSHOT"
    fi
  else
    bad "chromium wrote the screenshot"; tail -5 "$tmp/chromium.log" >&2
  fi
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
