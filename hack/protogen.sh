#!/usr/bin/env bash
# Regenerates the gRPC / grpc-gateway code in pkg/apiclient from api/proto.
# Offline apart from the Go module proxy: tools are built with `go install` at
# pinned versions into ./bin/tools, and the googleapis protos it needs are
# vendored under api/proto/third_party (copied from the grpc-gateway module).
# Idempotent: running it twice produces the same tree.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)

BUF_VERSION=v1.75.0
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2
GRPC_GATEWAY_VERSION=v2.33.0
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
install_tool "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION" protoc-gen-go
install_tool "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION" protoc-gen-go-grpc
install_tool "github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@$GRPC_GATEWAY_VERSION" protoc-gen-grpc-gateway

# Vendor google/api/{annotations,http}.proto. grpc-gateway v2 no longer ships
# them; its v1.16.0 module does (third_party/googleapis), so copy them from there.
GW_DIR=$(GOFLAGS=-mod=mod go mod download -json "github.com/grpc-ecosystem/grpc-gateway@$GOOGLEAPIS_FROM_GATEWAY_V1" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
THIRD="$ROOT/api/proto/third_party/google/api"
mkdir -p "$THIRD"
for f in annotations.proto http.proto; do
  src=$(find "$GW_DIR" -path "*google/api/$f" | head -n1)
  if [[ -z "$src" ]]; then
    echo "protogen: google/api/$f not found in $GW_DIR" >&2
    exit 1
  fi
  install -m 0644 "$src" "$THIRD/$f"
done

# Generate. Remove the previous output first so deleted protos leave nothing behind.
mkdir -p "$ROOT/pkg/apiclient"
find "$ROOT/pkg/apiclient" -type f \( -name '*.pb.go' -o -name '*.pb.gw.go' \) -delete
cd "$ROOT/api/proto"
PATH="$TOOLS:$PATH" "$TOOLS/buf" generate
gofmt -w "$ROOT/pkg/apiclient"
