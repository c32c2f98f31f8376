#!/usr/bin/env bash
# Fails when a generated file differs from what its sources generate now:
# the DeepCopy code and CRDs (hack/gen.sh), and the protos and API code
# (hack/protogen.sh: api/proto/third_party, api/proto/braid/v1alpha1 and
# pkg/apiclient/<svc>/*.msg.go, routes.gen.go, *_grpc.pb.go). A generated file
# that should not exist (left over from a deleted proto) counts as stale too.
# It regenerates in place, so after a failure the tree holds the fresh files,
# ready to commit.
set -euo pipefail
cd "$(dirname "$0")/.."

generated() {
  {
    ls pkg/apis/v1alpha1/zz_generated.deepcopy.go manifests/base/crds/*.yaml
    find api/proto/third_party api/proto/braid/v1alpha1 -type f
    find pkg/apiclient -type f \( -name '*.pb.go' -o -name '*.pb.gw.go' -o -name '*.msg.go' -o -name 'routes.gen.go' \)
  } | LC_ALL=C sort | xargs sha256sum
}

before=$(generated)
./hack/gen.sh
./hack/protogen.sh
after=$(generated)
if [ "$before" != "$after" ]; then
  echo "generated files were stale and have been regenerated: review and commit them" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
echo "generated files are up to date"
