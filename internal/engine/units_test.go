package engine

import (
	"testing"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Rules 1.2 and 1.3 [run].
func TestIDsAndPodNames(t *testing.T) {
	eq(t, "hello[0]", v1alpha1.NodeID("hello", "hello[0]"), "hello-3705025351")
	eq(t, "root", v1alpha1.NodeID("hello", "hello"), "hello")
	eq(t, "st pod", podName("st", "st[0].a", "echo"), "st-echo-3477569709")
	eq(t, "root pod", podName("st", "st", "echo"), "st")
	eq(t, "no template", podName("st", "st[0].a", ""), "st-3477569709")
	long := podName("w", "w.x", string(make([]byte, 300)))
	eq(t, "cut prefix", len(long) <= 253, true)
}

func TestHumanizeDuration(t *testing.T) {
	eq(t, "s", humanizeDuration(30*time.Second), "30 seconds")
	eq(t, "m", humanizeDuration(125*time.Second), "2 minutes 5 seconds")
	eq(t, "h", humanizeDuration(time.Hour+61*time.Second), "1 hours 1 minutes 1 seconds")
	eq(t, "d", humanizeDuration(49*time.Hour), "2 days 1 hours 0 minutes 0 seconds")
}

func TestStepOrTaskName(t *testing.T) {
	for in, want := range map[string]string{
		"wf[0].fan(0:1)(0)": "fan", "wf.t": "t", "wf[1].a(2:x.y)": "a", "wf": "wf", "wf[0].s[0].a(0)": "a",
	} {
		eq(t, in, stepOrTaskName(in), want)
	}
}

func TestScanResultRefs(t *testing.T) {
	refs := map[string]bool{}
	scanResultRefs(`{{steps.a.outputs.result}} steps['b-c'].outputs.result steps["d"].outputs.result tasks.e.outputs.result`, "steps", refs)
	eq(t, "refs", refs, map[string]bool{"a": true, "b-c": true, "d": true})
}

func TestDependsTasks(t *testing.T) {
	eq(t, "tasks", dependsTasks("A && (B.Failed || c-d.AnySucceeded) && !A.Skipped"), []string{"A", "B", "c-d"})
	eq(t, "empty", dependsTasks(""), []string(nil))
}

func TestParseStringDuration(t *testing.T) {
	d, err := parseStringDuration("20")
	eq(t, "seconds", d, 20*time.Second)
	eq(t, "err", err, nil)
	d, _ = parseStringDuration("2m")
	eq(t, "go", d, 2*time.Minute)
	if _, err := parseStringDuration("x"); err == nil {
		t.Error("x is not a duration")
	}
}

// Reconcile refuses a snapshot without a workflow instead of crashing.
func TestReconcileNoWorkflow(t *testing.T) {
	if _, err := Reconcile(Snapshot{}, t0); err != ErrNoWorkflow {
		t.Errorf("err %v", err)
	}
	if _, err := Reconcile(Snapshot{Workflow: &v1alpha1.Workflow{}}, t0); err != ErrNoWorkflow {
		t.Errorf("err %v", err)
	}
}
