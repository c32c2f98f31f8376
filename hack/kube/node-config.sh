#!/usr/bin/env bash
# Write the node's configuration files: containerd, the CNI bridge network, the kubelet.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"
mkdir -p "$NODE/containerd" "$NODE/cni/net.d" "$NODE/pod-logs"

cat > "$NODE/containerd.toml" <<CONF
version = 2
root = "$NODE/containerd/root"
state = "$NODE/containerd/state"
[grpc]
  address = "$SOCK"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # without CAP_SYS_RESOURCE the sandbox's oom_score_adj of -998 is refused
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$EXT/usr/sbin/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$EXT/usr/lib/cni"
    conf_dir = "$NODE/cni/net.d"
CONF

# A bridge on this host only, without masquerade or a way out: pods reach each other and the host.
cat > "$NODE/cni/net.d/10-braid.conflist" <<CONF
{"cniVersion": "0.4.0", "name": "braidkube", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "dataDir": "$NODE/cni/ipam", "ranges": [[{"subnet": "$POD_CIDR"}]]}}]}
CONF

# cgroupfs, no QoS cgroups and failCgroupV1 false: the host runs cgroup v1 (hybrid).
cat > "$NODE/kubelet-config.yaml" <<CONF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$SOCK
podLogsDir: $NODE/pod-logs
cgroupsPerQOS: false
enforceNodeAllocatable: []
resolvConf: /etc/resolv.conf
serializeImagePulls: false
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
CONF
