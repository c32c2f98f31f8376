#!/usr/bin/env bash
# Prepare namespaces for pods on the hack/kube cluster: create each NAMESPACE with a `default`
# ServiceAccount and the `kube-root-ca.crt` ConfigMap. No kube-controller-manager runs there, so
# nothing else creates them, and with the ServiceAccount admission plugin on a pod is refused
# without its ServiceAccount and cannot start without the ConfigMap (its projected token volume).
# Usage: hack/kube/ns.sh NAMESPACE...     (idempotent)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
LOG_TAG=kube-ns
# shellcheck source=lib.sh
. "$HERE/lib.sh"
[ $# -gt 0 ] || die "usage: $0 NAMESPACE..."
CA=$RUN/pki/serving/apiserver.crt
[ -f "$CA" ] || die "$CA missing: run hack/kube/up.sh first"
CA_YAML=$(sed 's/^/    /' "$CA")
for ns in "$@"; do
  cat <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: $ns}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: default, namespace: $ns}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kube-root-ca.crt, namespace: $ns}
data:
  ca.crt: |
$CA_YAML
---
YAML
done | kc apply --server-side --force-conflicts -f - >/dev/null
for ns in "$@"; do echo "namespace $ns ready"; done
