package main

import "strings"

// rule says which packages of the module one package (or subtree) may
// import. Patterns are module-relative: "internal/store" is that package
// alone, "internal/store/..." is it and everything below it, and "*" is any
// package of the module.
type rule struct {
	// pkg is the pattern of the packages the rule applies to. The most
	// specific matching rule wins.
	pkg string
	// allow lists the module packages that pkg may import.
	allow []string
	// deny lists imports that are forbidden even when allow would match, each
	// with the reason printed with the violation.
	deny []deny
	// testAllow lists what the package's own (in-package) test files may
	// import on top of allow: the real dependencies its tests run against.
	// It takes precedence over deny for test files only.
	testAllow []string
	// kube is true for the packages that may import Kubernetes client
	// libraries (kubeClientPrefixes). API types (k8s.io/api,
	// k8s.io/apimachinery) are allowed everywhere: pkg/apis is built on them.
	kube bool
}

// deny is one forbidden import pattern and why.
type deny struct {
	pkg string
	why string
}

// kubeClientPrefixes are the import paths that talk to a Kubernetes
// apiserver. Only the Kubernetes backends and the wiring may import them.
var kubeClientPrefixes = []string{"k8s.io/client-go", "sigs.k8s.io/controller-runtime", "k8s.io/kubernetes"}

// apiTypes is what every layer may import: the Argo-compatible types, the
// small pure helpers of pkg/ that go with them, and internal/step, the pure
// data of one step that the engine, the controller, the runtimes and the
// executor pass between them.
var apiTypes = []string{"pkg/apis/...", "pkg/wirecodec", "pkg/nodeselector", "internal/step"}

// testOnly are the helpers and contracts the module's tests share: any
// in-package test file may import them (unless a deny of its rule matches),
// and no other file may.
var testOnly = []string{"internal/testutil", "internal/store/storetest"}

// Reasons shared by several rules.
const (
	whyApp     = "internal/app is the wiring: only cmd/ and internal/cli import it"
	whyCLI     = "internal/cli is the top of the tree: only cmd/ imports it"
	whyServer  = "the server and the controller are peers; neither imports the other's top package"
	whyBackend = "concrete store backends are chosen by the wiring (internal/app, internal/cli); use the internal/store interfaces"
)

// topDenies are added to every rule but those of cmd/, internal/cli and
// internal/app: nothing imports the wiring or the CLI.
var topDenies = []deny{{"internal/app/...", whyApp}, {"internal/cli/...", whyCLI}}

