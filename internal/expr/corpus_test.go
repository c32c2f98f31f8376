package expr

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// corpusExamples is Argo's examples folder in the shared conformance corpus:
// $BRAID_CONFORMANCE_DIR/examples, or the corpus beside the repository
// (shared/conformance/README.md). The test skips without it, or fails when
// BRAID_REQUIRE_CONFORMANCE=1.
func corpusExamples(t *testing.T) string {
	t.Helper()
	dir := "../../../shared/conformance"
	if env := os.Getenv("BRAID_CONFORMANCE_DIR"); env != "" {
		dir = env
	}
	dir = filepath.Join(dir, "examples")
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("BRAID_REQUIRE_CONFORMANCE") == "1" {
			t.Fatalf("conformance corpus not found at %s, and BRAID_REQUIRE_CONFORMANCE=1 (set BRAID_CONFORMANCE_DIR)", dir)
		}
		t.Skipf("conformance corpus not found at %s", dir)
	}
	return dir
}

// TestCorpus checks every expression-like field of Argo's examples:
// depends and dependencies parse, expr-lang expressions and {{= }} bodies
// compile (Check), and `when` conditions evaluate once their tags are
// replaced by plain values.
func TestCorpus(t *testing.T) {
	corpusDir := corpusExamples(t)
	c := &corpusChecker{t: t, counts: make(map[string]int)}
	err := filepath.WalkDir(corpusDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		return c.file(path)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("checked %v", c.counts)
	for _, kind := range []string{"depends", "dependencies", "when", "expression", "tag"} {
		if c.counts[kind] == 0 {
			t.Errorf("the corpus gave no %s field; is the walk broken?", kind)
		}
	}
}

type corpusChecker struct {
	t      *testing.T
	name   string
	counts map[string]int
}

func (c *corpusChecker) file(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	c.name = filepath.Base(path)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		c.walk(&doc, "")
	}
}

// walk visits every mapping value, knowing its key and its parent's key.
func (c *corpusChecker) walk(n *yaml.Node, key string) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, k := range n.Content {
			c.walk(k, key)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			c.field(k, v, n)
			c.walk(v, k)
		}
	case yaml.ScalarNode:
		if strings.Contains(n.Value, "{{=") {
			c.tags(n.Value)
		}
	}
}

func (c *corpusChecker) field(key string, v *yaml.Node, parent *yaml.Node) {
	switch {
	case key == "depends" && v.Kind == yaml.ScalarNode:
		c.counts["depends"]++
		if _, err := ParseDepends(v.Value); err != nil {
			c.t.Errorf("%s: depends %q: %v", c.name, v.Value, err)
		}
	case key == "dependencies" && v.Kind == yaml.SequenceNode:
		c.counts["dependencies"]++
		var names []string
		for _, n := range v.Content {
			names = append(names, n.Value)
		}
		if _, err := DependenciesToDepends(names); err != nil {
			c.t.Errorf("%s: dependencies %q: %v", c.name, names, err)
		}
	case key == "when" && v.Kind == yaml.ScalarNode:
		c.counts["when"]++
		c.when(v.Value)
	case key == "expression" && v.Kind == yaml.ScalarNode,
		// An HTTP template's successCondition is expr-lang; a resource
		// template's is a label-selector-like test, not checked here.
		key == "successCondition" && v.Kind == yaml.ScalarNode && hasKey(parent, "url"):
		c.counts["expression"]++
		if err := Check(v.Value); err != nil {
			c.t.Errorf("%s: %s %q: %v", c.name, key, v.Value, err)
		}
	}
}

// hasKey reports whether a mapping has key k.
func hasKey(m *yaml.Node, k string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == k {
			return true
		}
	}
	return false
}

func (c *corpusChecker) tags(s string) {
	for _, tag := range Tags(s) {
		if tag.Expr {
			c.counts["tag"]++
			if err := Check(tag.Body); err != nil {
				c.t.Errorf("%s: {{=%s}}: %v", c.name, tag.Body, err)
			}
		}
	}
}

// wordTag matches a simple tag, which when() replaces by a plain word.
var wordTag = regexp.MustCompile(`\{\{[^=][^}]*\}\}`)

// when substitutes the tags of a condition with plain values, as the engine
// would, and evaluates it.
func (c *corpusChecker) when(w string) {
	s := wordTag.ReplaceAllString(w, "x")
	var b strings.Builder
	last := 0
	for _, tag := range Tags(s) {
		b.WriteString(s[last:tag.Start])
		b.WriteString("true")
		last = tag.End
	}
	b.WriteString(s[last:])
	if _, err := EvalWhen(b.String()); err != nil {
		c.t.Errorf("%s: when %q: %v", c.name, w, err)
	}
}
