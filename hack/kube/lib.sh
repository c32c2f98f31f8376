# shellcheck shell=bash
# Common settings for the hack/kube scripts (sourced, not run). Every path lives under one cache
# directory; nothing is installed system-wide.
#
#   BRAID_KUBE_DIR       state: binaries, data, pid files, logs (default ~/.cache/braid-kube)
#   BRAID_KUBE_VERSION   Kubernetes release built from the Go module proxy (default v1.37.2)
#   BRAID_KUBE_API_PORT  kube-apiserver port on 127.0.0.1 (default 26443)

KDIR=${BRAID_KUBE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/braid-kube}
K8S_VERSION=${BRAID_KUBE_VERSION:-v1.37.2}
# k8s.io/api and the other staging modules carry the same release as v0.X.Y.
STAGING_VERSION=${BRAID_KUBE_STAGING_VERSION:-v0.${K8S_VERSION#v1.}}
API_PORT=${BRAID_KUBE_API_PORT:-26443}
ETCD_PORT=${BRAID_KUBE_ETCD_PORT:-22379}
ETCD_PEER_PORT=${BRAID_KUBE_ETCD_PEER_PORT:-22380}
KUBELET_PORT=${BRAID_KUBE_KUBELET_PORT:-21250}
KUBELET_HEALTHZ_PORT=${BRAID_KUBE_KUBELET_HEALTHZ_PORT:-21248}
SCHEDULER_PORT=${BRAID_KUBE_SCHEDULER_PORT:-21259}
TOKEN=${BRAID_KUBE_TOKEN:-braid-kube-admin-token}
POD_CIDR=${BRAID_KUBE_POD_CIDR:-10.245.0.0/24}
BRIDGE=braidkube0
# The kubelet refuses a loopback node IP; the name localhost resolves to 127.0.0.1, so the
# apiserver reaches the kubelet (logs, exec) over loopback.
NODE_NAME=localhost
# Namespaces that get a default ServiceAccount and the kube-root-ca.crt ConfigMap at start.
BOOTSTRAP_NAMESPACES=${BRAID_KUBE_NAMESPACES:-default argo}

BIN=$KDIR/bin          # kube-apiserver, kubelet, kube-scheduler (and kubectl when the host has none)
EXT=$KDIR/ext          # Debian packages unpacked with dpkg -x
DEBS=$KDIR/debs
BUILD=$KDIR/build      # the Go module the Kubernetes binaries are built in
RUN=$KDIR/run          # pid files, kubeconfig, keys, etcd data
LOGS=$KDIR/logs
NODE=$KDIR/node        # containerd, kubelet and CNI state
IMAGES=$KDIR/images    # OCI archives written by images.sh
SOCK=$NODE/containerd/containerd.sock
KUBECONFIG_FILE=$RUN/kubeconfig
PAUSE_IMAGE=braid/pause:3.10

export GOTOOLCHAIN=local GOWORK=off
[ -n "${BRAID_KUBE_GOMODCACHE:-}" ] && export GOMODCACHE=$BRAID_KUBE_GOMODCACHE
[ -n "${BRAID_KUBE_GOCACHE:-}" ] && export GOCACHE=$BRAID_KUBE_GOCACHE
# containerd finds containerd-shim-runc-v2 and runc on PATH.
export PATH=$EXT/usr/bin:$EXT/usr/sbin:$PATH

T0=$(date +%s.%N)
# log prints a progress line with the time since the script started, on stderr, so that the
# last line of stdout stays the export line.
log() { printf '[%s %5.1fs] %s\n' "${LOG_TAG:-kube}" "$(echo "$(date +%s.%N) - $T0" | bc)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# alive PIDFILE: the process in PIDFILE runs and its command line contains WORD.
alive() {
  local pidf=$1 word=$2 pid
  [ -f "$pidf" ] || return 1
  pid=$(cat "$pidf")
  kill -0 "$pid" 2>/dev/null && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$word"
}

# running PIDFILE: the process in PIDFILE exists. Right after `setsid CMD &` its command line may
# still be the forking shell's, so a start is checked with this, not alive.
running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# stop NAME PIDFILE WORD: SIGTERM the process by its pid, SIGKILL after 30 s, remove the pid file.
stop() {
  local name=$1 pidf=$2 word=$3 pid
  [ -f "$pidf" ] || return 0
  pid=$(cat "$pidf")
  if alive "$pidf" "$word"; then
    kill -TERM "$pid"
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then log "$name ($pid) ignored SIGTERM for 30s, sending SIGKILL"; kill -KILL "$pid"; fi
    log "stopped $name (pid $pid)"
  fi
  rm -f "$pidf"
}

ctr_() { "$EXT/usr/bin/ctr" -a "$SOCK" -n k8s.io "$@"; }
api() { curl -sk --max-time "${API_TIMEOUT:-5}" -H "Authorization: Bearer $TOKEN" "$@"; }
readyz() { api --max-time 2 "https://127.0.0.1:$API_PORT/readyz" 2>/dev/null | grep -qx ok; }
etcd_healthy() { curl -s --max-time 1 "http://127.0.0.1:$ETCD_PORT/health" 2>/dev/null | grep -q '"health":"true"'; }
node_ready() {
  api "https://127.0.0.1:$API_PORT/api/v1/nodes/$NODE_NAME" 2>/dev/null |
    tr -d ' \n' | grep -q '"type":"Ready","status":"True"'
}

# kubectl_bin prints a kubectl to use: the host's, else one built next to the other binaries.
kubectl_bin() {
  if [ -x "$BIN/kubectl" ]; then echo "$BIN/kubectl"; else command -v kubectl; fi
}
kc() { "$(kubectl_bin)" --kubeconfig "$KUBECONFIG_FILE" "$@"; }

# lock serializes the scripts that change the cluster (one kube-up, kube-down or kube-images at
# a time on one BRAID_KUBE_DIR); scripts they call inherit the lock.
lock() {
  [ -n "${BRAID_KUBE_LOCKED:-}" ] && return 0
  mkdir -p "$KDIR"
  exec 9> "$KDIR/.lock"
  if ! flock -n 9; then
    log "waiting for another hack/kube script (lock $KDIR/.lock)"
    flock 9
  fi
  export BRAID_KUBE_LOCKED=1
}
