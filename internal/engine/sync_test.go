package engine

import (
	"strings"
	"testing"
	"time"

	synclock "github.com/braidwf/braid/internal/synclock"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const lockedStepsYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: locked}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: a
        template: work
        withItems: [1, 2, 3]
      - name: other
        template: other
  - name: work
    synchronization:
      LOCKS
    container: {image: busybox, command: [sh, -c, "sleep 1"]}
  - name: other
    synchronization:
      mutexes: [{name: other}]
    container: {image: busybox, command: [sh, -c, "sleep 1"]}
`

// lockPass is what one pass of a locked workflow showed.
type lockPass struct {
	launched []string
	waiting  map[string]string // node name -> message
}

// runLocked drives a workflow with a real lock manager, as the controller
// does: each pass's launches end Succeeded before the next pass, and the
// locks of completed nodes are released between passes.
func runLocked(t *testing.T, src string, locks *synclock.Locks) (*driver, []lockPass) {
	t.Helper()
	d := load(t, src)
	var g *lockGate
	if locks != nil {
		g = &lockGate{m: locks}
	}
	results := map[string]StepResult{}
	var passes []lockPass
	carried := lockPass{waiting: map[string]string{}}
	for i := 0; i < 50 && !d.wf.Status.Phase.Completed(); i++ {
		res, err := g.reconcile(t, Snapshot{Workflow: d.wf, Results: results, Prepared: d.prepared}, d.now)
		if err != nil {
			t.Fatal(err)
		}
		d.wf.Status = res.Status
		p := carried
		results = map[string]StepResult{}
		for _, l := range res.Plan.Launch {
			p.launched = append(p.launched, l.NodeName)
			results[l.NodeID] = StepResult{Phase: v1alpha1.NodeSucceeded, ExitCode: i32(0), StartedAt: d.now, FinishedAt: d.now.Add(time.Second)}
		}
		for _, n := range d.wf.Status.Nodes {
			if waitingForLock(n) {
				p.waiting[n.Name] = n.Message
			}
		}
		if !res.Need.Empty() { // a pass that loads locks belongs to the next
			carried = p
			continue
		}
		carried = lockPass{waiting: map[string]string{}}
		passes = append(passes, p)
		d.now = d.now.Add(time.Second)
	}
	if !d.wf.Status.Phase.Completed() {
		t.Fatalf("not completed\n%s", d.dump())
	}
	return d, passes
}

func lockManager() *synclock.Locks {
	return synclock.New(synclock.Config{ConfigMapValue: func(ns, name, key string) (string, bool) {
		if ns == "default" && name == "my-config" && key == "template" {
			return "1", true
		}
		return "", false
	}})
}

func TestTemplateLocks(t *testing.T) {
	const semMsg = "Waiting for default/ConfigMap/my-config/template lock. Lock status: 0/1"
	const mutexMsg = "Waiting for default/Mutex/welcome lock. Lock status: 0/1"
	for _, tc := range []struct {
		name, locks string
		msg         string
	}{
		{"semaphore of limit 1", `semaphores: [{configMapKeyRef: {name: my-config, key: template}}]`, semMsg},
		{"legacy semaphore", `semaphore: {configMapKeyRef: {name: my-config, key: template}}`, semMsg},
		{"mutex", `mutexes: [{name: welcome}]`, mutexMsg},
		{"legacy mutex", `mutex: {name: welcome}`, mutexMsg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, passes := runLocked(t, strings.Replace(lockedStepsYAML, "LOCKS", tc.locks, 1), lockManager())
			if d.wf.Status.Phase != v1alpha1.WorkflowSucceeded {
				t.Fatalf("phase %s\n%s", d.wf.Status.Phase, d.dump())
			}
			// Pass 1: one item and the step with its own mutex start; two wait.
			first := passes[0]
			eq(t, "launched in pass 1", first.launched, []string{"locked[0].a(0:1)", "locked[0].other"})
			eq(t, "waiting in pass 1", first.waiting, map[string]string{"locked[0].a(1:2)": tc.msg, "locked[0].a(2:3)": tc.msg})
			n := d.node("locked[0].a(1:2)")
			if n.Type != v1alpha1.NodeTypePod || n.SynchronizationStatus != nil || n.Message != "" {
				t.Errorf("a waiter ended as %s %+v %q", n.Type, n.SynchronizationStatus, n.Message)
			}
			// Then one item per pass, in order; never two at once.
			var order []string
			for _, p := range passes {
				for _, l := range p.launched {
					if strings.Contains(l, ".a(") {
						order = append(order, l)
					}
				}
				if len(p.launched) > 2 {
					t.Errorf("a pass launched %q", p.launched)
				}
			}
			eq(t, "launch order", order, []string{"locked[0].a(0:1)", "locked[0].a(1:2)", "locked[0].a(2:3)"})
		})
	}
}

// Without a lock manager, synchronization is ignored: all run at once.
func TestTemplateLocksIgnoredWithoutManager(t *testing.T) {
	_, passes := runLocked(t, strings.Replace(lockedStepsYAML, "LOCKS", `mutexes: [{name: welcome}]`, 1), nil)
	if len(passes[0].launched) != 4 {
		t.Errorf("pass 1 launched %q", passes[0].launched)
	}
}

// A lock on a steps template holds back the whole invocation: its node is
// created Pending, of type Steps, and goes Running when the lock frees.
func TestStepsTemplateLock(t *testing.T) {
	const src = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: outer}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: x, template: inner}
      - {name: y, template: inner}
  - name: inner
    synchronization:
      mutexes: [{name: inner}]
    steps:
    - - {name: s, template: leaf}
  - name: leaf
    container: {image: busybox, command: [sh, -c, "true"]}
`
	d, passes := runLocked(t, src, lockManager())
	eq(t, "waiting in pass 1", passes[0].waiting, map[string]string{"outer[0].y": "Waiting for default/Mutex/inner lock. Lock status: 0/1"})
	eq(t, "launched in pass 1", passes[0].launched, []string{"outer[0].x[0].s"})
	if n := d.node("outer[0].y"); n.Type != v1alpha1.NodeTypeSteps || n.Phase != v1alpha1.NodeSucceeded {
		t.Errorf("y is %s %s", n.Type, n.Phase)
	}
	if d.wf.Status.Phase != v1alpha1.WorkflowSucceeded {
		t.Errorf("phase %s", d.wf.Status.Phase)
	}
}

