#!/usr/bin/env bash
# A real MinIO server for the artifact tests, built from the Go module proxy.
#
#   hack/minio.sh build   install the pinned MinIO into ./bin/tools/minio (cached: a version stamp
#                         makes a second run a no-op; the cold build takes several minutes)
#   hack/minio.sh up      build, then start MinIO on 127.0.0.1 with a random free port and random root
#                         credentials, its data under ./.cache/minio; wait until it is ready, record its
#                         PID and environment in ./.cache/minio/state.env, and print `export` lines
#   hack/minio.sh env     print the `export` lines of the running server
#   hack/minio.sh down    stop the server recorded in the state file, by its PID, and remove its data
#
# up, env and down take --host ADDR (or $BRAID_MINIO_HOST) to listen on another local address
# instead of 127.0.0.1: the hack/kube node's bridge address 10.245.0.1, which its pods reach and
# the host reaches too (pods cannot reach 127.0.0.1). Such a server keeps its own state in
# ./.cache/minio-ADDR, so it runs beside a loopback one, and `up` also prints
# BRAID_TEST_S3_ENDPOINT_POD (the endpoint for pods). A wildcard address (0.0.0.0, ::) is refused.
#
# Use it as: eval "$(hack/minio.sh up)". The Go tests of internal/artifact/s3 start their own server
# (internal/artifact/s3/miniotest) unless BRAID_TEST_S3_ENDPOINT is already set.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)

MINIO_MODULE=github.com/minio/minio
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c

TOOLS="$ROOT/bin/tools"
BIN="$TOOLS/minio"
STAMP="$TOOLS/.minio.version"
HOST=${BRAID_MINIO_HOST:-127.0.0.1}

log() { echo "minio.sh: $*" >&2; }

