package spec

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// conformanceDir finds Argo's example corpus: $BRAID_CONFORMANCE_DIR, or
// ../shared/conformance beside the repository. Tests that need it skip
// when it is absent; the corpus is never copied into the repository.
func conformanceDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("BRAID_CONFORMANCE_DIR")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "conformance")
	}
	if _, err := os.Stat(filepath.Join(dir, "examples")); err != nil {
		if os.Getenv("BRAID_REQUIRE_CONFORMANCE") == "1" {
			t.Fatalf("conformance corpus not found at %s, and BRAID_REQUIRE_CONFORMANCE=1 (set BRAID_CONFORMANCE_DIR)", dir)
		}
		t.Skipf("conformance corpus not found at %s (set BRAID_CONFORMANCE_DIR)", dir)
	}
	return filepath.Join(dir, "examples")
}

// TestLintConformance lints all of Argo's examples together and expects no
// error: every one of them is a valid spec.
func TestLintConformance(t *testing.T) {
	dir := conformanceDir(t)
	res, err := LintPaths([]string{dir}, LintOptions{Mode: Strict})
	if err != nil {
		t.Fatal(err)
	}
	for _, is := range res.Issues {
		t.Errorf("%v", is)
	}
	if len(res.Files) < 200 {
		t.Errorf("only %d files found in %s", len(res.Files), dir)
	}
	t.Logf("%d files, %d objects, %d skipped, %d issues", len(res.Files), len(res.Objects), len(res.Skipped), len(res.Issues))
	for _, d := range res.Skipped {
		if d.Skipped == "" {
			t.Errorf("%s: %s skipped without a note", d.File, d.Kind)
		}
	}
}

func BenchmarkLintConformance(b *testing.B) {
	dir := conformanceDir(b)
	for b.Loop() {
		if _, err := LintPaths([]string{dir}, LintOptions{Mode: Strict}); err != nil {
			b.Fatal(err)
		}
	}
}
