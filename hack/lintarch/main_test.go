package main

import (
	"strings"
	"testing"
)

// TestRunTestdata runs the checker on testdata/mod, a module with one
// violation of each kind and, next to each, a case at the limit or exempt:
// a function of exactly 80 lines, a generated file of 900 lines with a long
// function, a long function in a test file, an external test package that
// imports upwards, and cmd/ importing internal/app.
func TestRunTestdata(t *testing.T) {
	var out strings.Builder
	n, err := run("testdata/mod", &out)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	want := `internal/engine/big.go:1: file has 805 lines (at most 800)
internal/engine/engine.go:7: internal/engine must not import internal/store: the engine is pure: it never reads or writes the store
internal/engine/engine_test.go:6: internal/engine must not import internal/server: the engine is pure: the server sits above it
internal/engine/long.go:86: func Long81 has 81 lines (at most 80)
internal/engine/long.go:170: func (*t).method has 85 lines (at most 80)
internal/newpkg/new.go:1: package internal/newpkg has no rule in hack/lintarch/rules.go: add one
internal/server/server.go:4: internal/server must not import internal/app: internal/app is the wiring: only cmd/ and internal/cli import it
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	if n != 7 {
		t.Errorf("run returned %d violations, want 7", n)
	}
}

// TestRuleFor checks that the most specific rule wins.
func TestRuleFor(t *testing.T) {
	for p, want := range map[string]string{
		"internal/server":                "internal/server/...",
		"internal/server/auth":           "internal/server/...",
		"internal/server/auth/kubeauth":  "internal/server/auth/kubeauth",
		"internal/runtime":               "internal/runtime",
		"internal/runtime/local/nsinit":  "internal/runtime/local/...",
		"internal/controller/cron":       "internal/controller/cron",
		"internal/controller/nosuch":     "internal/controller/...",
		"pkg/apis/v1alpha1":              "pkg/...",
		"internal/artifact/s3/miniotest": "internal/artifact/...",
	} {
		r, ok := ruleFor(p)
		if !ok || r.pkg != want {
			t.Errorf("ruleFor(%q) = %q, %v; want %q", p, r.pkg, ok, want)
		}
	}
	if _, ok := ruleFor("internal/nosuch"); ok {
		t.Errorf("ruleFor(internal/nosuch) found a rule")
	}
}

// TestCheckImport checks allow, deny, testAllow and the wiring rule.
func TestCheckImport(t *testing.T) {
	cases := []struct {
		from, imp string
		test, ok  bool
	}{
		{"internal/engine", "internal/expr", false, true},
		{"internal/engine", "internal/store", false, false},
		{"internal/engine", "internal/store/sqlite", true, false},
		{"internal/spec", "internal/engine", false, false},
		{"internal/server", "internal/store", false, true},
		{"internal/server", "internal/store/sqlite", false, false},
		{"internal/server", "internal/store/sqlite", true, true},
		{"internal/controller", "internal/wfops", false, false},
		{"internal/controller/cron", "internal/wfops", false, true}, // Replace terminates, as the API does
		{"internal/controller/cron", "internal/executor", false, false},
		{"internal/config", "internal/executor", false, false},
		{"internal/cli", "internal/app", false, true},
		{"cmd/braid", "internal/app", false, true},
		{"test/e2e", "internal/app", false, false},
		{"internal/app", "internal/cli", false, false},
		{"pkg/apiclient/workflow", "internal/spec", false, false},
		{"internal/version", "internal/expr", false, false},
		{"internal/runtime/local", "internal/testutil", true, true},
		{"internal/runtime/local", "internal/testutil", false, false},
		{"internal/store/sqlite", "internal/store/storetest", true, true},
		{"internal/engine", "internal/store/storetest", true, false},
	}
	for _, c := range cases {
		r, _ := ruleFor(c.from)
		why := checkImport(r, c.imp, c.test)
		if (why == "") != c.ok {
			t.Errorf("%s -> %s (test %v): reason %q, want allowed=%v", c.from, c.imp, c.test, why, c.ok)
		}
	}
}

// TestKubeClient checks which packages may use a Kubernetes client.
func TestKubeClient(t *testing.T) {
	if !isKubeClient("k8s.io/client-go/kubernetes") || isKubeClient("k8s.io/api/core/v1") ||
		isKubeClient("k8s.io/apimachinery/pkg/apis/meta/v1") {
		t.Errorf("isKubeClient misclassifies")
	}
	for p, want := range map[string]bool{
		"internal/engine": false, "internal/store/kube": true, "internal/runtime/kube": true,
		"internal/server": false, "internal/server/auth/kubeauth": true, "internal/cli": true,
	} {
		if r, _ := ruleFor(p); r.kube != want {
			t.Errorf("%s: kube = %v, want %v", p, r.kube, want)
		}
	}
}
