# braid: the one place that says how to build, test and measure.
SHELL := /bin/bash
GO ?= go
BIN := bin/braid
PKG := github.com/braidwf/braid
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -s -w -X $(PKG)/internal/version.version=$(VERSION) \
	-X $(PKG)/internal/version.gitCommit=$(COMMIT) -X $(PKG)/internal/version.buildDate=$(DATE)
# Argo's example corpus lives beside the repository; tests skip what needs it when it is absent.
BRAID_CONFORMANCE_DIR ?= $(abspath $(CURDIR)/../shared/conformance)
export BRAID_CONFORMANCE_DIR
EXAMPLE ?= examples/hello-world.yaml
FUZZTIME ?= 60s
BENCHCOUNT ?= 6

.PHONY: all build test unit lint lint-arch vet fmt-check run conformance bench fuzz generate verify-generated clean \
	minio-up minio-down kube-up kube-down kube-images bench-kube compat ui verify-ui bench-ui

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/braid
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $(dir $(BIN))braid-nsinit ./internal/runtime/local/nsinit

## test: every test (test/compat drives the server with Argo's own Go client, in a module of its own), after starting what the tests need (hack/test-deps.sh; hack/kube/test.sh brings up a one-node Kubernetes and PostgreSQL for the Kubernetes backend's tests and stops them).
test: vet fmt-check lint-arch verify-generated verify-ui
	./hack/test-deps.sh
	BRAID_REQUIRE_MINIO=1 BRAID_REQUIRE_CONFORMANCE=1 $(GO) test -count=1 $$($(GO) list ./... | grep -v /test/e2e)
	$(MAKE) --no-print-directory build
	./hack/cli-smoke.sh $(BIN)
	cd test/compat && BRAID_REQUIRE_CONFORMANCE=1 BRAID_BIN=$(abspath $(BIN)) $(GO) test -count=1 -timeout 15m ./...
	BRAID_REQUIRE_MINIO=1 BRAID_REQUIRE_CONFORMANCE=1 BRAID_REQUIRE_SSO=1 BRAID_REQUIRE_UI=1 BRAID_BIN=$(abspath $(BIN)) $(GO) test -count=1 -timeout 40m ./test/e2e/
	./hack/manifests.sh --check
	./hack/kube/test.sh $(BIN)

## ui: build the web UI from ui/ (TypeScript, npm's locked packages) into internal/ui/dist, which braid embeds; commit the result.
ui:
	@command -v npm >/dev/null || { echo "make ui needs Node.js and npm (Debian: apt-get install nodejs npm)"; exit 1; }
	cd ui && npm ci --no-audit --no-fund --loglevel=error && npm run --silent check && npm run --silent build

## verify-ui: rebuild the UI and fail if the committed build (internal/ui/dist) differs from it.
verify-ui: ui
	@if [ -n "$$(git status --porcelain -- internal/ui/dist)" ]; then \
		echo "internal/ui/dist is not the build of ui/: run make ui and commit it"; git status --short -- internal/ui/dist; exit 1; fi

## bench-ui: the UI in headless Chromium: a 10,000-node workflow's graph (time to draw, pan and zoom fps), a node's change on an open page, the list's first page of 10,000 workflows, the initial JavaScript's size.
bench-ui: build
	set -o pipefail; BRAID_UI_BENCH=1 BRAID_BIN=$(abspath $(BIN)) $(GO) test -count=1 -timeout 60m -run '^TestUIBench$$' -v ./test/e2e/ | grep -E '^\s+ui_bench_test.go|^(ok|FAIL|---)'

## minio-up: start a MinIO on 127.0.0.1 (random port and credentials); prints `export` lines.
minio-up:
	@./hack/minio.sh up

## minio-down: stop the MinIO that minio-up started, by its PID.
minio-down:
	@./hack/minio.sh down

## kube-up: a one-node Kubernetes on 127.0.0.1 (hack/kube/up.sh); the last line is `export KUBECONFIG=...`.
kube-up:
	@./hack/kube/up.sh

## kube-down: stop what kube-up started, by its pid files, and undo its mounts and network.
kube-down:
	@./hack/kube/down.sh

## kube-images: build braid:dev and the busybox-based test images and import them into the node's containerd.
kube-images:
	@./hack/kube/images.sh

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## lint-arch: the architecture rules (hack/lintarch): which package may import which, files of at most 800 lines and functions of at most 80 (tests and generated code aside).
lint-arch:
	$(GO) run ./hack/lintarch

lint: vet fmt-check lint-arch verify-generated

## run: braid on an example.
run: build
	$(BIN) run $(EXAMPLE)

## conformance: lint Argo's 217 examples, run the host-runnable ones with braid run, and the template, cron, event, sync and memo ones through braid server.
conformance: build
	./hack/conformance.sh $(BIN) "$(BRAID_CONFORMANCE_DIR)"
	BRAID_BIN=$(abspath $(BIN)) $(GO) test -count=1 -timeout 45m -run '^TestConformance(Artifacts|Server)?$$' -v ./test/e2e/

## bench: braid against GNU make on the same graphs (W1, W2, W5), API throughput (W6), the Kubernetes backend's K1 and K2 when $$KUBECONFIG reaches a node (else skipped with a message), then the package benchmarks.
bench: build
	$(GO) run ./test/bench -braid $(BIN) -runs 3
	$(GO) run ./test/bench/kube -braid $(BIN) -optional
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCHCOUNT) ./internal/...

## bench-kube: the Kubernetes backend's benchmarks on the node of `make kube-up` (started if it is not up): K1 a 100-step chain run by `braid controller`, K2 DAGs of 200 and 2,000 no-op steps (test/bench/kube). The braid:dev image should hold the same build (make kube-images).
bench-kube: build
	KUBECONFIG=$$(./hack/kube/up.sh | tail -1 | sed 's/^export KUBECONFIG=//') $(GO) run ./test/bench/kube -braid $(BIN)

## compat: Argo's Go client (test/compat, a module of its own) against braid server, over gRPC and HTTP/1.
compat: build
	cd test/compat && BRAID_BIN=$(abspath $(BIN)) $(GO) test -count=1 -timeout 15m ./...

fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzLoadValidate$$' -fuzztime $(FUZZTIME) ./internal/spec/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeWorkflow$$' -fuzztime $(FUZZTIME) ./pkg/wirecodec/

generate:
	./hack/gen.sh

verify-generated:
	./hack/verify-gen.sh

clean:
	rm -rf bin
