# Shared by the CLI test scripts (sourced first: `. "$(dirname "$0")/cli_lib.sh"`): the binary
# under test ($FOXEVAL, the script's first argument), a scratch folder ($tmp, removed on exit; a
# script that sets its own EXIT trap removes it there), counters and the two expectations.
#   ok / bad NAME                     count a check
#   expect_ok NAME CMD...             CMD succeeds (stdout in $tmp/out, stderr in $tmp/err)
#   expect_error NAME TEXT CMD...     CMD fails and its stderr contains TEXT
#   offline_hub FIXTURES              the Hugging Face caches offline: HF_HUB_CACHE=FIXTURES/hub,
#                                     HF_DATASETS_CACHE the empty folder $tmp/empty
# Each script ends with: echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]
set -u
FOXEVAL="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAILED: $1" >&2; }
expect_ok() { local name="$1"; shift; if "$@" >"$tmp/out" 2>"$tmp/err"; then ok; else bad "$name"; cat "$tmp/err" >&2; fi; }
expect_error() {
  local name="$1" text="$2"; shift 2
  if "$@" >"$tmp/out" 2>"$tmp/err"; then bad "$name (succeeded)"; return; fi
  grep -qF -- "$text" "$tmp/err" && ok || { bad "$name (stderr lacks '$text')"; cat "$tmp/err" >&2; }
}
offline_hub() { mkdir -p "$tmp/empty"; export HF_HUB_CACHE="$1/hub" HF_DATASETS_CACHE="$tmp/empty"; }
