#!/usr/bin/env bash
# Bring up a one-node Kubernetes on 127.0.0.1 for braid's Kubernetes backend, idempotently:
#   etcd, containerd, runc, CNI plugins, busybox-static: Debian packages unpacked with dpkg -x
#   kube-apiserver, kubelet, kube-scheduler: built from k8s.io/kubernetes through the Go module proxy
# in a Go module of its own under $BRAID_KUBE_DIR/build (the project's go.mod is never touched).
# A second run with everything up starts nothing and returns at once.
# The last line of stdout is `export KUBECONFIG=...`; progress goes to stderr.
#
# Environment (see lib.sh for ports): BRAID_KUBE_DIR, BRAID_KUBE_VERSION, BRAID_KUBE_KEEP_DATA=1
# (keep etcd data when etcd is started again), BRAID_KUBE_APISERVER_FLAGS (extra flags).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
LOG_TAG=kube-up
# shellcheck source=lib.sh
. "$HERE/lib.sh"
# Say where a failing command stopped the script (set -e is otherwise silent).
trap 'log "error: line $LINENO: $BASH_COMMAND exited $?"' ERR
lock
mkdir -p "$BIN" "$EXT" "$DEBS" "$BUILD" "$RUN/pki" "$LOGS" "$NODE/containerd" "$NODE/cni/net.d" \
  "$NODE/pod-logs" "$NODE/kubelet" "$IMAGES"

all_up() {
  alive "$RUN/etcd.pid" etcd && alive "$RUN/apiserver.pid" kube-apiserver &&
    alive "$NODE/containerd.pid" containerd && alive "$NODE/scheduler.pid" kube-scheduler &&
    alive "$NODE/kubelet.pid" kubelet && readyz && node_ready
}
if all_up; then
  log "already running (apiserver pid $(cat "$RUN/apiserver.pid"), kubelet pid $(cat "$NODE/kubelet.pid"))"
  echo "export KUBECONFIG=$KUBECONFIG_FILE"
  exit 0
fi

# ---- 1. Debian packages, unpacked into $EXT (nothing installed) ------------------------------
DEB_PKGS="etcd-server containerd runc containernetworking-plugins busybox-static"
if [ ! -x "$EXT/usr/bin/etcd" ] || [ ! -x "$EXT/usr/bin/containerd" ] || [ ! -x "$EXT/usr/sbin/runc" ] ||
  [ ! -x "$EXT/usr/lib/cni/bridge" ] || [ ! -x "$EXT/bin/busybox" ]; then
  log "fetching $DEB_PKGS"
  # shellcheck disable=SC2086
  (cd "$DEBS" && { apt-get download $DEB_PKGS >/dev/null 2>&1 ||
    { apt-get update >/dev/null && apt-get download $DEB_PKGS >/dev/null; }; })
  for f in "$DEBS"/*.deb; do dpkg -x "$f" "$EXT"; done
fi

# ---- 2. Kubernetes binaries from the Go module proxy -------------------------------------------
"$HERE/build.sh"

# ---- 3. keys, token, kubeconfig ------------------------------------------------------------------
if [ ! -f "$RUN/pki/sa.key" ]; then
  openssl genrsa -out "$RUN/pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$RUN/pki/sa.key" -pubout -out "$RUN/pki/sa.pub" 2>/dev/null
fi
echo "$TOKEN,admin,admin-uid,\"system:masters\"" > "$RUN/pki/tokens.csv"
cat > "$KUBECONFIG_FILE" <<KC
apiVersion: v1
kind: Config
clusters:
- name: braid-kube
  cluster:
    server: https://127.0.0.1:$API_PORT
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: $TOKEN
contexts:
- name: braid-kube
  context: {cluster: braid-kube, user: admin}
current-context: braid-kube
KC

# ---- 4. etcd -----------------------------------------------------------------------------------
if ! alive "$RUN/etcd.pid" etcd; then
  # a control plane without its etcd is stale: start both afresh
  stop kube-apiserver "$RUN/apiserver.pid" kube-apiserver
  [ "${BRAID_KUBE_KEEP_DATA:-0}" = 1 ] || rm -rf "$RUN/etcd-data"
  log "starting etcd"
  setsid "$EXT/usr/bin/etcd" --name braid --data-dir "$RUN/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "braid=http://127.0.0.1:$ETCD_PEER_PORT" --logger zap --log-outputs "$LOGS/etcd.log" \
    > "$LOGS/etcd.out" 2>&1 < /dev/null 9>&- &
  echo $! > "$RUN/etcd.pid"
fi
for _ in $(seq 1 100); do etcd_healthy && break; sleep 0.1; done
etcd_healthy || die "etcd is not healthy, see $LOGS/etcd.log"

# ---- 5. kube-apiserver ---------------------------------------------------------------------------
# The ServiceAccount admission plugin stays on: braid's pods call the API with a projected token.
# RBAC is enforced (the admin token is in system:masters), so tests can check a denied service account.
# No kube-controller-manager runs, so ns.sh creates each namespace's default ServiceAccount and
# kube-root-ca.crt ConfigMap. Debian's etcd 3.4 needs WatchList=false (no RequestWatchProgress).
if ! alive "$RUN/apiserver.pid" kube-apiserver; then
  log "starting kube-apiserver"
  # shellcheck disable=SC2086
  setsid "$BIN/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$API_PORT" \
    --cert-dir="$RUN/pki/serving" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$RUN/pki/sa.pub" --service-account-signing-key-file="$RUN/pki/sa.key" \
    --token-auth-file="$RUN/pki/tokens.csv" --authorization-mode=RBAC \
    --service-cluster-ip-range=10.96.0.0/24 --endpoint-reconciler-type=none \
    --profiling=false --feature-gates=WatchList=false ${BRAID_KUBE_APISERVER_FLAGS:-} \
    > "$LOGS/apiserver.log" 2>&1 < /dev/null 9>&- &
  echo $! > "$RUN/apiserver.pid"
fi
for _ in $(seq 1 300); do
  readyz && break
  running "$RUN/apiserver.pid" || { tail -20 "$LOGS/apiserver.log" >&2 || true; die "kube-apiserver exited"; }
  sleep 0.1
done
readyz || die "kube-apiserver not ready after 30s, see $LOGS/apiserver.log"
log "kube-apiserver ready (pid $(cat "$RUN/apiserver.pid"))"
# shellcheck disable=SC2086
"$HERE/ns.sh" $BOOTSTRAP_NAMESPACES >/dev/null

# ---- 6. node configuration ---------------------------------------------------------------------------
"$HERE/node-config.sh"

# ---- 6b. the pods' bridge, with a fixed MAC address -------------------------------------------------
# The CNI plugin would make the bridge at the first pod, but a bridge whose MAC address was never
# set takes the lowest of its ports' addresses, so it changes as pods come and go, and a pod that
# cached the gateway's old address cannot reach the host (a MinIO on the bridge's address) until its
# ARP entry expires. Made here, with the address set, it keeps one; services on the host can also
# listen on the bridge's address before any pod runs.
GATEWAY=${POD_CIDR%.*}.1
ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
# shellcheck disable=SC2046,SC2183
ip link set "$BRIDGE" address "$(printf '02:00:%02x:%02x:%02x:%02x' $(echo "$GATEWAY" | tr . ' '))"
ip -o -4 addr show dev "$BRIDGE" | grep -q " $GATEWAY/" || ip addr add "$GATEWAY/${POD_CIDR#*/}" dev "$BRIDGE"
ip link set "$BRIDGE" up

