package spec

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadValidate feeds arbitrary bytes through load and validation. Bad
// input must come back as issues, never as a panic or a hang.
func FuzzLoadValidate(f *testing.F) {
	f.Add([]byte(wf("", echo)))
	f.Add([]byte(wfTemplate))
	f.Add([]byte("a: &a [*a, *a]\n"))
	f.Add([]byte("kind: Workflow\napiVersion: argoproj.io/v1alpha1\nspec: {templates: [{name: x, steps: [[{name: a, inline: {steps: [[{}]]}}]]}]}\n"))
	f.Add([]byte(`{"apiVersion":"argoproj.io/v1alpha1","kind":"Workflow","spec":{"entrypoint":"m"}}`))
	{
		if files, err := SpecFiles([]string{conformanceSeedDir()}); err == nil {
			for _, name := range files {
				if data, err := os.ReadFile(name); err == nil {
					f.Add(data)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, _ := Load("fuzz.yaml", data, Strict)
		_ = ValidateAll(docs, docs)
		docs, _ = Load("fuzz.yaml", data, Lenient)
		issues := ValidateAll(docs, docs)
		for _, is := range issues {
			if is.Message == "" {
				t.Fatalf("issue without a message: %+v", is)
			}
		}
	})
}

func conformanceSeedDir() string {
	if dir := os.Getenv("BRAID_CONFORMANCE_DIR"); dir != "" {
		return filepath.Join(dir, "examples")
	}
	return filepath.Join("..", "..", "..", "shared", "conformance", "examples")
}
