#!/usr/bin/env bash
# A private PostgreSQL server for the tests (internal/store/kube's node offloader, the archive).
#
#   hack/postgres.sh [up]   install Debian's postgresql package if no server binaries are found
#                           (apt-get update first), initdb a private cluster under the cache dir,
#                           start it on 127.0.0.1 on a free port, wait until it accepts connections;
#                           the last line printed is `export BRAID_TEST_POSTGRES=postgres://...`.
#                           Idempotent: a running server is reused.
#   hack/postgres.sh env    print the export line of the running server
#   hack/postgres.sh down   stop the server by its PID (from the state file) and remove its data
#
# Use it as: eval "$(hack/postgres.sh up | tail -1)".
# State lives under BRAID_POSTGRES_DIR (default ~/.cache/braid-postgres; /var/cache/braid-postgres as root). PostgreSQL refuses to run as
# root: as root, the cluster is owned by and run as the `postgres` system user the package creates.
set -euo pipefail

# As root, the default is /var/cache/braid-postgres: the postgres user cannot enter root's home.
if [ "$(id -u)" = 0 ]; then
  DIR=${BRAID_POSTGRES_DIR:-/var/cache/braid-postgres}
else
  DIR=${BRAID_POSTGRES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/braid-postgres}
fi
DATA=$DIR/data
STATE=$DIR/state.env
LOGF=$DIR/postgres.log
DB=braid
PGUSER_NAME=braid

log() { echo "postgres.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

# pgbin: the directory holding initdb, pg_ctl and postgres (newest installed major version).
pgbin() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/initdb" ] && [ -x "$d/postgres" ] && { echo "$d"; return 0; }
  done
  return 1
}

install_pg() {
  pgbin >/dev/null && return
  [ "$(id -u)" = 0 ] || die "PostgreSQL is not installed and this is not root: apt-get install postgresql"
  log "installing Debian's postgresql package"
  apt-get update >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql >&2
  pgbin >/dev/null || die "postgresql installed but no initdb found under /usr/lib/postgresql"
}

# as_owner CMD...: run CMD as the cluster's owner (postgres when this is root).
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 40000))
    port_in_use "$p" || { echo "$p"; return; }
  done
  die "no free port found"
}

running() {
  [ -f "$STATE" ] || return 1
  # shellcheck disable=SC1090
  . "$STATE"
  [ -n "${PG_PID:-}" ] && kill -0 "$PG_PID" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$PG_PID/cmdline" 2>/dev/null | grep -q postgres
}

print_env() {
  # shellcheck disable=SC1090
  . "$STATE"
  echo "export BRAID_TEST_POSTGRES=postgres://$PGUSER_NAME@127.0.0.1:$PG_PORT/$DB?sslmode=disable"
}

up() {
  if running; then
    log "reusing the server on port $PG_PORT (pid $PG_PID)"
    print_env
    return
  fi
  install_pg
  local bin port
  bin=$(pgbin)
  mkdir -p "$DIR"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || die "no postgres system user (the postgresql package creates it)"
    chown postgres: "$DIR"
  fi
  if [ ! -f "$DATA/PG_VERSION" ]; then
    log "initdb $DATA"
    as_owner "$bin/initdb" -D "$DATA" -U "$PGUSER_NAME" --auth=trust -E UTF8 >"$DIR/initdb.log" 2>&1 ||
      die "initdb failed: see $DIR/initdb.log"
  fi
  port=$(free_port)
  log "starting $bin/postgres on 127.0.0.1:$port"
  # The socket directory is the data directory, so nothing needs /run/postgresql.
  as_owner "$bin/pg_ctl" -D "$DATA" -l "$LOGF" -w -t 60 \
    -o "-h 127.0.0.1 -p $port -k $DATA -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start >&2 || die "pg_ctl start failed: see $LOGF"
  local pid
  pid=$(head -1 "$DATA/postmaster.pid")
  printf 'PG_PID=%s\nPG_PORT=%s\n' "$pid" "$port" >"$STATE"
  for _ in $(seq 1 100); do
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" && break
    sleep 0.1
  done
  if ! "$bin/psql" -h 127.0.0.1 -p "$port" -U "$PGUSER_NAME" -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname='$DB'" | grep -q 1; then
    "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$PGUSER_NAME" "$DB"
  fi
  print_env
}

down() {
  if ! running; then
    log "no server running"
    rm -rf "$DIR"
    return
  fi
  log "stopping pid $PG_PID"
  kill -TERM "$PG_PID"
  for _ in $(seq 1 100); do
    kill -0 "$PG_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$PG_PID" 2>/dev/null && kill -KILL "$PG_PID"
  rm -rf "$DIR"
}

case "${1:-up}" in
up) up ;;
env) running || die "no server running"; print_env ;;
down) down ;;
*) die "usage: $0 [up|env|down]" ;;
esac