# ---- 7. containerd, with the pause image ------------------------------------------------------
if ! alive "$NODE/containerd.pid" "$NODE/containerd.toml"; then
  log "starting containerd"
  setsid "$EXT/usr/bin/containerd" --config "$NODE/containerd.toml" > "$LOGS/containerd.log" 2>&1 < /dev/null 9>&- &
  echo $! > "$NODE/containerd.pid"
fi
for _ in $(seq 1 100); do ctr_ version >/dev/null 2>&1 && break; sleep 0.1; done
ctr_ version >/dev/null 2>&1 || die "containerd does not answer, see $LOGS/containerd.log"
# Its CRI service answers "server is not initialized yet" until it has recovered the state of earlier
# runs, which can take seconds after containerd answers: a kubelet started before then exits.
for _ in $(seq 1 600); do grep -q 'msg="Start streaming server"' "$LOGS/containerd.log" && break; sleep 0.1; done
grep -q 'msg="Start streaming server"' "$LOGS/containerd.log" ||
  { tail -20 "$LOGS/containerd.log" >&2 || true; die "containerd's CRI service did not start in 60s"; }
if [ ! -f "$IMAGES/pause.tar" ]; then
  log "building the pause image"
  PAUSE_C=$(cd "$BUILD" && go list -m -json "k8s.io/kubernetes" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')/build/pause/linux/pause.c
  gcc -O2 -static -DVERSION=braid -o "$IMAGES/pause" "$PAUSE_C"
  "$HERE/mkimage.sh" -o "$IMAGES/pause.tar" -t "$PAUSE_IMAGE" -entrypoint '["/pause"]' "$IMAGES/pause=/pause"
fi
ctr_ images import "$IMAGES/pause.tar" >/dev/null

# ---- 8. kube-scheduler and kubelet -----------------------------------------------------------------
if ! alive "$NODE/scheduler.pid" kube-scheduler; then
  setsid "$BIN/kube-scheduler" --kubeconfig="$KUBECONFIG_FILE" --authentication-kubeconfig="$KUBECONFIG_FILE" \
    --authorization-kubeconfig="$KUBECONFIG_FILE" --leader-elect=false --bind-address=127.0.0.1 \
    --secure-port="$SCHEDULER_PORT" > "$LOGS/scheduler.log" 2>&1 < /dev/null 9>&- &
  echo $! > "$NODE/scheduler.pid"
fi
if ! alive "$NODE/kubelet.pid" kubelet; then
  log "starting kubelet"
  setsid "$BIN/kubelet" --config="$NODE/kubelet-config.yaml" --kubeconfig="$KUBECONFIG_FILE" \
    --root-dir="$NODE/kubelet" --hostname-override="$NODE_NAME" > "$LOGS/kubelet.log" 2>&1 < /dev/null 9>&- &
  echo $! > "$NODE/kubelet.pid"
fi
for _ in $(seq 1 300); do
  running "$NODE/kubelet.pid" || { tail -30 "$LOGS/kubelet.log" >&2 || true; die "kubelet exited"; }
  node_ready && break
  sleep 0.2
done
node_ready || { tail -30 "$LOGS/kubelet.log" >&2 || true; die "node $NODE_NAME not Ready after 60s, see $LOGS/kubelet.log"; }
# No kube-controller-manager runs, so nothing lifts the taint the kubelet registers with.
kc taint node "$NODE_NAME" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
log "node $NODE_NAME Ready"
echo "export KUBECONFIG=$KUBECONFIG_FILE"
