#!/usr/bin/env bash
# Installs and builds whatever the tests need; the tests themselves start the servers (each on 127.0.0.1,
# stopped by PID). Today: Go and the module proxy; curl (the event e2e test); git (the git artifact tests create repositories and
# serve them with `git daemon`); chromium (the SSO e2e test); MinIO built at a pinned version into ./bin/tools/minio (hack/minio.sh;
# the cold build takes several minutes, then it is cached); the OIDC provider of the SSO tests into
# ./bin/tools/braid-oidc (hack/oidc.sh). Later issues add PostgreSQL and a Kubernetes
# node here.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null || { echo "go is not on PATH" >&2; exit 1; }
go mod download

# apt_install PKG: install a Debian package (apt-get update first; sudo when not root).
apt_install() {
  echo "test-deps: installing $1" >&2
  local sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$1"
}

if ! command -v git >/dev/null || [[ ! -x "$(git --exec-path)/git-daemon" ]]; then
  apt_install git
fi

# curl: the event e2e test posts webhooks with the real curl.
if ! command -v curl >/dev/null; then
  apt_install curl
fi

# busybox-static: the image tests of the local runtime build an OCI image around its static /bin/busybox.
if [[ ! -x /bin/busybox ]] || ! dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed'; then
  apt_install busybox-static
fi

# chromium: the SSO e2e test (test/e2e/sso_test.go) logs in with a real headless browser.
if ! command -v chromium >/dev/null; then
  apt_install chromium
fi

./hack/minio.sh build
# braid-oidc: the OpenID Connect provider of the SSO tests, its own Go module (hack/oidc).
./hack/oidc.sh build
