#!/usr/bin/env bash
# Build the images braid's Kubernetes tests use and import them into the node's containerd
# (namespace k8s.io). Nothing is pulled: every image is busybox-static plus a file or two.
#   braid:dev              static CGO_ENABLED=0 ./cmd/braid at /bin/braid (the entrypoint), busybox in /bin
#   busybox:1.36           busybox, command sh; also tagged busybox:latest, alpine:3.23 and the
#                          distribution tags Argo's examples use (alpine:3.6, debian:*, ubuntu:17.10)
#   argoproj/argosay:v2    busybox plus images/argosay as /argosay (the entrypoint)
#   python:alpine3.23      Debian's python3.11 (.debs unpacked, cached under $KDIR/python) plus busybox,
#                          as python and python3; also tagged python:alpine3.6, python:3.11, python:3
#                          and python:latest (images/python.sh)
# images/bash stands in for bash; the busybox and python images have a /mnt, as alpine's does.
# Pods must use imagePullPolicy IfNotPresent or Never, since nothing can be pulled.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
LOG_TAG=kube-images
# shellcheck source=lib.sh
. "$HERE/lib.sh"
lock
alive "$NODE/containerd.pid" "$NODE/containerd.toml" || die "containerd is not running: run make kube-up first"
mkdir -p "$IMAGES"

BUSYBOX=$EXT/bin/busybox
APPLETS=$("$BUSYBOX" --list | tr '\n' ' ')
BASE_FILES=("$BUSYBOX=/bin/busybox" "$HERE/images/bash=/bin/bash")
OS_RELEASE='NAME="braid test image (busybox)"'

log "building braid (CGO_ENABLED=0)"
(cd "$REPO" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$IMAGES/braid" ./cmd/braid)

MK=$HERE/mkimage.sh
"$MK" -o "$IMAGES/braid.tar" -t braid:dev -entrypoint '["/bin/braid"]' -busybox-links "$APPLETS" \
  "${BASE_FILES[@]}" "$IMAGES/braid=/bin/braid"
"$MK" -o "$IMAGES/busybox.tar" -cmd '["sh"]' -busybox-links "$APPLETS" -file "etc/os-release=$OS_RELEASE" -file "mnt/.keep=" \
  -t busybox:1.36 -t busybox:latest -t alpine:3.23 -t alpine:3.6 \
  -t debian:9.1 -t debian:8.9 -t debian:latest -t ubuntu:17.10 "${BASE_FILES[@]}"
"$MK" -o "$IMAGES/argosay.tar" -t argoproj/argosay:v2 -entrypoint '["/argosay"]' -busybox-links "$APPLETS" \
  "${BASE_FILES[@]}" "$HERE/images/argosay=/argosay"

PY_TAGS="python:alpine3.23 python:alpine3.6 python:3.11 python:3 python:latest"
# shellcheck disable=SC2086
"$HERE/images/python.sh" "$IMAGES/python.tar" "$BUSYBOX" "$APPLETS" $PY_TAGS

for a in braid busybox argosay python; do
  ctr_ images import "$IMAGES/$a.tar" >/dev/null || die "import $IMAGES/$a.tar"
done
log "imported: braid:dev busybox:1.36 busybox:latest alpine:3.23 alpine:3.6 debian:9.1 debian:8.9 debian:latest ubuntu:17.10 argoproj/argosay:v2 $PY_TAGS"
