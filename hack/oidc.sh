#!/usr/bin/env bash
# A real OpenID Connect provider for the SSO tests (braid server --auth-mode sso): hack/oidc/, a small
# program on github.com/oauth2-proxy/mockoidc with a login form, built from the Go module proxy as its
# own Go module (its dependencies never enter braid's go.mod).
#
#   hack/oidc.sh build   build ./bin/tools/braid-oidc (cached: a stamp of hack/oidc's sources makes a second
#                        run a no-op; the cold build takes about 20 seconds)
#   hack/oidc.sh up      build, then start the provider on 127.0.0.1 with a free port, client id braid, a random
#                        client secret and one user (login dev, a random password, email dev@example.com, group
#                        dev); record its PID and environment in ./.cache/oidc/state.env and print `export` lines
#   hack/oidc.sh env     print the `export` lines of the running provider
#   hack/oidc.sh down    stop the provider recorded in the state file, by its PID
#
# up takes --redirect-url URL (or $OIDC_REDIRECT_URL) to accept only that redirect_uri; without it any is
# accepted. Use it as: eval "$(hack/oidc.sh up)". test/e2e/sso_test.go starts its own provider from the
# built binary (BRAID_OIDC_BIN overrides where it is).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
TOOLS="$ROOT/bin/tools"
BIN="$TOOLS/braid-oidc"
STAMP="$TOOLS/.braid-oidc.version"
STATE_DIR="$ROOT/.cache/oidc"
STATE="$STATE_DIR/state.env"
REDIRECT_URL=${OIDC_REDIRECT_URL:-}

log() { echo "oidc.sh: $*" >&2; }
usage() {
  echo "usage: $0 build|up|env|down [--redirect-url URL]" >&2
  exit 2
}

CMD=${1:-}
[[ $# -gt 0 ]] && shift
while [[ $# -gt 0 ]]; do
  case "$1" in
  --redirect-url)
    [[ $# -ge 2 ]] || usage
    REDIRECT_URL=$2
    shift 2
    ;;
  --redirect-url=*)
    REDIRECT_URL=${1#--redirect-url=}
    shift
    ;;
  *) usage ;;
  esac
done

sources_stamp() {
  cat hack/oidc/go.mod hack/oidc/go.sum hack/oidc/*.go | sha256sum | cut -d' ' -f1
}

build() {
  local want
  want=$(sources_stamp)
  if [[ -x "$BIN" && -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
    return
  fi
  command -v go >/dev/null || { log "go is not on PATH"; exit 1; }
  log "building hack/oidc into $BIN"
  mkdir -p "$TOOLS"
  (cd hack/oidc && GOWORK=off GOFLAGS=-mod=mod go build -o "$BIN" .)
  echo "$want" >"$STAMP"
}

random_hex() { # bytes
  head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'
}

running() {
  [[ -f "$STATE" ]] || return 1
  local pid
  pid=$(sed -n 's/^OIDC_PID=//p' "$STATE")
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && grep -q braid-oidc "/proc/$pid/cmdline" 2>/dev/null
}

print_env() {
  # shellcheck disable=SC1090
  source "$STATE"
  echo "export BRAID_TEST_OIDC_ISSUER=$BRAID_TEST_OIDC_ISSUER"
  echo "export BRAID_TEST_OIDC_CLIENT_ID=$BRAID_TEST_OIDC_CLIENT_ID"
  echo "export BRAID_TEST_OIDC_CLIENT_SECRET=$BRAID_TEST_OIDC_CLIENT_SECRET"
  echo "export BRAID_TEST_OIDC_LOGIN=$BRAID_TEST_OIDC_LOGIN"
  echo "export BRAID_TEST_OIDC_PASSWORD=$BRAID_TEST_OIDC_PASSWORD"
}

up() {
  if running; then
    log "already running (state in $STATE)"
    print_env
    return
  fi
  build
  mkdir -p "$STATE_DIR"
  local secret password out logf pid issuer=""
  secret=$(random_hex 16)
  password=$(random_hex 8)
  out="$STATE_DIR/stdout"
  logf="$STATE_DIR/log"
  OIDC_CLIENT_SECRET="$secret" OIDC_REDIRECT_URL="$REDIRECT_URL" nohup "$BIN" -addr 127.0.0.1:0 -client-id braid \
    -user "dev:$password:dev@example.com:Dev User:dev" >"$out" 2>"$logf" </dev/null &
  pid=$!
  for _ in $(seq 1 100); do
    issuer=$(sed -n 's/^BRAID_TEST_OIDC_ISSUER=//p' "$out")
    if [[ -n "$issuer" ]] && curl -fsS -o /dev/null "$issuer/.well-known/openid-configuration" 2>/dev/null; then
      break
    fi
    kill -0 "$pid" 2>/dev/null || { log "braid-oidc exited; its log:"; cat "$logf" >&2; exit 1; }
    issuer=""
    sleep 0.1
  done
  if [[ -z "$issuer" ]]; then
    log "braid-oidc did not become ready in 10s; its log:"
    cat "$logf" >&2
    kill "$pid" 2>/dev/null || true
    exit 1
  fi
  cat >"$STATE" <<EOT
OIDC_PID=$pid
OIDC_LOG=$logf
BRAID_TEST_OIDC_ISSUER=$issuer
BRAID_TEST_OIDC_CLIENT_ID=braid
BRAID_TEST_OIDC_CLIENT_SECRET=$secret
BRAID_TEST_OIDC_LOGIN=dev
BRAID_TEST_OIDC_PASSWORD=$password
EOT
  log "braid-oidc is up at $issuer (PID $pid)"
  print_env
}

down() {
  if [[ ! -f "$STATE" ]]; then
    log "not running (no $STATE)"
    return
  fi
  # shellcheck disable=SC1090
  source "$STATE"
  if running; then
    kill "$OIDC_PID"
    for _ in $(seq 1 50); do
      kill -0 "$OIDC_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$OIDC_PID" 2>/dev/null && kill -9 "$OIDC_PID" 2>/dev/null || true
    log "stopped braid-oidc (PID $OIDC_PID)"
  fi
  rm -f "$STATE" "$STATE_DIR/stdout" "$STATE_DIR/log"
}

case "$CMD" in
build) build ;;
up) up ;;
env)
  running || { log "not running"; exit 1; }
  print_env
  ;;
down) down ;;
*) usage ;;
esac
