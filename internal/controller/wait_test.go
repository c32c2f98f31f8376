package controller

import (
	"context"
	"testing"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// A step shorter than runningGrace costs one write, not two: its Running
// report waits for its final one and both are persisted together. The
// steps sleep 10ms, longer than the 3ms grace that let most steps of a
// chain be written twice.
func TestRunShortStepsWriteOnce(t *testing.T) {
	c, _ := newController(t)
	wf := workflow(t, `
metadata: {name: short}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, template: nap}
      - {name: b, template: nap, depends: a}
      - {name: c, template: nap, depends: b}
      - {name: d, template: nap, depends: c}
      - {name: e, template: nap, depends: d}
      - {name: f, template: nap, depends: e}
      - {name: g, template: nap, depends: f}
      - {name: h, template: nap, depends: g}
  - name: nap
    container: {image: busybox, command: [sleep, "0.01"]}
`)
	running := 0 // writes that persisted a step as Running
	observe := func(w *v1alpha1.Workflow, changed []string) {
		for _, id := range changed {
			if n := w.Status.Nodes[id]; n.Type == v1alpha1.NodeTypePod && n.Phase == v1alpha1.NodeRunning {
				running++
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	final, err := c.Run(ctx, RunRequest{Workflow: wf, Observe: observe})
	if err != nil {
		t.Fatal(err)
	}
	if final.Status.Phase != v1alpha1.WorkflowSucceeded {
		t.Fatalf("phase %s: %s", final.Status.Phase, final.Status.Message)
	}
	// A step slowed past the grace by a busy machine may still be written
	// Running; most must not be.
	if running > 2 {
		t.Errorf("%d of 8 short steps were written Running before they ended; want them written once, ended", running)
	}
}

// A daemon's Running report ends the wait at once: its dependents start
// as soon as it runs, not after runningGrace.
func TestRunDaemonRunningNotHeldBack(t *testing.T) {
	defer func(g time.Duration) { runningGrace = g }(runningGrace)
	runningGrace = time.Minute // held back, the dependent would wait this long
	c, _ := newController(t)
	wf := workflow(t, `
metadata: {name: daemon}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: server, template: server}
      - {name: client, template: client, depends: server}
  - name: server
    daemon: true
    container: {image: busybox, command: [sleep, "60"]}
  - name: client
    container: {image: busybox, command: ["true"]}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	final, err := c.Run(ctx, RunRequest{Workflow: wf})
	if err != nil {
		t.Fatalf("after %v: %v", time.Since(start), err)
	}
	if final.Status.Phase != v1alpha1.WorkflowSucceeded {
		t.Fatalf("phase %s: %s", final.Status.Phase, final.Status.Message)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the workflow took %v: the daemon's Running report waited for the grace", took)
	}
}