// rules is the layering, top to bottom. Arrows point down only:
// cli -> app -> server/controller -> runtime/executor/store/artifact ->
// engine -> spec/expr -> pkg/apis.
var rules = []rule{
	{pkg: "cmd/...", allow: []string{"*"}, kube: true},
	{pkg: "internal/cli/...", allow: []string{"*"}, kube: true},
	{pkg: "internal/app/...", allow: []string{"*"}, kube: true,
		deny: []deny{{"internal/cli/...", whyCLI}}},
	// Developer tools and end-to-end tests drive the whole program.
	{pkg: "hack/...", allow: []string{"*"}, kube: true},
	{pkg: "test/...", allow: []string{"*"}, kube: true},

	{pkg: "internal/server/...", allow: join(apiTypes, "pkg/apiclient/...", "internal/server/...",
		"internal/spec", "internal/expr", "internal/synclock", "internal/store", "internal/artifact",
		"internal/wfops", "internal/config", "internal/version", "internal/ui",
		// Pure schedule and backfill functions of the cron controller.
		"internal/controller/cron"),
		deny: []deny{
			{"internal/store/sqlite", whyBackend},
			{"internal/store/postgres", whyBackend},
			{"internal/store/kube", whyBackend},
			{"internal/printer", "the printer formats for a terminal: the CLI's job, not the server's"},
			{"internal/controller", whyServer},
			{"internal/engine", "the server never reconciles: it stores, and the controller drives"},
			{"internal/runtime/...", "the server never starts steps: the controller drives the runtime"},
			{"internal/executor/...", "the executor runs around a step, never in the server"},
		},
		testAllow: []string{"internal/store/sqlite", "internal/runtime/local", "internal/artifact/file",
			"internal/controller", "internal/controller/cron"}},
	{pkg: "internal/server/auth/kubeauth", allow: []string{"internal/server/auth"}, kube: true},
	{pkg: "internal/server/auth/sso", allow: []string{"internal/server/auth", "internal/config"}},

	{pkg: "internal/controller/...", allow: join(apiTypes, "internal/controller/...",
		"internal/engine", "internal/spec", "internal/expr", "internal/synclock",
		"internal/store", "internal/runtime", "internal/artifact", "internal/config"),
		deny: []deny{
			{"internal/wfops", "wfops holds the user's operations (retry, resubmit, ...), applied by the server"},
			{"internal/executor/...", "the executor runs inside a step; the controller talks to the runtime"},
			{"internal/server/...", whyServer},
			{"internal/store/sqlite", whyBackend},
			{"internal/store/postgres", whyBackend},
			{"internal/store/kube", whyBackend},
		},
		testAllow: []string{"internal/store/sqlite", "internal/runtime/local"}},
	// Cron's concurrencyPolicy Replace terminates the running workflows: the
	// very operation the API's terminate applies, said once in wfops.
	{pkg: "internal/controller/cron", allow: join(apiTypes, "internal/controller/cron",
		"internal/spec", "internal/expr", "internal/store", "internal/wfops"),
		deny: []deny{
			{"internal/executor/...", "the executor runs inside a step; the controller talks to the runtime"},
			{"internal/server/...", whyServer},
			{"internal/store/sqlite", whyBackend},
			{"internal/store/postgres", whyBackend},
			{"internal/store/kube", whyBackend},
		},
		testAllow: []string{"internal/store/sqlite"}},

	{pkg: "internal/runtime", allow: apiTypes},
	{pkg: "internal/runtime/local/...", allow: join(apiTypes, "internal/runtime", "internal/runtime/local/...",
		"internal/executor/...", "internal/artifact/...", "internal/image/...", "internal/builtins",
		"internal/config", "internal/expr")},
	{pkg: "internal/runtime/supervisor", allow: join(apiTypes, "internal/runtime"),
		testAllow: []string{"internal/runtime/local", "internal/testutil"}},
	{pkg: "internal/runtime/kube/...", kube: true, allow: join(apiTypes, "internal/runtime",
		"internal/runtime/kube/...", "internal/executor/...", "internal/artifact/...", "internal/config",
		"internal/expr")},
	{pkg: "internal/executor/...", allow: join(apiTypes, "internal/executor/...", "internal/artifact/...",
		"internal/expr", "internal/image/...", "internal/builtins", "internal/config")},

	{pkg: "internal/store", allow: apiTypes},
	{pkg: "internal/store/sqlite", allow: join(apiTypes, "internal/store")},
	{pkg: "internal/store/postgres", allow: join(apiTypes, "internal/store")},
	{pkg: "internal/store/kube", allow: join(apiTypes, "internal/store"), kube: true},
	{pkg: "internal/store/storetest", allow: join(apiTypes, "internal/store")},
	{pkg: "internal/artifact/...", allow: join(apiTypes, "internal/artifact/...")},

	{pkg: "internal/config", allow: join(apiTypes, "internal/engine", "internal/spec", "internal/expr",
		"internal/synclock", "internal/image"),
		deny: []deny{{"internal/executor/...", "config is parsed first and passed down: it sits below the executor"}}},
	{pkg: "internal/wfops", allow: join(apiTypes, "internal/spec", "internal/expr")},
	{pkg: "internal/printer", allow: apiTypes},

	// The engine: pure decisions over the API types, the step data, the
	// expression language, the specs and the lock table; nothing else.
	{pkg: "internal/engine/...", allow: []string{"pkg/apis/...", "internal/step", "internal/engine/...",
		"internal/expr", "internal/spec", "internal/synclock"},
		deny: []deny{
			{"internal/store/...", "the engine is pure: it never reads or writes the store"},
			{"internal/runtime/...", "the engine is pure: it never starts steps"},
			{"internal/server/...", "the engine is pure: the server sits above it"},
			{"internal/controller/...", "the engine is pure: the controller sits above it"},
		}},
	{pkg: "internal/synclock", allow: apiTypes},
	{pkg: "internal/step", allow: []string{"pkg/apis/..."}},
	{pkg: "internal/spec", allow: join(apiTypes, "internal/expr")},
	{pkg: "internal/expr", allow: apiTypes},

	// Leaves: standard library and third-party code only.
	{pkg: "internal/image/...", allow: []string{"internal/image/..."}},
	{pkg: "internal/builtins"},
	{pkg: "internal/ui"},
	{pkg: "internal/version"},
	{pkg: "internal/testutil"},

	// The public API never reaches into internal/.
	{pkg: "pkg/...", allow: []string{"pkg/..."}},
}

// join returns a new slice of base followed by more.
func join(base []string, more ...string) []string {
	return append(append([]string(nil), base...), more...)
}

// match reports whether the module-relative package path p matches pattern.
func match(pattern, p string) bool {
	if pattern == "*" {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

// specificity orders patterns: an exact path beats a subtree of the same
// length, and a longer one beats a shorter one.
func specificity(pattern string) int {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return 2 * len(base)
	}
	return 2*len(pattern) + 1
}

// ruleFor returns the most specific rule for the package p, or false when
// no rule covers it.
func ruleFor(p string) (rule, bool) {
	best, found := rule{}, false
	for _, r := range rules {
		if match(r.pkg, p) && (!found || specificity(r.pkg) > specificity(best.pkg)) {
			best, found = r, true
		}
	}
	return best, found
}

// isTop reports whether the rule belongs to the packages allowed to import
// the wiring and the CLI.
func isTop(r rule) bool {
	return r.pkg == "cmd/..." || r.pkg == "internal/cli/..." || r.pkg == "internal/app/..."
}

// checkImport returns why the package governed by r may not import the
// module package imp, or "" when it may. test is true for an in-package
// test file.
func checkImport(r rule, imp string, test bool) string {
	if !test && anyMatch(testOnly, imp) {
		return "a helper of the tests: only test files import it"
	}
	if test && anyMatch(r.testAllow, imp) {
		return ""
	}
	denies := r.deny
	if !isTop(r) {
		denies = append(append([]deny(nil), r.deny...), topDenies...)
	}
	for _, d := range denies {
		if match(d.pkg, imp) {
			return d.why
		}
	}
	if anyMatch(r.allow, imp) || test && anyMatch(testOnly, imp) {
		return ""
	}
	if len(r.allow) == 0 {
		return "a leaf package: it imports no other package of the module"
	}
	return "not below it in the layering (allowed: " + strings.Join(r.allow, ", ") + ")"
}

// anyMatch reports whether p matches one of patterns.
func anyMatch(patterns []string, p string) bool {
	for _, pat := range patterns {
		if match(pat, p) {
			return true
		}
	}
	return false
}

// isKubeClient reports whether the import path is a Kubernetes client library.
func isKubeClient(imp string) bool {
	for _, p := range kubeClientPrefixes {
		if imp == p || strings.HasPrefix(imp, p+"/") {
			return true
		}
	}
	return false
}
