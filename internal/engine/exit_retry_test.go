package engine

import (
	"testing"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// An exit handler with a retryStrategy retries: its attempts carry the
// hooked flag, and must not be taken for hooks of the Retry node.
func TestExitHandlerRetries(t *testing.T) {
	for _, phase := range []v1alpha1.NodePhase{v1alpha1.NodeFailed, v1alpha1.NodeError} {
		t.Run(string(phase), func(t *testing.T) {
			d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: ex}
spec:
  entrypoint: main
  onExit: cleanup
  templates:
  - name: main
    container: {image: alpine, command: [sh, -c, "echo main"]}
  - name: cleanup
    retryStrategy: {limit: 2, retryPolicy: Always}
    container: {image: alpine, command: [sh, -c, "echo c"]}
`)
			main := d.reconcile().Plan.Launch[0]
			out, err := checkedReconcile(t, Snapshot{Workflow: d.wf, Results: map[string]StepResult{main.NodeID: {Phase: v1alpha1.NodeSucceeded}}}, d.now)
			if err != nil {
				t.Fatal(err)
			}
			d.wf.Status = out.Status
			first := out.Plan.Launch[0]
			out, err = checkedReconcile(t, Snapshot{Workflow: d.wf, Results: map[string]StepResult{first.NodeID: {Phase: phase, Message: "boom"}}}, d.now)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Plan.Launch) != 1 || out.Plan.Launch[0].NodeName != "ex.onExit(1)" {
				t.Fatalf("after a %s attempt: launched %+v, want ex.onExit(1)", phase, out.Plan.Launch)
			}
		})
	}
}
