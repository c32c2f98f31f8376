#!/usr/bin/env bash
# Stop what up.sh started, by the pids in its pid files, and undo what the node left on the host:
# mounts under $BRAID_KUBE_DIR, the pods' network namespaces, the bridge, the kubelet's iptables
# chains. Never kills by name. Cluster data stays in $BRAID_KUBE_DIR (etcd data is wiped at the
# next start unless BRAID_KUBE_KEEP_DATA=1).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
LOG_TAG=kube-down
# shellcheck source=lib.sh
. "$HERE/lib.sh"
lock

# 1. let the kubelet stop the pods (containers, CNI teardown) while it still runs
if alive "$NODE/kubelet.pid" kubelet && readyz; then
  kc delete pods --all -A --force --grace-period=0 --wait=false >/dev/null 2>&1 || true
  for _ in $(seq 1 100); do [ -z "$(ctr_ tasks ls -q 2>/dev/null)" ] && break; sleep 0.2; done
fi
stop kubelet "$NODE/kubelet.pid" kubelet
# drop the Node object so that the next start waits for a fresh registration
if readyz; then kc delete node "$NODE_NAME" --ignore-not-found --wait=false --request-timeout=5s >/dev/null 2>&1 || true; fi
stop kube-scheduler "$NODE/scheduler.pid" kube-scheduler

# 2. what still runs in our containerd: kill and remove, then containerd and its shims
if alive "$NODE/containerd.pid" "$NODE/containerd.toml"; then
  for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s SIGKILL "$t" >/dev/null 2>&1; done
  sleep 0.5
  for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks rm -f "$t" >/dev/null 2>&1; done
  for c in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers rm "$c" >/dev/null 2>&1; done
fi
stop containerd "$NODE/containerd.pid" "$NODE/containerd.toml"
# shims of our containerd: their command line names our socket
for p in /proc/[0-9]*; do
  tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -q -- "containerd-shim-runc-v2 .*-address $SOCK" || continue
  kill -KILL "${p#/proc/}" 2>/dev/null && log "killed shim ${p#/proc/}"
done

# 3. control plane
stop kube-apiserver "$RUN/apiserver.pid" kube-apiserver
stop etcd "$RUN/etcd.pid" etcd

# 4. host leftovers, only ours
grep " $NODE/" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do
  umount -l "$m" && log "unmounted $m"
done
for ns in $(ip netns list 2>/dev/null | awk '/^cni-/{print $1}'); do
  # containerd records the network namespaces it made in its state directory
  grep -rqs "$ns" "$NODE/containerd" 2>/dev/null && ip netns delete "$ns" 2>/dev/null && log "deleted netns $ns"
done
if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link delete "$BRIDGE" && log "deleted bridge $BRIDGE"; fi
find /var/log/containers /var/log/pods -maxdepth 1 -type l -lname "$NODE/*" -delete 2>/dev/null
rmdir /var/log/containers 2>/dev/null || true
rm -rf "$NODE/cni/ipam"
# containerd 1.6 keeps shim sockets under /run/containerd whatever its state directory; remove
# them only when no other containerd runs (pgrep -x only looks, it kills nothing)
pgrep -x containerd >/dev/null || rm -rf /run/containerd
# the chains the kubelet creates at start
for ipt in iptables ip6tables; do
  command -v $ipt >/dev/null || continue
  pgrep -x kubelet >/dev/null && break   # another kubelet on this host uses them too
  $ipt -D INPUT -j KUBE-FIREWALL 2>/dev/null; $ipt -D OUTPUT -j KUBE-FIREWALL 2>/dev/null
  $ipt -F KUBE-FIREWALL 2>/dev/null; $ipt -X KUBE-FIREWALL 2>/dev/null
  for t in mangle filter nat; do $ipt -t $t -F KUBE-KUBELET-CANARY 2>/dev/null; $ipt -t $t -X KUBE-KUBELET-CANARY 2>/dev/null; done
  $ipt -t mangle -X KUBE-IPTABLES-HINT 2>/dev/null
done
log "down"