// A semaphore whose limit cannot be read keeps the node waiting with the
// reason; the workflow neither fails nor spins.
func TestTemplateLockMissingLimit(t *testing.T) {
	d := load(t, strings.Replace(lockedStepsYAML, "LOCKS", `semaphores: [{configMapKeyRef: {name: my-config, key: nope}}]`, 1))
	g := &lockGate{m: lockManager()}
	for i := 0; i < 6; i++ {
		res, err := g.reconcile(t, Snapshot{Workflow: d.wf}, d.now)
		if err != nil {
			t.Fatal(err)
		}
		d.wf.Status = res.Status
		if i > 3 && (len(res.Plan.Launch) != 0 || res.RequeueAfter != 0) { // the first passes ask for the locks and launch "other"
			t.Errorf("pass %d: launched %d, requeue %v", i, len(res.Plan.Launch), res.RequeueAfter)
		}
	}
	n := d.node("locked[0].a(0:1)")
	if n.Phase != v1alpha1.NodePending || n.Message != "failed to get semaphore limit: config map my-config has no key nope" {
		t.Errorf("node %s %q", n.Phase, n.Message)
	}
	if d.wf.Status.Phase != v1alpha1.WorkflowRunning {
		t.Errorf("workflow %s", d.wf.Status.Phase)
	}
}

// A DAG task's loop over a locked template waits for the lock's state to
// be loaded, then takes the lock one item at a time.
func TestDAGLoopTemplateLock(t *testing.T) {
	const src = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: dagged}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, template: work, withItems: [1, 2]}
      - {name: b, template: work, depends: a}
  - name: work
    synchronization:
      mutexes: [{name: one}]
    container: {image: busybox, command: [sh, -c, "true"]}
`
	d, passes := runLocked(t, src, lockManager())
	if d.wf.Status.Phase != v1alpha1.WorkflowSucceeded {
		t.Fatalf("phase %s\n%s", d.wf.Status.Phase, d.dump())
	}
	var launched []string
	for _, p := range passes {
		if len(p.launched) > 1 {
			t.Errorf("two launched at once: %q", p.launched)
		}
		launched = append(launched, p.launched...)
	}
	eq(t, "launched", launched, []string{"dagged.a(0:1)", "dagged.a(1:2)", "dagged.b"})
}
