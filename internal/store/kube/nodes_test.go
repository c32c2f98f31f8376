package kube_test

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// bigNodes returns n pod nodes under one DAG root, shaped like a real
// run's: names, template, phase, times, a boundary, an output parameter
// and an exit code.
func bigNodes(wfName string, n int) v1alpha1.Nodes {
	nodes := v1alpha1.Nodes{}
	root := v1alpha1.NodeID(wfName, wfName)
	start := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	children := make([]string, 0, n)
	for i := range n {
		name := fmt.Sprintf("%s.task-%05d", wfName, i)
		id := v1alpha1.NodeID(wfName, name)
		children = append(children, id)
		code := "0"
		val := v1alpha1.AnyString(fmt.Sprintf("value-%d", i))
		nodes[id] = v1alpha1.NodeStatus{
			ID: id, Name: name, DisplayName: fmt.Sprintf("task-%05d", i), Type: v1alpha1.NodeTypePod,
			TemplateName: "work", Phase: v1alpha1.NodeSucceeded, BoundaryID: root,
			StartedAt: start, FinishedAt: metav1.NewTime(start.Add(time.Duration(i) * time.Second)),
			Progress: "1/1", HostNodeName: "localhost",
			Outputs: &v1alpha1.Outputs{ExitCode: &code, Parameters: []v1alpha1.Parameter{{Name: "out", Value: &val}}},
		}
	}
	nodes[root] = v1alpha1.NodeStatus{ID: root, Name: wfName, DisplayName: wfName, Type: v1alpha1.NodeTypeDAG,
		TemplateName: "main", Phase: v1alpha1.NodeRunning, StartedAt: start, Children: children}
	return nodes
}
