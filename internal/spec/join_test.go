package spec

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// JoinWorkflowSpec merges as Argo's workflowTemplateRef does: the
// workflow over the template over the defaults, maps key by key, named
// lists element by element, suspend the workflow's own.
func TestJoinWorkflowSpec(t *testing.T) {
	for _, tc := range []struct {
		name, wf, tmpl, defaults, want string
	}{
		{name: "the template fills what the workflow leaves out",
			wf:   `{workflowTemplateRef: {name: t}}`,
			tmpl: `{entrypoint: main, serviceAccountName: sa, templates: [{name: main, container: {image: busybox}}]}`,
			want: `{workflowTemplateRef: {name: t}, entrypoint: main, serviceAccountName: sa, templates: [{name: main, container: {image: busybox}}]}`},
		{name: "a field the workflow sets wins",
			wf:   `{entrypoint: other, serviceAccountName: mine, activeDeadlineSeconds: 5}`,
			tmpl: `{entrypoint: main, serviceAccountName: sa, activeDeadlineSeconds: 60}`,
			want: `{entrypoint: other, serviceAccountName: mine, activeDeadlineSeconds: 5}`},
		{name: "parameters merge by name, keeping the template's enum",
			wf:   `{arguments: {parameters: [{name: a, value: "1"}, {name: c, value: "3"}]}}`,
			tmpl: `{arguments: {parameters: [{name: a, value: "0", enum: ["0", "1"]}, {name: b, value: "2"}]}}`,
			want: `{arguments: {parameters: [{name: a, value: "1", enum: ["0", "1"]}, {name: c, value: "3"}, {name: b, value: "2"}]}}`},
		{name: "artifacts merge by name",
			wf:   `{arguments: {artifacts: [{name: x, raw: {data: mine}}]}}`,
			tmpl: `{arguments: {artifacts: [{name: x, raw: {data: theirs}}, {name: y, raw: {data: why}}]}}`,
			want: `{arguments: {artifacts: [{name: x, raw: {data: mine}}, {name: y, raw: {data: why}}]}}`},
		{name: "maps and objects merge key by key",
			wf:   `{nodeSelector: {disk: ssd}, podMetadata: {labels: {team: a}}, ttlStrategy: {secondsAfterSuccess: 10}}`,
			tmpl: `{nodeSelector: {zone: z1, disk: hdd}, podMetadata: {labels: {app: x}}, ttlStrategy: {secondsAfterFailure: 99}}`,
			want: `{nodeSelector: {zone: z1, disk: ssd}, podMetadata: {labels: {app: x, team: a}}, ttlStrategy: {secondsAfterSuccess: 10, secondsAfterFailure: 99}}`},
		{name: "hooks merge by event",
			wf:   `{hooks: {exit: {template: mine}}}`,
			tmpl: `{hooks: {exit: {template: theirs}, running: {template: r, expression: "true"}}}`,
			want: `{hooks: {exit: {template: mine}, running: {template: r, expression: "true"}}}`},
		{name: "volumes merge by name; tolerations are replaced",
			wf:   `{volumes: [{name: v, emptyDir: {medium: Memory}}], tolerations: [{key: mine}]}`,
			tmpl: `{volumes: [{name: v, emptyDir: {}}, {name: w, emptyDir: {}}], tolerations: [{key: a}, {key: b}]}`,
			want: `{volumes: [{name: v, emptyDir: {medium: Memory}}, {name: w, emptyDir: {}}], tolerations: [{key: mine}]}`},
		{name: "suspend is the workflow's own",
			wf:   `{entrypoint: main}`,
			tmpl: `{suspend: true}`,
			want: `{entrypoint: main}`},
		{name: "defaults lie under the template",
			wf:       `{serviceAccountName: mine}`,
			tmpl:     `{podGC: {strategy: OnPodSuccess}}`,
			defaults: `{serviceAccountName: d, podGC: {strategy: OnWorkflowCompletion}, ttlStrategy: {secondsAfterCompletion: 60}}`,
			want:     `{serviceAccountName: mine, podGC: {strategy: OnPodSuccess}, ttlStrategy: {secondsAfterCompletion: 60}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wf, want := specOf(t, tc.wf), specOf(t, tc.want)
			got, err := JoinWorkflowSpec(wf, specOf(t, tc.tmpl), specOf(t, tc.defaults))
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got, want) {
				g, _ := yaml.Marshal(got)
				w, _ := yaml.Marshal(want)
				t.Fatalf("joined:\n%s\nwant:\n%s", g, w)
			}
			if again := specOf(t, tc.wf); !equality.Semantic.DeepEqual(wf, again) {
				t.Fatalf("the workflow's spec changed")
			}
		})
	}
}

func specOf(t *testing.T, doc string) *v1alpha1.WorkflowSpec {
	t.Helper()
	if doc == "" {
		return nil
	}
	s := &v1alpha1.WorkflowSpec{}
	if err := yaml.UnmarshalStrict([]byte(doc), s); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return s
}

// A workflow that names a template keeps its spec; the joined spec goes
// to status.storedWorkflowTemplateSpec and ExecSpec returns it.
func TestResolveWorkflowTemplateRefStores(t *testing.T) {
	tmpl := &v1alpha1.WorkflowTemplate{}
	tmpl.Name, tmpl.Spec = "t", *specOf(t, `{entrypoint: main, arguments: {parameters: [{name: p, value: d}]}, templates: [{name: main, container: {image: busybox}}]}`)
	cat := NewCatalog([]*Document{{Object: tmpl}})
	wf := &v1alpha1.Workflow{Spec: *specOf(t, `{workflowTemplateRef: {name: t}, arguments: {parameters: [{name: p, value: mine}]}}`)}
	if err := ResolveWorkflowTemplateRef(wf, cat); err != nil {
		t.Fatal(err)
	}
	if wf.Spec.Entrypoint != "" || len(wf.Spec.Templates) != 0 {
		t.Fatalf("the spec changed: %+v", wf.Spec)
	}
	s := wf.ExecSpec()
	if s != wf.Status.StoredWorkflowSpec || s.Entrypoint != "main" || len(s.Templates) != 1 || *s.Arguments.Parameters[0].Value != "mine" {
		t.Fatalf("exec spec %+v", s)
	}
	if wf.Labels["workflows.argoproj.io/workflow-template"] != "t" {
		t.Fatalf("labels %v", wf.Labels)
	}
	wf.Spec.WorkflowTemplateRef.Name = "gone"
	wf.Status.StoredWorkflowSpec = nil
	if err := ResolveWorkflowTemplateRef(wf, cat); err == nil || err.Error() != `WorkflowTemplate "gone" not found` {
		t.Fatalf("missing template: %v", err)
	}
}

// FuzzJoinWorkflowSpec joins two specs read leniently from arbitrary
// YAML: a merge may fail, with an error, but never panic, and a workflow
// joined over nothing keeps its own fields.
func FuzzJoinWorkflowSpec(f *testing.F) {
	f.Add(`{arguments: {parameters: [{name: a, value: "1"}]}, hooks: {exit: {template: x}}}`,
		`{entrypoint: main, arguments: {parameters: [{name: a, enum: ["1"]}]}, volumes: [{name: v, emptyDir: {}}]}`)
	f.Add(`{arguments: {parameters: [{value: nameless}]}}`, `{arguments: {parameters: [{name: a}]}}`)
	f.Add(`{nodeSelector: {a: b}, tolerations: [{key: k}]}`, `{nodeSelector: null, podGC: {strategy: OnPodSuccess}}`)
	f.Fuzz(func(t *testing.T, ours, theirs string) {
		wf, tmpl := &v1alpha1.WorkflowSpec{}, &v1alpha1.WorkflowSpec{}
		if yaml.Unmarshal([]byte(ours), wf) != nil || yaml.Unmarshal([]byte(theirs), tmpl) != nil {
			return
		}
		_, _ = JoinWorkflowSpec(wf, tmpl, tmpl)
		if alone, err := JoinWorkflowSpec(wf, nil, nil); err == nil && alone.Entrypoint != wf.Entrypoint {
			t.Fatalf("joined over nothing, the entrypoint changed: %q to %q", wf.Entrypoint, alone.Entrypoint)
		}
	})
}
