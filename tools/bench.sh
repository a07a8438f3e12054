#!/usr/bin/env bash
# Side-by-side benchmarks (BENCHMARKS.md). Builds sjournal and the bench driver in release mode and
# prints a markdown table of ratios, each against a baseline measured in the same run.
#   tools/bench.sh            full run (1M-event hook case, 1 GB journal)
#   tools/bench.sh --quick    smaller sizes, for a smoke test
#   tools/bench.sh verify --before OLD_BINARY [--runs N] [--quick]
#                             verify on a 1 GB journal, this tree against OLD_BINARY
#   tools/bench.sh searchbig [--before OLD_BINARY] [--events N] [--sessions S] [--runs R] [--keep DIR]
#                             search over 1M events in 1,000 sessions against rg, index
#                             build against the cold fold, MCP calls (installs ripgrep)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v jq >/dev/null || { apt-get update -qq && apt-get install -y -qq jq; }
cargo build --release --quiet
cargo build --release --quiet --manifest-path tools/bench/Cargo.toml
payload=$(mktemp)
prompt=$(mktemp)
# Real Claude Code payloads: a PostToolUse (journaled only) and a UserPromptSubmit (the hook
# folds the session and renders context for it).
grep '"event": "PostToolUse", "variant": null' tests/fixtures/claude-code/payloads-2.1.332.jsonl \
  | jq -c .payload > "$payload"
grep '"event": "UserPromptSubmit"' tests/fixtures/claude-code/payloads-2.1.332.jsonl \
  | jq -c .payload > "$prompt"
work=$(mktemp -d "${TMPDIR:-/tmp}/sjournal-bench.XXXXXX")
trap 'rm -rf "$work" "$payload" "$prompt"' EXIT
bin=$(pwd)/target/release/sjournal
if [ "${1:-}" = searchbig ]; then
  shift
  command -v rg >/dev/null || { apt-get update -qq && apt-get install -y -qq ripgrep; }
  tools/bench/target/release/sjournal-bench searchbig --sjournal "$bin" "$@"
elif [ "${1:-}" = verify ]; then
  shift
  (cd "$work" && "$OLDPWD/tools/bench/target/release/sjournal-bench" verify --sjournal "$bin" --payload "$payload" "$@")
else
  (cd "$work" && "$OLDPWD/tools/bench/target/release/sjournal-bench" report --sjournal "$bin" --payload "$payload" --prompt-payload "$prompt" "$@")
fi
echo
echo "machine: $(nproc) cores, $(uname -sr), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "filesystem of the work dir: $(df -T "$work" | awk 'NR==2{print $2}')"
