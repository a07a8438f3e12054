#!/usr/bin/env bash
# Fuzzes sjournal: every libFuzzer target in fuzz/ (the frame, header and snapshot decoders,
# whole journals through verify/inspect/the reader/the fold, system payloads, the hook's input
# capture, every host adapter, the lenient JSON pre-pass, memory planning over every host's
# prompts) for MINUTES in total, split evenly.
#
#   tools/fuzz.sh MINUTES [TARGET...]
#
# cargo-fuzz needs nightly-only flags; RUSTC_BOOTSTRAP=1 lets the stable toolchain take them.
# cargo-fuzz is installed from crates.io if missing. The sanitizer is `none` by default (the
# targets run safe Rust over byte slices; FUZZ_SANITIZER=address to change it). Each target
# starts from fuzz/seeds/<target>/ and the inputs that once crashed it
# (fuzz/regressions/<target>/), and grows fuzz/corpus/<target>/ (not checked in). A crash stops
# that target; its input is in fuzz/artifacts/<target>/: copy it to fuzz/regressions/<target>/
# (tests/fuzz_smoke.rs replays that directory on every test run) and fix the bug. Exit 1 if any
# target crashed. The last lines are a table: executions, speed and corpus size per target.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:?usage: tools/fuzz.sh MINUTES [TARGET...]}
shift
all=(frame header snapshot journal payload capture adapters lenient memory_plan)
targets=("${@:-${all[@]}}")
if ! command -v cargo-fuzz >/dev/null; then
  cargo install cargo-fuzz --locked
fi
export RUSTC_BOOTSTRAP=1
sanitizer=${FUZZ_SANITIZER:-none}
cargo fuzz build -O -s "$sanitizer"
secs=$(( minutes * 60 / ${#targets[@]} ))
(( secs >= 5 )) || secs=5
logs=fuzz/logs
mkdir -p "$logs"
failed=0
rows=()
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t" "fuzz/regressions/$t"
  echo "== $t: ${secs}s"
  set +e
  cargo fuzz run -O -s "$sanitizer" "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" "fuzz/regressions/$t" -- \
    -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=256 -timeout=10 \
    -print_final_stats=1 >"$logs/$t.log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$logs/$t.log" | grep -o '[0-9]*$' | tail -1)
  speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$logs/$t.log" | grep -o '[0-9]*$' | tail -1)
  corpus=$(find "fuzz/corpus/$t" -type f | wc -l)
  if (( rc == 0 )); then
    result=ok
  else
    result="CRASH (see $logs/$t.log and fuzz/artifacts/$t/)"
    failed=1
    tail -30 "$logs/$t.log"
  fi
  rows+=("$(printf '%-9s %12s %10s %8s  %s' "$t" "${execs:-?}" "${speed:-?}" "$corpus" "$result")")
done
printf '%-9s %12s %10s %8s  %s\n' target executions "exec/s" corpus result
printf '%s\n' "${rows[@]}"
exit "$failed"
