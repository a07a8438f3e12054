#!/usr/bin/env bash
# Installs the pinned version of each agent host that the real-host tests (tests/real_hosts/)
# drive, with `npm ci` of tools/hosts/<host>/package-lock.json, into a cache outside the clone:
#   ${SJOURNAL_HOSTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sjournal/hosts}/<host>-<hash>/
# An install that is complete (its `.complete` marker exists) is reused, so re-runs cost nothing;
# a changed lockfile gets a new directory. Installs of the same host are serialized with flock.
# A host whose directory has a `runtime` file (OpenClaw: node24) gets that Node installed first,
# used for its own install scripts, and linked as node_modules/.bin/node.
#
#   tools/hosts/install.sh [HOST...]     (default: every host)
#
# Prints one line per host: `<host> <install dir>`; exits non-zero if any install failed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${SJOURNAL_HOSTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sjournal/hosts}"
hosts=("$@")
if [ ${#hosts[@]} -eq 0 ]; then
  hosts=(claude-code codex gemini opencode pi openclaw cline)
fi
command -v npm >/dev/null || { echo "install.sh: npm is not on PATH" >&2; exit 1; }
mkdir -p "$cache"

# install_one HOST: installs one host (after the runtime its `runtime` file names); sets $dir.
install_one() {
  local host=$1 src="$here/$1" runtime_bin="" hash
  [ -f "$src/package-lock.json" ] || { echo "install.sh: no such host: $host" >&2; return 1; }
  if [ -f "$src/runtime" ]; then
    install_one "$(cat "$src/runtime")" || return 1
    runtime_bin="$dir/node_modules/node/bin"
  fi
  local files=("$src/package.json" "$src/package-lock.json")
  [ -f "$src/runtime" ] && files+=("$src/runtime")
  hash="$(cat "${files[@]}" | sha256sum | cut -c1-16)"
  dir="$cache/$host-$hash"
  (
    flock 9
    if [ ! -f "$dir/.complete" ]; then
      rm -rf "$dir.tmp"
      mkdir -p "$dir.tmp"
      cp "$src/package.json" "$src/package-lock.json" "$dir.tmp/"
      start=$(date +%s)
      # The packages' own install scripts run: the platform binaries of Codex and OpenCode and
      # the pinned Node builds come from the registry through them.
      if ! (cd "$dir.tmp" && PATH="${runtime_bin:+$runtime_bin:}$PATH" \
            npm ci --no-audit --no-fund --loglevel=error >&2); then
        echo "install.sh: npm ci failed for $host" >&2
        exit 1
      fi
      if [ -n "$runtime_bin" ]; then
        mkdir -p "$dir.tmp/node_modules/.bin"
        ln -sf "$runtime_bin/node" "$dir.tmp/node_modules/.bin/node"
      fi
      echo "install.sh: installed $host in $(( $(date +%s) - start )) s" >&2
      rm -rf "$dir"
      mv "$dir.tmp" "$dir"
      touch "$dir/.complete"
    fi
  ) 9>"$cache/$host.lock"
}

status=0
for host in "${hosts[@]}"; do
  if install_one "$host"; then
    echo "$host $dir"
  else
    status=1
  fi
done
exit $status
