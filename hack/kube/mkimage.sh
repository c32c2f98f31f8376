#!/usr/bin/env bash
# Write an image archive for `ctr images import` (see mkimage/main.go for the arguments).
# The helper is built once from this repository into $BRAID_KUBE_DIR/bin.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"
TOOL=$BIN/braid-mkimage
if [ ! -x "$TOOL" ] || [ "$HERE/mkimage/main.go" -nt "$TOOL" ]; then
  mkdir -p "$BIN"
  (cd "$HERE/../.." && CGO_ENABLED=0 go build -o "$TOOL" ./hack/kube/mkimage)
fi
exec "$TOOL" "$@"
