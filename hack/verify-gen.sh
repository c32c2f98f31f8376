#!/usr/bin/env bash
# Fails when the generated DeepCopy code or CRDs differ from what the types
# generate now. It regenerates in place, so after a failure the tree holds the
# fresh files, ready to commit.
set -euo pipefail
cd "$(dirname "$0")/.."
files=(pkg/apis/v1alpha1/zz_generated.deepcopy.go manifests/base/crds/*.yaml)
before=$(sha256sum "${files[@]}")
./hack/gen.sh
after=$(sha256sum pkg/apis/v1alpha1/zz_generated.deepcopy.go manifests/base/crds/*.yaml)
if [ "$before" != "$after" ]; then
  echo "generated files were stale and have been regenerated: review and commit them" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
echo "generated files are up to date"
