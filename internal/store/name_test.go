package store

import (
	"strings"
	"testing"
)

func TestGenerateName(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		n := GenerateName("hello-")
		if len(n) != len("hello-")+5 || !strings.HasPrefix(n, "hello-") {
			t.Fatalf("GenerateName = %q", n)
		}
		for _, r := range n[len("hello-"):] {
			if !strings.ContainsRune(nameAlphabet, r) {
				t.Fatalf("GenerateName = %q: %q is not in the Kubernetes alphabet", n, r)
			}
		}
		seen[n] = true
	}
	if len(seen) < 990 {
		t.Errorf("only %d distinct names in 1000", len(seen))
	}
	if n := GenerateName(strings.Repeat("a", 100)); len(n) != 63 {
		t.Errorf("long prefix: len %d, want 63", len(n))
	}
}
