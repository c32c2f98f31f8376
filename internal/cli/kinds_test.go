package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestIsUID(t *testing.T) {
	tests := map[string]bool{
		"7e1c5f3a-4a11-4d53-9a1f-2c1d0e9b8f00": true,
		"7E1C5F3A-4A11-4D53-9A1F-2C1D0E9B8F00": false,
		"7e1c5f3a-4a11-4d53-9a1f-2c1d0e9b8f0":  false,
		"7e1c5f3a04a11-4d53-9a1f-2c1d0e9b8f00": false,
		"hello-world-x7k2p":                    false,
		"":                                     false,
	}
	for in, want := range tests {
		if got := isUID(in); got != want {
			t.Errorf("isUID(%q) = %v", in, got)
		}
	}
}

func TestUnchanged(t *testing.T) {
	base := func() *v1alpha1.WorkflowTemplate {
		return &v1alpha1.WorkflowTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: "t", Labels: map[string]string{"a": "1"}},
			Spec:       v1alpha1.WorkflowSpec{Entrypoint: "main", Templates: []v1alpha1.Template{{Name: "main"}}},
		}
	}
	stored := base()
	stored.ResourceVersion, stored.Namespace = "7", "argo"
	stored.Labels["added-by-server"] = "x"
	stored.CreationTimestamp = metav1.NewTime(time.Unix(1, 0))

	tests := []struct {
		name   string
		change func(*v1alpha1.WorkflowTemplate)
		want   bool
	}{
		{"same", func(*v1alpha1.WorkflowTemplate) {}, true},
		{"spec differs", func(w *v1alpha1.WorkflowTemplate) { w.Spec.Entrypoint = "other" }, false},
		{"label value differs", func(w *v1alpha1.WorkflowTemplate) { w.Labels["a"] = "2" }, false},
		{"new label", func(w *v1alpha1.WorkflowTemplate) { w.Labels["b"] = "1" }, false},
		{"new annotation", func(w *v1alpha1.WorkflowTemplate) { w.Annotations = map[string]string{"n": "1"} }, false},
		{"fewer labels", func(w *v1alpha1.WorkflowTemplate) { w.Labels = nil }, true},
	}
	for _, tt := range tests {
		want := base()
		tt.change(want)
		got, err := unchanged(want, stored)
		if err != nil || got != tt.want {
			t.Errorf("%s: unchanged = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}

func TestWriteTmplList(t *testing.T) {
	objs := []spec.Object{
		&v1alpha1.WorkflowTemplate{ObjectMeta: metav1.ObjectMeta{Name: "build", Namespace: "argo"}},
		&v1alpha1.WorkflowTemplate{ObjectMeta: metav1.ObjectMeta{Name: "deploy-everything", Namespace: "default"}},
	}
	tests := []struct {
		output string
		all    bool
		want   string
	}{
		// Each name ends its cell with a tab, as in argo, so names are padded.
		{"", false, "NAME\nbuild               \ndeploy-everything   \n"},
		{"wide", true, "NAMESPACE   NAME\nargo        build               \ndefault     deploy-everything   \n"},
		{"name", true, "build\ndeploy-everything\n"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		if err := writeTmplList(streams{out: &out}, objs, tt.output, tt.all); err != nil {
			t.Fatal(err)
		}
		if out.String() != tt.want {
			t.Errorf("-o %q all=%v:\n%q\nwant\n%q", tt.output, tt.all, out.String(), tt.want)
		}
	}
}

func TestArchivedView(t *testing.T) {
	wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "steps-xk9vq", Namespace: "argo",
		CreationTimestamp: metav1.NewTime(cronNow.Add(-15 * time.Minute))}}
	wf.Status.Phase = v1alpha1.WorkflowFailed
	wf.Status.Message = "child 'x' failed"
	wf.Status.StartedAt = metav1.NewTime(cronNow.Add(-15 * time.Minute))
	wf.Status.FinishedAt = metav1.NewTime(cronNow.Add(-15*time.Minute + 20*time.Second))
	want := `Name:                steps-xk9vq
Namespace:           argo
ServiceAccount:      default
Status:              Failed
Message:             child 'x' failed
Created:             Mon Nov 30 11:45:30 +0000 (15 minutes ago)
Started:             Mon Nov 30 11:45:30 +0000 (15 minutes ago)
Finished:            Mon Nov 30 11:45:50 +0000 (14 minutes ago)
Duration:            20 seconds
`
	if got := archivedView(wf, cronNow); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// The verbs exist with argo's flags, and a bad file is named with its line.
func TestKindCommands(t *testing.T) {
	badTmpl := writeFile(t, "tmpl.yaml", "apiVersion: argoproj.io/v1alpha1\nkind: WorkflowTemplate\nmetadata: {name: t}\nspec:\n  entrypoint: main\n  bogus: 1\n")
	notTmpl := writeFile(t, "wf.yaml", good)
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"template create unknown field", []string{"template", "create", badTmpl}, 1, "line 6"},
		{"template create no template", []string{"template", "create", notTmpl}, 1, "no WorkflowTemplate found"},
		{"template bad output", []string{"template", "get", "x", "-o", "xml"}, 1, "unknown output format"},
		{"template delete nothing", []string{"template", "delete"}, 1, "--all"},
		{"cluster-template list bad output", []string{"cluster-template", "list", "-o", "json"}, 1, "unknown output format"},
		{"cron create no cron", []string{"cron", "create", notTmpl}, 1, "no CronWorkflow found"},
		{"cron delete nothing", []string{"cron", "delete"}, 1, "--all"},
		{"archive label values without key", []string{"archive", "list-label-values"}, 1, "-l KEY"},
		{"archive get needs one", []string{"archive", "get"}, 1, "accepts 1 arg"},
		{"apply needs -f", []string{"apply"}, 1, "must specify one of -f"},
		{"apply missing file", []string{"apply", "-f", "/nonexistent.yaml"}, 1, "nonexistent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d (want %d), stderr lacks %q\nstdout: %s\nstderr: %s", code, tt.code, tt.want, out, errOut)
			}
		})
	}
}
