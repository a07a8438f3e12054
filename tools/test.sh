#!/usr/bin/env bash
# The whole test suite, as the README and CI run it.
set -euo pipefail
cd "$(dirname "$0")/.."
# The remote tests use a real S3 server and PostgreSQL on 127.0.0.1. Unless the environment
# already names them (CI starts them itself), start them here when they are installed
# (`tools/servers.sh install`); without them those tests skip, saying so (outside CI only).
if [ -z "${SJOURNAL_TEST_S3:-}" ] && [ -z "${SJOURNAL_TEST_PG:-}" ]; then
  trap 'tools/servers.sh stop' EXIT
  eval "$(tools/servers.sh start)"
fi
# With the `remote` and `viewer` features (off by default), so their tests build and run too.
cargo test --all-targets --features remote,viewer "$@"
cargo test --doc --features remote
