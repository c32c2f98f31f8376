#!/usr/bin/env bash
# Build kube-apiserver, kubelet, kube-scheduler and kubectl (a client of the same release, whatever
# the host has) from k8s.io/kubernetes through the Go module proxy, in a Go module of its own under $BRAID_KUBE_DIR/build.
# Does nothing when the binaries of the wanted version are present.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
LOG_TAG=kube-build
# shellcheck source=lib.sh
. "$HERE/lib.sh"
lock
mkdir -p "$BIN" "$BUILD" "$LOGS"

CMDS="kube-apiserver kubelet kube-scheduler kubectl"
STAMP=$BIN/.version
missing=0
for c in $CMDS; do [ -x "$BIN/$c" ] || missing=1; done
if [ "$missing" = 0 ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$K8S_VERSION" ]; then exit 0; fi

cd "$BUILD"
if [ ! -f go.mod ] || ! grep -q "k8s.io/kubernetes $K8S_VERSION\$" go.mod; then
  log "writing go.mod for k8s.io/kubernetes $K8S_VERSION (staging modules at $STAGING_VERSION)"
  rm -f go.mod go.sum
  # k8s.io/kubernetes points its staging modules (k8s.io/api, ...) at ./staging with replace
  # directives; a module outside its tree pins each of them to the matching release instead.
  KMOD=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [ -f "$KMOD" ] || die "cannot download k8s.io/kubernetes@$K8S_VERSION"
  STAGING=$(sed -n '/^replace (/,/^)/p' "$KMOD" | awk '/=>/{print $1}')
  {
    printf 'module braidkube/build\n\ngo 1.26.0\n\ngodebug default=go1.26\n\n'
    printf 'require k8s.io/kubernetes %s\n\nreplace (\n' "$K8S_VERSION"
    for m in $STAGING; do printf '\t%s => %s %s\n' "$m" "$m" "$STAGING_VERSION"; done
    printf ')\n'
  } > go.mod
  {
    printf '//go:build tools\n\n// Package tools pins the Kubernetes commands that build.sh builds.\npackage tools\n\nimport (\n'
    for c in kube-apiserver kubelet kube-scheduler kubectl; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$c"; done
    printf ')\n'
  } > tools.go
  log "go mod tidy"
  go mod tidy > "$LOGS/go-mod-tidy.log" 2>&1 || { tail -20 "$LOGS/go-mod-tidy.log" >&2; die "go mod tidy failed"; }
fi

MINOR=$(echo "$K8S_VERSION" | cut -d. -f2)
LDF="-s -w"
# without these the binaries call themselves v0.0.0 and the kubelet refuses the skew
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDF="$LDF -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$MINOR -X $p.gitTreeState=clean"
done
PKGS=""
for c in $CMDS; do PKGS="$PKGS k8s.io/kubernetes/cmd/$c"; done
log "building$PKGS (several minutes when cold)"
mkdir -p "$BUILD/out"
# shellcheck disable=SC2086
go build -trimpath -ldflags "$LDF" -o "$BUILD/out/" $PKGS > "$LOGS/go-build.log" 2>&1 ||
  { tail -30 "$LOGS/go-build.log" >&2; die "go build failed"; }
for c in $CMDS; do mv "$BUILD/out/$c" "$BIN/$c"; done
echo "$K8S_VERSION" > "$STAMP"
log "built: $("$BIN/kube-apiserver" --version)"
