package v1alpha1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A node's pod name follows the workflow's pod-name-format annotation.
func TestNodePodName(t *testing.T) {
	wf := &Workflow{}
	wf.Name = "hello"
	node := &NodeStatus{ID: "hello-123", Name: "hello[0].step", TemplateName: "main"}
	if got, want := wf.NodePodName(node), PodName("hello", node.Name, "main"); got != want {
		t.Errorf("v2: %q, want %q", got, want)
	}
	node.TemplateRef = &TemplateRef{Name: "lib", Template: "echo"}
	if got, want := wf.NodePodName(node), PodName("hello", node.Name, "echo"); got != want {
		t.Errorf("v2 with templateRef: %q, want %q", got, want)
	}
	wf.Annotations = map[string]string{PodNameFormatAnnotation: PodNameV1}
	if got := wf.NodePodName(node); got != "hello-123" {
		t.Errorf("v1: %q, want the node ID", got)
	}
	node.ID = ""
	if got, want := wf.NodePodName(node), NodeID("hello", node.Name); got != want {
		t.Errorf("v1 without an ID: %q, want %q", got, want)
	}
}

// Unfinished workflows come first, newest created first; then finished
// ones, latest finished first; times compare to the second.
func TestSortWorkflows(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Unix(int64(s), 0)) }
	mk := func(name string, created, finished int) *Workflow {
		wf := &Workflow{}
		wf.Name, wf.CreationTimestamp = name, at(created)
		if finished > 0 {
			wf.Status.FinishedAt = at(finished)
		}
		return wf
	}
	wfs := []*Workflow{mk("done-early", 1, 5), mk("running-old", 2, 0), mk("done-late", 3, 9), mk("running-new", 4, 0)}
	SortWorkflows(wfs)
	var got []string
	for _, wf := range wfs {
		got = append(got, wf.Name)
	}
	want := []string{"running-new", "running-old", "done-late", "done-early"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}
