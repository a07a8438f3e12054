#!/usr/bin/env bash
# Installs the pinned version of each agent host that the real-host tests (tests/hosts.rs) drive,
# with `npm ci` of tools/hosts/<host>/package-lock.json, into a cache outside the clone:
#   ${SJOURNAL_HOSTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sjournal/hosts}/<host>-<lockfile hash>/
# An install that is complete (its `.complete` marker exists) is reused, so re-runs cost nothing;
# a changed lockfile gets a new directory. Installs of the same host are serialized with flock.
#
#   tools/hosts/install.sh [HOST...]     (default: every host)
#
# Prints one line per host: `<host> <install dir>`; exits non-zero if any install failed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${SJOURNAL_HOSTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sjournal/hosts}"
hosts=("$@")
if [ ${#hosts[@]} -eq 0 ]; then
  hosts=(claude-code codex gemini opencode pi openclaw)
fi
command -v npm >/dev/null || { echo "install.sh: npm is not on PATH" >&2; exit 1; }
mkdir -p "$cache"
status=0
for host in "${hosts[@]}"; do
  src="$here/$host"
  [ -f "$src/package-lock.json" ] || { echo "install.sh: no such host: $host" >&2; status=1; continue; }
  hash="$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -c1-16)"
  dir="$cache/$host-$hash"
  (
    flock 9
    if [ ! -f "$dir/.complete" ]; then
      rm -rf "$dir.tmp"
      mkdir -p "$dir.tmp"
      cp "$src/package.json" "$src/package-lock.json" "$dir.tmp/"
      start=$(date +%s)
      # The hosts' own install scripts run (the platform binaries of Codex and OpenCode, the
      # pinned Node of Pi and OpenClaw come from the registry through them).
      if ! (cd "$dir.tmp" && npm ci --no-audit --no-fund --loglevel=error >&2); then
        echo "install.sh: npm ci failed for $host" >&2
        exit 1
      fi
      echo "install.sh: installed $host in $(( $(date +%s) - start )) s" >&2
      rm -rf "$dir"
      mv "$dir.tmp" "$dir"
      touch "$dir/.complete"
    fi
  ) 9>"$cache/$host.lock" || { status=1; continue; }
  echo "$host $dir"
done
exit $status
