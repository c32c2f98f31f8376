#!/usr/bin/env bash
# Regenerates the API code from api/proto, in this order:
#   1. api/proto/third_party: google/api/{annotations,http}.proto and the
#      Kubernetes generated.proto files the protos import, copied from the
#      module cache at the versions go.mod pins (k8s.io/api, apimachinery);
#   2. api/proto/braid/v1alpha1/generated.proto, written by
#      hack/gen-v1alpha1-proto from the Go types of pkg/apis/v1alpha1 and
#      their protobuf struct tags;
#   3. pkg/apiclient/<svc>/: <svc>.msg.go and routes.gen.go (protoc-gen-braid,
#      built from hack/protoc-gen-braid) and <svc>_grpc.pb.go
#      (protoc-gen-go-grpc), through buf.
# Offline apart from the Go module proxy: tools are built with `go install` at
# pinned versions into ./bin/tools.
# Idempotent: running it twice produces the same tree.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)

BUF_VERSION=v1.75.0
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2
GOOGLEAPIS_FROM_GATEWAY_V1=v1.16.0 # only its vendored google/api/*.proto are used

TOOLS="$ROOT/bin/tools"
mkdir -p "$TOOLS"

install_tool() { # pkg@version binary
  local pkg=$1 bin=$2 stamp="$TOOLS/.$2.version"
  if [[ -x "$TOOLS/$bin" && -f "$stamp" && "$(cat "$stamp")" == "$pkg" ]]; then
    return
  fi
  echo "protogen: installing $pkg" >&2
  GOBIN="$TOOLS" GOFLAGS=-mod=mod go install "$pkg"
  echo "$pkg" >"$stamp"
}

install_tool "github.com/bufbuild/buf/cmd/buf@$BUF_VERSION" buf
install_tool "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION" protoc-gen-go-grpc
# Ours, from this tree: rebuilt every run (the build cache makes it cheap).
go build -o "$TOOLS/protoc-gen-braid" ./hack/protoc-gen-braid

module_dir() { # module@version -> its directory in the module cache
  GOFLAGS=-mod=mod go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

THIRD="$ROOT/api/proto/third_party"

# google/api/{annotations,http}.proto. grpc-gateway v2 no longer ships them;
# its v1.16.0 module does (third_party/googleapis), so copy them from there.
GW_DIR=$(module_dir "github.com/grpc-ecosystem/grpc-gateway@$GOOGLEAPIS_FROM_GATEWAY_V1")
mkdir -p "$THIRD/google/api"
for f in annotations.proto http.proto; do
  src=$(find "$GW_DIR" -path "*google/api/$f" | head -n1)
  if [[ -z "$src" ]]; then
    echo "protogen: google/api/$f not found in $GW_DIR" >&2
    exit 1
  fi
  install -m 0644 "$src" "$THIRD/google/api/$f"
done

# The Kubernetes protos, at go.mod's versions. The whole k8s.io tree is
# rewritten so that a package dropped here leaves nothing behind.
vendor_k8s() { # module, then package directories inside it
  local mod=$1 version dir pkg
  shift
  version=$(go list -m -f '{{.Version}}' "$mod")
  dir=$(module_dir "$mod@$version")
  for pkg in "$@"; do
    if [[ ! -f "$dir/$pkg/generated.proto" ]]; then
      echo "protogen: $mod@$version has no $pkg/generated.proto" >&2
      exit 1
    fi
    mkdir -p "$THIRD/$mod/$pkg"
    install -m 0644 "$dir/$pkg/generated.proto" "$THIRD/$mod/$pkg/generated.proto"
  done
}
rm -rf "$THIRD/k8s.io"
vendor_k8s k8s.io/api core/v1 policy/v1
vendor_k8s k8s.io/apimachinery pkg/apis/meta/v1 pkg/runtime pkg/runtime/schema pkg/util/intstr pkg/api/resource

# The v1alpha1 messages, from the Go types.
go run ./hack/gen-v1alpha1-proto -o api/proto/braid/v1alpha1/generated.proto -services api/proto/braid

# Generate. Remove the previous output first so deleted protos leave nothing behind.
mkdir -p "$ROOT/pkg/apiclient"
find "$ROOT/pkg/apiclient" -type f \( -name '*.pb.go' -o -name '*.pb.gw.go' -o -name '*.msg.go' -o -name 'routes.gen.go' \) -delete
cd "$ROOT/api/proto"
PATH="$TOOLS:$PATH" "$TOOLS/buf" generate
find "$ROOT/pkg/apiclient" -type f \( -name '*.pb.go' -o -name '*.msg.go' -o -name 'routes.gen.go' \) -exec gofmt -w {} +
