package storetest

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Archived builds a finished workflow to archive, with the uid
// "uid-<ns>-<name>": started is minutes after a fixed time, and it
// finishes a minute later.
func Archived(ns, name string, started int, labels map[string]string) *v1alpha1.Workflow {
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(started) * time.Minute)
	return &v1alpha1.Workflow{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: "Workflow"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name),
			Labels: labels, CreationTimestamp: metav1.NewTime(t0),
		},
		Spec: v1alpha1.WorkflowSpec{Entrypoint: "main"},
		Status: v1alpha1.WorkflowStatus{
			Phase:      v1alpha1.WorkflowSucceeded,
			StartedAt:  metav1.NewTime(t0),
			FinishedAt: metav1.NewTime(t0.Add(time.Minute)),
			Nodes: v1alpha1.Nodes{name: {
				ID: name, Name: name, Type: v1alpha1.NodeTypePod, Phase: v1alpha1.NodeSucceeded,
			}},
		},
	}
}

// BigWorkflow is a finished workflow, labelled with its phase, whose DAG
// root has n-1 pod children, each about the size of the node Argo writes
// for a pod step.
func BigWorkflow(ns, name string, n int) *v1alpha1.Workflow {
	start := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	wf := Archived(ns, name, 0, map[string]string{"workflows.argoproj.io/phase": "Succeeded"})
	wf.Spec.Templates = []v1alpha1.Template{{Name: "main"}, {Name: "work"}}
	wf.Status.Nodes = make(v1alpha1.Nodes, n)
	root := v1alpha1.NodeStatus{ID: name, Name: name, DisplayName: name, Type: v1alpha1.NodeTypeDAG,
		TemplateName: "main", Phase: v1alpha1.NodeSucceeded, StartedAt: start}
	exit := "0"
	for i := 1; i < n; i++ {
		nodeName := fmt.Sprintf("%s.task-%d", name, i)
		node := v1alpha1.NodeStatus{
			ID: v1alpha1.NodeID(name, nodeName), Name: nodeName, DisplayName: fmt.Sprintf("task-%d", i),
			Type: v1alpha1.NodeTypePod, TemplateName: "work", Phase: v1alpha1.NodeSucceeded, BoundaryID: name,
			StartedAt: start, FinishedAt: metav1.NewTime(start.Add(3 * time.Second)), Progress: "1/1",
			Outputs: &v1alpha1.Outputs{ExitCode: &exit,
				Parameters: []v1alpha1.Parameter{{Name: "out", Value: v1alpha1.AnyStringPtr(fmt.Sprintf("value-%d", i))}}},
		}
		root.Children = append(root.Children, node.ID)
		wf.Status.Nodes[node.ID] = node
	}
	wf.Status.Nodes[root.ID] = root
	return wf
}

// Names are the names of wfs, in order.
func Names(wfs []v1alpha1.Workflow) []string {
	var out []string
	for _, wf := range wfs {
		out = append(out, wf.Name)
	}
	return out
}
