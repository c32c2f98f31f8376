#!/usr/bin/env bash
# Regenerates the code and manifests derived from pkg/apis/v1alpha1:
#   pkg/apis/v1alpha1/zz_generated.deepcopy.go  (DeepCopy methods)
#   manifests/base/crds/argoproj.io_*.yaml      (one CRD per kind)
# The controller-gen version is pinned here; `go run pkg@version` leaves go.mod alone.
# Running it twice in a row must give no diff (make verify-generated checks that).
set -euo pipefail
cd "$(dirname "$0")/.."

CONTROLLER_GEN=${CONTROLLER_GEN:-"go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0"}
CRD_DIR=manifests/base/crds

# CRDs are generated and patched in a scratch directory, then moved into place,
# so the tree never holds a half-written manifest.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# maxDescLen=0: no descriptions, which keeps the Workflow CRD small enough to store.
# generateEmbeddedObjectMeta: keep name/labels/annotations of embedded metadata
# (workflowMetadata, volumeClaimTemplates, ...) instead of pruning them.
$CONTROLLER_GEN \
  object \
  crd:maxDescLen=0,generateEmbeddedObjectMeta=true \
  paths=./pkg/apis/... \
  output:crd:artifacts:config="$tmp"

gofmt -w pkg/apis/v1alpha1/zz_generated.deepcopy.go

# Argo accepts specs that some Kubernetes core schemas would reject, so relax
# two "required" lists for `kubectl apply` to accept every Argo spec:
#   - a template's container (and script, sidecar, init and containerSet
#     containers) may omit "name": drop it from every Container-shaped schema
#     (one whose properties include terminationMessagePolicy);
#   - memoize.cache.configMap needs only a name: drop "key" there.
# controller-gen sorts keys, so a schema's "properties:" precedes its "required:".
for f in "$tmp"/argoproj.io_*.yaml; do
  awk '
    BEGIN { cacheind = -100 }
    function indent(s) { match(s, /^ */); return RLENGTH }
    function dropped(item) {
      return (dropname && item ~ /^ *- name$/) || (dropkey && item ~ /^ *- key$/)
    }
    function flush(   i, kept) {
      kept = 0
      for (i = 1; i <= n; i++) if (!dropped(items[i])) kept++
      if (kept > 0) {
        print reqline
        for (i = 1; i <= n; i++) if (!dropped(items[i])) print items[i]
      }
      inreq = 0; n = 0
    }
    {
      ind = indent($0); key = substr($0, ind + 1)
      if (inreq) {
        if (ind == reqind && key ~ /^- /) { items[++n] = $0; next }
        flush()
      }
      if (key == "properties:") container[ind] = 0
      if (key == "terminationMessagePolicy:") container[ind - 2] = 1
      if (key == "cache:") cacheind = ind
      if (key == "configMap:" && ind == cacheind + 4) cachecm[ind + 2] = 1
      if (key == "required:" && (container[ind] || cachecm[ind])) {
        dropname = container[ind]; dropkey = cachecm[ind]
        container[ind] = 0; cachecm[ind] = 0
        inreq = 1; reqind = ind; reqline = $0; n = 0; next
      }
      print
    }
    END { if (inreq) flush() }
  ' "$f" >"$f.tmp"
  mv "$f.tmp" "$f"
done

mkdir -p "$CRD_DIR"
rm -f "$CRD_DIR"/argoproj.io_*.yaml
mv "$tmp"/argoproj.io_*.yaml "$CRD_DIR"/
