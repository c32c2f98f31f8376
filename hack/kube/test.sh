#!/usr/bin/env bash
# The Kubernetes part of `make test`: brings up the one-node cluster (up.sh, cold the first time:
# it builds kube-apiserver, kubelet, kube-scheduler and kubectl), loads the images with the braid
# binary just built (images.sh), starts a private PostgreSQL (hack/postgres.sh) and a MinIO on the
# node's bridge address, where pods reach it (hack/minio.sh up --host), runs the tests of the kube
# store, the PostgreSQL archive, the kube runtime and the backend end to end, and stops what it started: a cluster, a
# PostgreSQL or a MinIO that was already running is left running.
#
#   hack/kube/test.sh BRAID_BIN
#
# BRAID_KUBE_GOTEST_FLAGS adds flags to the go test line (e.g. "-run TestKubeArchive -v").
set -euo pipefail
cd "$(dirname "$0")/../.."
BRAID_BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
GO=${GO:-go}
HERE=hack/kube
LOG_TAG=kube-test
# shellcheck source=lib.sh
. "$HERE/lib.sh"

kube_was_up=false
if alive "$RUN/apiserver.pid" kube-apiserver && alive "$NODE/kubelet.pid" kubelet; then kube_was_up=true; fi
pg_was_up=false
if ./hack/postgres.sh env >/dev/null 2>&1; then pg_was_up=true; fi
# The bridge's address: the pod CIDR's first host (10.245.0.1).
GATEWAY=${POD_CIDR%.*}.1
minio_was_up=false
if ./hack/minio.sh env --host "$GATEWAY" >/dev/null 2>&1; then minio_was_up=true; fi
cleanup() {
  if [ "$minio_was_up" = false ]; then ./hack/minio.sh down --host "$GATEWAY" >/dev/null 2>&1 || true; fi
  if [ "$kube_was_up" = false ]; then "$HERE/down.sh" >/dev/null 2>&1 || true; fi
  if [ "$pg_was_up" = false ]; then ./hack/postgres.sh down >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

start=$(date +%s)
KUBECONFIG=$("$HERE/up.sh" | tail -1 | sed 's/^export KUBECONFIG=//')
export KUBECONFIG
echo "kube-test: node up in $(($(date +%s) - start)) s" >&2
"$HERE/images.sh" >&2
eval "$(./hack/postgres.sh up | tail -1)"
export BRAID_TEST_POSTGRES
# MinIO listens on the bridge's address, which up.sh gives the bridge before any pod runs.
eval "$(./hack/minio.sh up --host "$GATEWAY")"
export BRAID_TEST_S3_ENDPOINT BRAID_TEST_S3_ACCESS_KEY BRAID_TEST_S3_SECRET_KEY BRAID_TEST_S3_ENDPOINT_POD

# shellcheck disable=SC2086
BRAID_KUBE=1 BRAID_REQUIRE_KUBE=1 BRAID_REQUIRE_POSTGRES=1 BRAID_REQUIRE_MINIO=1 BRAID_BIN="$BRAID_BIN" \
  "$GO" test -count=1 -timeout 30m ${BRAID_KUBE_GOTEST_FLAGS:-} ./internal/store/kube/ ./internal/store/postgres/ ./internal/runtime/kube/ ./test/e2e/kube/
# The server's sync limits on real ConfigMaps and on PostgreSQL (internal/cli/synclimits_kube_test.go).
BRAID_KUBE=1 BRAID_REQUIRE_KUBE=1 BRAID_REQUIRE_POSTGRES=1 \
  "$GO" test -count=1 -timeout 10m -run '^TestKubeSyncLimits' ./internal/cli/
