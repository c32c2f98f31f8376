#!/usr/bin/env bash
# Installs and starts whatever the tests need. Today they need only Go and
# the module proxy; later issues add MinIO, PostgreSQL and a Kubernetes node
# here, each started on 127.0.0.1 and stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null || { echo "go is not on PATH" >&2; exit 1; }
go mod download
