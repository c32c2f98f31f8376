package kube

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/file"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// A data template runs in the controller with no pod: Running, then its
// result, or Error with a clear message. No cluster is involved.
func TestDataTemplate(t *testing.T) {
	root := t.TempDir()
	for _, key := range []string{"logs/wf-a/pod-1/main.log", "logs/wf-a/pod-1/out.tgz", "logs/wf-b/pod-2/main.log"} {
		p := filepath.Join(root, key)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := fake.NewClientset()
	rt, err := New(Config{Client: c, Artifacts: &artifact.Drivers{File: file.New(root)}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	events := collect(rt)
	cases := []struct {
		name, tmpl string
		phase      v1alpha1.NodePhase
		want       string // the result, or what the message says
	}{
		{"key-only location in the repository, filtered", `
data:
  source: {artifactPaths: {name: logs, file: {key: logs}}}
  transformation: [{expression: 'filter(data, {# endsWith "main.log"})'}]`,
			v1alpha1.NodeSucceeded, `["logs/wf-a/pod-1/main.log","logs/wf-b/pod-2/main.log"]`},
		{"bad expression", `
data:
  source: {artifactPaths: {name: logs, file: {key: logs}}}
  transformation: [{expression: 'filter(data,'}]`,
			v1alpha1.NodeError, "filter(data,"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := runtime.Run{ID: "data-" + strings.ReplaceAll(tc.name, " ", "-"), Namespace: "ns", Artifacts: &step.ArtifactPlan{},
				Launch: step.Launch{NodeID: "n", Template: mustTemplate(t, tc.tmpl)}}
			if err := rt.Start(context.Background(), run); err != nil {
				t.Fatal(err)
			}
			evs := events.wait(t, run.ID, tc.phase, 10*time.Second)
			if evs[0].Phase != v1alpha1.NodeRunning {
				t.Errorf("first event %s, want Running", evs[0].Phase)
			}
			ev := evs[len(evs)-1]
			if tc.phase != v1alpha1.NodeSucceeded {
				if !strings.Contains(ev.Message, tc.want) {
					t.Errorf("message %q does not say %q", ev.Message, tc.want)
				}
				return
			}
			if ev.Outputs == nil || ev.Outputs.Result == nil || *ev.Outputs.Result != tc.want {
				t.Errorf("outputs %+v, want result %s", ev.Outputs, tc.want)
			}
		})
	}
	pods, _ := c.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if len(pods.Items) != 0 {
		t.Errorf("%d pods made for data templates, want none", len(pods.Items))
	}
}
