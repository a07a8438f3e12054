#!/usr/bin/env bash
# Ship and index throughput against a real S3 server (SeaweedFS) and PostgreSQL 15 on
# 127.0.0.1 (BENCHMARKS.md, "Start-up, remote shipping and indexing"). Starts the servers (tools/servers.sh),
# runs examples/remote_bench.rs in release mode, stops them.
#   tools/bench-remote.sh                      20 sessions x 500 records of ~3 KiB, 3 rounds
#   SESSIONS=5 RECORDS=200 tools/bench-remote.sh   smaller
set -euo pipefail
cd "$(dirname "$0")/.."
tools/servers.sh install >/dev/null
trap 'tools/servers.sh stop' EXIT
tools/servers.sh stop
eval "$(PG_FSYNC=on tools/servers.sh start)"
: "${SJOURNAL_TEST_S3:?the S3 server did not start}" "${SJOURNAL_TEST_PG:?PostgreSQL did not start}"
cargo run --release --quiet --features remote --example remote_bench
echo "machine: $(nproc) cores, $(uname -sr)"
