package spec

import (
	"errors"
	"strings"
	"testing"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestLoadDocuments(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		mode    Mode
		kinds   []string // kinds of the loaded documents, in order
		skipped int
		wantErr string
	}{
		{"multi-document YAML with empty documents", `---
# only a comment
---
apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: a}
spec: {templates: [{name: m, suspend: {}}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {k: v}
---
apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: c}
spec: {schedules: ["@hourly"], workflowSpec: {entrypoint: m, templates: [{name: m, suspend: {}}]}}
`, Strict, []string{"WorkflowTemplate", "ConfigMap", "CronWorkflow"}, 1, ""},
		{"JSON", `{"apiVersion":"argoproj.io/v1alpha1","kind":"Workflow","metadata":{"name":"j"},
  "spec":{"entrypoint":"m","templates":[{"name":"m","container":{"image":"x"}}]}}`, Strict, []string{"Workflow"}, 0, ""},
		{"anchors and merge keys", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: m}
spec:
  entrypoint: m
  templates:
  - &base
    name: m
    container: {image: busybox}
  - <<: *base
    name: n
`, Strict, []string{"Workflow"}, 0, ""},
		{"lenient ignores unknown fields", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: l}
spec: {entrypoint: m, colour: blue, templates: [{name: m, suspend: {}}]}
`, Lenient, []string{"Workflow"}, 0, ""},
		{"strict rejects unknown fields", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: l}
spec: {entrypoint: m, colour: blue, templates: [{name: m, suspend: {}}]}
`, Strict, nil, 0, `spec.colour: unknown field "colour" (line 4)`},
		{"not a map", "- a\n- b\n", Strict, nil, 0, "document 1 is not a map"},
		{"alias bomb", "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: b}\n" +
			"x0: &a0 [1,1,1,1,1,1,1,1,1,1]\nx1: &a1 [*a0,*a0,*a0,*a0,*a0,*a0,*a0,*a0,*a0,*a0]\nx2: &a2 [*a1,*a1,*a1,*a1,*a1,*a1,*a1,*a1,*a1,*a1]\n" +
			"x3: &a3 [*a2,*a2,*a2,*a2,*a2,*a2,*a2,*a2,*a2,*a2]\nx4: &a4 [*a3,*a3,*a3,*a3,*a3,*a3,*a3,*a3,*a3,*a3]\nx5: &a5 [*a4,*a4,*a4,*a4,*a4,*a4,*a4,*a4,*a4,*a4]\n" +
			"x6: &a6 [*a5,*a5,*a5,*a5,*a5,*a5,*a5,*a5,*a5,*a5]\nx7: [*a6,*a6,*a6,*a6,*a6,*a6,*a6,*a6,*a6,*a6]\n",
			Strict, nil, 0, "aliases expand to more than 200000 values"},
		{"infinity", "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: b}\nspec: {entrypoint: .inf}\n", Strict, nil, 0, "cannot be represented in JSON"},
		{"bad quantity", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: q}
spec: {entrypoint: m, templates: [{name: m, container: {image: x, resources: {limits: {memory: lots}}}}]}
`, Strict, nil, 0, "quantities must match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := Load("f.yaml", []byte(tt.data), tt.mode)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("want error containing %q, got %v", tt.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			skipped := 0
			for _, d := range docs {
				kinds = append(kinds, d.Kind)
				if d.Object == nil {
					skipped++
				}
			}
			if strings.Join(kinds, ",") != strings.Join(tt.kinds, ",") || skipped != tt.skipped {
				t.Fatalf("kinds %v skipped %d; want %v skipped %d", kinds, skipped, tt.kinds, tt.skipped)
			}
		})
	}
}

func TestLoadTypedValues(t *testing.T) {
	docs, err := Load("f.yaml", []byte(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: v-}
spec:
  entrypoint: m
  parallelism: 2
  arguments:
    parameters:
    - {name: n, value: 1.50}
    - {name: b, value: true}
  templates:
  - name: m
    retryStrategy: {limit: "3"}
    steps:
    - - name: a
        template: m
        withItems: [1, "two", {k: v}]
`), Strict)
	if err != nil {
		t.Fatal(err)
	}
	w := docs[0].Object.(*v1alpha1.Workflow)
	if docs[0].Name != "v-" {
		t.Errorf("name %q, want the generateName", docs[0].Name)
	}
	if got := string(*w.Spec.Arguments.Parameters[0].Value); got != "1.5" {
		t.Errorf("number parameter = %q, want 1.5", got)
	}
	if got := string(*w.Spec.Arguments.Parameters[1].Value); got != "true" {
		t.Errorf("bool parameter = %q, want true", got)
	}
	if w.Spec.Parallelism.IntValue() != 2 || w.Spec.Templates[0].RetryStrategy.Limit.String() != "3" {
		t.Errorf("int-or-string fields not decoded: %v %v", w.Spec.Parallelism, w.Spec.Templates[0].RetryStrategy.Limit)
	}
	if got := string(w.Spec.Templates[0].Steps[0][0].WithItems[2].Value); got != `{"k":"v"}` {
		t.Errorf("map item = %s", got)
	}
	if line := docs[0].LineOf("spec.templates[0].steps[0][0].withItems"); line != 17 {
		t.Errorf("LineOf = %d, want 17", line)
	}
}

func TestLoadStrictScalarKinds(t *testing.T) {
	data := `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: s}
spec: {entrypoint: 42, templates: [{name: m, suspend: {}}]}
`
	_, err := Load("f.yaml", []byte(data), Strict)
	var issues Issues
	if !errors.As(err, &issues) || !strings.Contains(err.Error(), `spec.entrypoint: expected a string, got the number "42"`) {
		t.Fatalf("strict: %v", err)
	}
	docs, err := Load("f.yaml", []byte(data), Lenient)
	if err != nil {
		t.Fatalf("lenient: %v", err)
	}
	if got := docs[0].Object.(*v1alpha1.Workflow).Spec.Entrypoint; got != "42" {
		t.Fatalf("lenient entrypoint = %q", got)
	}
}

// LoadNoLines reads what Load reads and reports the same issues, but its
// documents keep no YAML tree, so Validate's issues have no line.
func TestLoadNoLines(t *testing.T) {
	data := []byte(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: n-}
spec:
  entrypoint: m
  templates:
  - name: m
    container: {image: busybox, args: ["{{inputs.parameters.x}}"]}
`)
	withLines, err := Load("n.yaml", data, Strict)
	if err != nil {
		t.Fatal(err)
	}
	noLines, err := LoadNoLines("n.yaml", data, Strict)
	if err != nil {
		t.Fatal(err)
	}
	a, b := Validate(withLines[0], nil), Validate(noLines[0], nil)
	if len(a) != 1 || len(b) != 1 || a[0].Line != 8 || b[0].Line != 0 {
		t.Fatalf("issues with lines %v, without %v", a, b)
	}
	a[0].Line = 0
	if a[0] != b[0] || noLines[0].Name != "n-" || noLines[0].LineOf("spec") != 0 {
		t.Errorf("with lines %v, without %v (name %q)", a[0], b[0], noLines[0].Name)
	}
	if _, err := LoadNoLines("n.yaml", []byte(`{"apiVersion":"argoproj.io/v1alpha1","kind":"Workflow","metadata":{"name":"x"},"spec":{"entrypoint":1}}`), Strict); err == nil ||
		!strings.Contains(err.Error(), `spec.entrypoint: expected a string, got the number "1" (quote it) (line 1)`) {
		t.Errorf("a load issue keeps its line: %v", err)
	}
}
