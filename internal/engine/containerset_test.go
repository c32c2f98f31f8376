package engine

import (
	"testing"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const containerSetYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: cs}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: set, template: set}
    - - {name: after, template: plain}
  - name: set
    containerSet:
      containers:
      - {name: a, image: busybox, command: [echo, a]}
      - {name: b, image: busybox, command: [echo, b], dependencies: [a]}
      - {name: main, image: busybox, command: [echo, m], dependencies: [a]}
  - name: plain
    container: {image: busybox, command: [echo, x]}
`

// A containerSet's pod node has a Container node per container, linked by
// their dependencies; the runtime's container states become their phases,
// and the next step hangs under the containers nothing depends on (rules
// 1.4, 1.7, 1.8).
func TestContainerSetNodes(t *testing.T) {
	ok := func(name string) ContainerResult {
		return ContainerResult{Name: name, Phase: v1alpha1.NodeSucceeded, ExitCode: i32(0)}
	}
	tests := []struct {
		name  string
		ctrs  []ContainerResult
		phase v1alpha1.NodePhase // the pod's
		want  map[string]string
	}{
		{"all succeed", []ContainerResult{ok("a"), ok("b"), ok("main")}, v1alpha1.NodeSucceeded, map[string]string{
			"cs[0].set":      "Pod Succeeded",
			"cs[0].set.a":    "Container Succeeded",
			"cs[0].set.b":    "Container Succeeded",
			"cs[0].set.main": "Container Succeeded",
			"cs[1].after":    "Pod Succeeded",
		}},
		{"one fails, one is skipped, one never reported", []ContainerResult{
			{Name: "a", Phase: v1alpha1.NodeFailed, ExitCode: i32(3)},
			{Name: "b", Phase: v1alpha1.NodeOmitted, Message: "b: skipped: dependency a did not succeed"},
		}, v1alpha1.NodeFailed, map[string]string{
			"cs[0].set":      "Pod Failed",
			"cs[0].set.a":    "Container Failed a: Error (exit code 3)",
			"cs[0].set.b":    "Container Omitted b: skipped: dependency a did not succeed",
			"cs[0].set.main": "Container Failed",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := load(t, containerSetYAML)
			d.respond = func(_ *driver, l Launch) *stepEnd {
				if l.Template.ContainerSet == nil {
					return nil
				}
				o := &stepEnd{phase: tc.phase, ctrs: tc.ctrs}
				if tc.phase == v1alpha1.NodeFailed {
					o.exitCode = 3
				}
				return o
			}
			d.run()
			for name, want := range tc.want {
				if got := describe(d.node(name), want); got != want {
					t.Errorf("node %q: got %q, want %q", name, got, want)
				}
			}
			eq(t, "children of the pod", d.children("cs[0].set"), []string{"cs[0].set.a"})
			eq(t, "children of a", d.children("cs[0].set.a"), []string{"cs[0].set.b", "cs[0].set.main"})
			if d.node("cs[0].set.main").DisplayName != "main" {
				t.Errorf("displayName %q, want main", d.node("cs[0].set.main").DisplayName)
			}
			if tc.phase == v1alpha1.NodeSucceeded {
				eq(t, "children of b", d.children("cs[0].set.b"), []string{"cs[1]"})
				eq(t, "children of main", d.children("cs[0].set.main"), []string{"cs[1]"})
				if d.wf.Status.Progress != "5/5" {
					t.Errorf("progress %q, want 5/5 (the pod, its three containers and after)", d.wf.Status.Progress)
				}
			}
		})
	}
}
