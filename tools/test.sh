#!/usr/bin/env bash
# The whole test suite, as the README and CI run it.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --all-targets "$@"
cargo test --doc
