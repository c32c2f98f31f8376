package v1alpha1

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// conformanceDir locates Argo's example corpus: $BRAID_CONFORMANCE_DIR, or
// ../shared/conformance beside the repository root.
func conformanceDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("BRAID_CONFORMANCE_DIR"); dir != "" {
		return dir
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "conformance")
		}
		if filepath.Dir(dir) == dir {
			t.Fatalf("no go.mod above %s", wd)
		}
	}
}

// skipNoCorpus skips a test whose corpus directory is missing (err), or
// fails it when BRAID_REQUIRE_CONFORMANCE=1.
func skipNoCorpus(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("BRAID_REQUIRE_CONFORMANCE") == "1" {
		t.Fatalf("conformance corpus not found (%v), and BRAID_REQUIRE_CONFORMANCE=1; set BRAID_CONFORMANCE_DIR", err)
	}
	t.Skipf("conformance corpus not found (%v); set BRAID_CONFORMANCE_DIR", err)
}

// newObject returns an empty typed object for an Argo kind, or nil.
func newObject(kind string) any {
	switch kind {
	case WorkflowKind:
		return &Workflow{}
	case WorkflowTemplateKind:
		return &WorkflowTemplate{}
	case ClusterWorkflowTemplateKind:
		return &ClusterWorkflowTemplate{}
	case CronWorkflowKind:
		return &CronWorkflow{}
	case WorkflowEventBindingKind:
		return &WorkflowEventBinding{}
	}
	return nil
}

// TestConformanceRoundTrip decodes every Argo document of the example
// corpus strictly into the typed structs, encodes it again, and checks that
// no field of the original was lost or changed.
func TestConformanceRoundTrip(t *testing.T) {
	dir := filepath.Join(conformanceDir(t), "examples")
	if _, err := os.Stat(dir); err != nil {
		skipNoCorpus(t, err)
	}
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)

	checked := map[string]int{}
	for _, file := range files {
		rel, _ := filepath.Rel(dir, file)
		docs, err := splitDocuments(file)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		for i, doc := range docs {
			name := fmt.Sprintf("%s#%d", rel, i)
			kind, ok := roundTripDocument(t, name, doc)
			if ok {
				checked[kind]++
			}
		}
	}
	total := 0
	for _, n := range checked {
		total += n
	}
	if total == 0 {
		t.Fatalf("no Argo documents found under %s", dir)
	}
	t.Logf("round-tripped %d documents from %d files: %v", total, len(files), checked)
}

// splitDocuments returns the non-empty YAML documents of a file as JSON.
func splitDocuments(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var out [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := sigsyaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if t := bytes.TrimSpace(data); len(t) == 0 || string(t) == "null" {
			continue
		}
		out = append(out, data)
	}
}

// roundTripDocument checks one document; it reports whether the document
// was an Argo kind (and so was checked).
func roundTripDocument(t *testing.T, name string, data []byte) (string, bool) {
	t.Helper()
	original, err := decodeGeneric(data)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return "", false
	}
	m, _ := original.(map[string]any)
	kind, _ := m["kind"].(string)
	obj := newObject(kind)
	if obj == nil {
		return "", false
	}

	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(obj); err != nil {
		t.Errorf("%s: strict decode of %s: %v", name, kind, err)
		return kind, true
	}
	encoded, err := json.Marshal(obj)
	if err != nil {
		t.Errorf("%s: encode: %v", name, err)
		return kind, true
	}
	again, err := decodeGeneric(encoded)
	if err != nil {
		t.Errorf("%s: re-read: %v", name, err)
		return kind, true
	}
	want, _ := normalize(original)
	got, _ := normalize(again)
	var losses []string
	compareSubset("", want, got, &losses)
	for _, loss := range losses {
		t.Errorf("%s: %s", name, loss)
	}

	// Decoding what we wrote must give the same typed value.
	second := newObject(kind)
	if err := json.Unmarshal(encoded, second); err != nil {
		t.Errorf("%s: decode of re-encoded %s: %v", name, kind, err)
	} else if diff := cmp.Diff(obj, second); diff != "" {
		t.Errorf("%s: re-decoded %s differs (-first +second):\n%s", name, kind, diff)
	}
	return kind, true
}

func decodeGeneric(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// normalize drops nulls, empty strings and empty lists (the values
// omitempty may leave out), keeps {} and false, and turns every scalar into
// its string form. It reports whether the value is kept.
func normalize(v any) (any, bool) {
	switch v := v.(type) {
	case nil:
		return nil, false
	case string:
		return v, v != ""
	case bool:
		return strconv.FormatBool(v), true
	case json.Number:
		return formatNumber(v), true
	case []any:
		if len(v) == 0 {
			return nil, false
		}
		out := make([]any, len(v))
		for i, e := range v {
			// List elements keep their position even when empty.
			n, _ := normalize(e)
			out[i] = n
		}
		return out, true
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if n, keep := normalize(e); keep {
				out[k] = n
			}
		}
		return out, true
	}
	return fmt.Sprint(v), true
}

// compareSubset records every path of want that is missing from got or
// holds a different value.
func compareSubset(path string, want, got any, losses *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*losses = append(*losses, fmt.Sprintf("%s: want an object, got %s", orRoot(path), describe(got)))
			return
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			child := path + "." + k
			gv, ok := g[k]
			if !ok {
				*losses = append(*losses, fmt.Sprintf("%s: lost (was %s)", child, describe(w[k])))
				continue
			}
			compareSubset(child, w[k], gv, losses)
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			*losses = append(*losses, fmt.Sprintf("%s: want a list, got %s", orRoot(path), describe(got)))
			return
		}
		if len(g) != len(w) {
			*losses = append(*losses, fmt.Sprintf("%s: want %d elements, got %d", orRoot(path), len(w), len(g)))
			return
		}
		for i := range w {
			compareSubset(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], losses)
		}
	default:
		if !cmp.Equal(want, got) && !sameQuantity(want, got) {
			*losses = append(*losses, fmt.Sprintf("%s: want %s, got %s", orRoot(path), describe(want), describe(got)))
		}
	}
}

// sameQuantity accepts the one rewrite that is not a loss: Kubernetes
// writes a resource quantity in canonical form ("1024Mi" becomes "1Gi").
func sameQuantity(want, got any) bool {
	ws, ok1 := want.(string)
	gs, ok2 := got.(string)
	if !ok1 || !ok2 {
		return false
	}
	wq, err1 := resource.ParseQuantity(ws)
	gq, err2 := resource.ParseQuantity(gs)
	return err1 == nil && err2 == nil && wq.Cmp(gq) == 0
}

func orRoot(path string) string {
	if path == "" {
		return "."
	}
	return path
}

func describe(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(data)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return strings.ReplaceAll(s, "\n", `\n`)
}
