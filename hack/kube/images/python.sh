#!/usr/bin/env bash
# Build the python test image as an OCI archive for `ctr images import`: Debian's python3.11
# (python3.11-minimal, libpython3.11-minimal, libpython3.11-stdlib and the shared libraries
# they load) unpacked with dpkg -x, plus busybox-static for sh and coreutils. Nothing is pulled
# from a registry; the .debs come from apt-get download.
#
#   hack/kube/images/python.sh OUT.tar BUSYBOX APPLETS TAG...
#
# The unpacked root is cached under $KDIR/python (keyed on the package list), so a warm run only
# writes the archive. Called by hack/kube/images.sh.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
LOG_TAG=${LOG_TAG:-kube-images}
# shellcheck source=../lib.sh
. "$HERE/lib.sh"

OUT=$1 BUSYBOX=$2 APPLETS=$3
shift 3
PKGS="python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libc6 zlib1g libexpat1 libssl3 libffi8 libbz2-1.0 liblzma5"
PYDIR=$KDIR/python
ROOT=$PYDIR/root
STAMP=$PYDIR/.packages

unpack() {
  if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$PKGS" ] && [ -x "$ROOT/usr/bin/python3.11" ]; then
    return
  fi
  log "python image: fetching $PKGS"
  rm -rf "$PYDIR"
  mkdir -p "$PYDIR/debs" "$ROOT"
  # shellcheck disable=SC2086
  (cd "$PYDIR/debs" && { apt-get download $PKGS >/dev/null 2>&1 ||
    { apt-get update >/dev/null && apt-get download $PKGS >/dev/null; }; }) || die "apt-get download $PKGS"
  for f in "$PYDIR"/debs/*.deb; do dpkg -x "$f" "$ROOT"; done
  # What a step never needs: documentation, iconv modules, OpenSSL engines, the test suite.
  rm -rf "$ROOT/usr/share" "$ROOT/usr/lib/x86_64-linux-gnu/gconv" "$ROOT/usr/lib/x86_64-linux-gnu/engines-3" \
    "$ROOT/usr/lib/x86_64-linux-gnu/ossl-modules" "$ROOT/usr/lib/python3.11/test" "$ROOT/usr/lib/python3.11/pydoc_data"
  rm -rf "$PYDIR/debs"
  echo "$PKGS" > "$STAMP"
}

# files prints SRC=DST for every regular file of the root, and for every symbolic link to a
# file, the file it names inside the root (an absolute link target is taken inside the root).
files() {
  local p rel target
  (cd "$ROOT" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort) | while read -r rel; do
    p=$ROOT/$rel
    if [ -L "$p" ]; then
      target=$(readlink "$p")
      case $target in
      /*) p=$ROOT$target ;;
      *) p=$(dirname "$p")/$target ;;
      esac
      [ -f "$p" ] && [ ! -L "$p" ] || continue
    fi
    printf '%s=/%s\n' "$p" "$rel"
  done
}

unpack
# A warm run with the same tags keeps the archive it wrote (the image is byte-for-byte the same).
if [ -f "$OUT" ] && [ "$(cat "$OUT.tags" 2>/dev/null)" = "$*" ] && [ "$OUT" -nt "$STAMP" ] &&
  [ "$OUT" -nt "$HERE/images/python.sh" ] && [ "$OUT" -nt "$HERE/images/python" ] && [ "$OUT" -nt "$BUSYBOX" ]; then
  exit 0
fi
TAGS=()
for t in "$@"; do TAGS+=(-t "$t"); done
mapfile -t FILES < <(files)
"$HERE/mkimage.sh" -o "$OUT" "${TAGS[@]}" -cmd '["python3"]' -busybox-links "$APPLETS" \
  -file 'etc/os-release=NAME="braid test image (python3.11 from Debian, busybox)"' \
  -file "mnt/.keep=" "$BUSYBOX=/bin/busybox" "$HERE/images/bash=/bin/bash" \
  "$HERE/images/python=/usr/bin/python3" "$HERE/images/python=/usr/bin/python" "${FILES[@]}"
echo "$*" > "$OUT.tags"