CMD=${1:-}
[[ $# -gt 0 ]] && shift
while [[ $# -gt 0 ]]; do
  case "$1" in
  --host)
    [[ $# -ge 2 ]] || { log "--host needs an address"; exit 2; }
    HOST=$2
    shift 2
    ;;
  --host=*)
    HOST=${1#--host=}
    shift
    ;;
  *)
    echo "usage: $0 build|up|env|down [--host ADDR]" >&2
    exit 2
    ;;
  esac
done
case "$HOST" in
"" | 0.0.0.0 | :: | "[::]" | \*)
  log "--host $HOST: a wildcard address is not allowed; give one local address (e.g. the node's bridge, 10.245.0.1)"
  exit 2
  ;;
esac

STATE_DIR="$ROOT/.cache/minio"
[[ "$HOST" == 127.0.0.1 ]] || STATE_DIR="$ROOT/.cache/minio-$HOST"
STATE="$STATE_DIR/state.env"

build() {
  if [[ -x "$BIN" && -f "$STAMP" && "$(cat "$STAMP")" == "$MINIO_MODULE@$MINIO_VERSION" ]]; then
    return
  fi
  command -v go >/dev/null || { log "go is not on PATH"; exit 1; }
  log "installing $MINIO_MODULE@$MINIO_VERSION into $TOOLS (a cold build takes several minutes)"
  mkdir -p "$TOOLS"
  GOBIN="$TOOLS" go install "$MINIO_MODULE@$MINIO_VERSION"
  echo "$MINIO_MODULE@$MINIO_VERSION" >"$STAMP"
}

random_hex() { # bytes
  head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'
}

port_in_use() { # port
  (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
}

# host_is_local: HOST is an address of this machine (the bridge exists and is up).
host_is_local() {
  [[ "$HOST" == 127.0.0.1 ]] && return 0
  ip -o addr show 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | grep -qxF "$HOST"
}

free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 40000))
    if ! port_in_use "$p"; then
      echo "$p"
      return
    fi
  done
  log "no free port found"
  exit 1
}

# running: true when the state file names a live MinIO process.
running() {
  [[ -f "$STATE" ]] || return 1
  local pid
  pid=$(sed -n 's/^MINIO_PID=//p' "$STATE")
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && grep -q minio "/proc/$pid/cmdline" 2>/dev/null
}

print_env() {
  unset BRAID_TEST_S3_ENDPOINT_POD
  # shellcheck disable=SC1090
  source "$STATE"
  echo "export BRAID_TEST_S3_ENDPOINT=$BRAID_TEST_S3_ENDPOINT"
  echo "export BRAID_TEST_S3_ACCESS_KEY=$BRAID_TEST_S3_ACCESS_KEY"
  echo "export BRAID_TEST_S3_SECRET_KEY=$BRAID_TEST_S3_SECRET_KEY"
  if [[ -n "${BRAID_TEST_S3_ENDPOINT_POD:-}" ]]; then
    echo "export BRAID_TEST_S3_ENDPOINT_POD=$BRAID_TEST_S3_ENDPOINT_POD"
  fi
}

wait_ready() { # port pid log
  for _ in $(seq 1 150); do
    if curl -fsS -o /dev/null "http://$HOST:$1/minio/health/ready" 2>/dev/null; then
      return 0
    fi
    kill -0 "$2" 2>/dev/null || { log "MinIO exited; its log:"; cat "$3" >&2; return 1; }
    sleep 0.2
  done
  log "MinIO did not become ready in 30s; its log:"
  cat "$3" >&2
  return 1
}

up() {
  if running; then
    log "already running (state in $STATE)"
    print_env
    return
  fi
  host_is_local || { log "$HOST is not an address of this machine (is the hack/kube node up?)"; exit 1; }
  build
  mkdir -p "$STATE_DIR"
  local data user pass port pid logf
  data=$(mktemp -d "$STATE_DIR/data.XXXXXX")
  logf="$data.log"
  user="braid$(random_hex 6)"
  pass=$(random_hex 16)
  for _ in 1 2 3; do
    port=$(free_port)
    MINIO_ROOT_USER="$user" MINIO_ROOT_PASSWORD="$pass" MINIO_BROWSER=off MINIO_UPDATE=off \
      nohup "$BIN" server --quiet --address "$HOST:$port" "$data" >"$logf" 2>&1 </dev/null &
    pid=$!
    if wait_ready "$port" "$pid" "$logf"; then
      cat >"$STATE" <<EOF
MINIO_PID=$pid
MINIO_DATA=$data
MINIO_LOG=$logf
BRAID_TEST_S3_ENDPOINT=$HOST:$port
BRAID_TEST_S3_ACCESS_KEY=$user
BRAID_TEST_S3_SECRET_KEY=$pass
EOF
      if [[ "$HOST" != 127.0.0.1 ]]; then echo "BRAID_TEST_S3_ENDPOINT_POD=$HOST:$port" >>"$STATE"; fi
      log "MinIO $MINIO_VERSION is up on $HOST:$port (PID $pid)"
      print_env
      return
    fi
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$data" "$logf"
  exit 1
}

down() {
  if [[ ! -f "$STATE" ]]; then
    log "not running (no $STATE)"
    return
  fi
  # shellcheck disable=SC1090
  source "$STATE"
  if running; then
    kill "$MINIO_PID"
    for _ in $(seq 1 100); do
      kill -0 "$MINIO_PID" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$MINIO_PID" 2>/dev/null; then
      kill -9 "$MINIO_PID" 2>/dev/null || true
    fi
    log "stopped MinIO (PID $MINIO_PID)"
  fi
  rm -rf "$MINIO_DATA" "$MINIO_LOG" "$STATE"
}

case "$CMD" in
build) build ;;
up) up ;;
env)
  running || { log "not running"; exit 1; }
  print_env
  ;;
down) down ;;
*)
  echo "usage: $0 build|up|env|down [--host ADDR]" >&2
  exit 2
  ;;
esac
