package engine

import (
	"testing"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// status.progress counts completed pods over all pods, and a skipped step
// (no pod) does not count.
func TestProgress(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: pg}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: ok}
      - {name: b, template: ok}
    - - {name: c, template: ok, when: "1 == 2"}
  - name: ok
    container: {image: busybox, command: [echo, hi]}
`)
	d.reconcile()
	if got := d.wf.Status.Progress; got != "0/2" {
		t.Fatalf("progress after the first pass = %q, want 0/2", got)
	}
	d.run()
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{"pg[1].c": "Skipped Skipped when '1 == 2' evaluated false"})
	if got := d.wf.Status.Progress; got != "2/2" {
		t.Fatalf("final progress = %q, want 2/2", got)
	}
}
