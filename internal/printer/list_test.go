package printer

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The §5.1 examples (lines without their trailing spaces).
const (
	refList = `NAME                STATUS      AGE   DURATION   PRIORITY   MESSAGE
steps-running       Running     15m   15m        0
steps-xk9vq         Succeeded   15m   20s        0
hello-world-abcde   Failed      45m   41s        0          child 'hello-world-abcde' failed
`
	refListWideAll = `NAMESPACE   NAME                STATUS      AGE   DURATION   PRIORITY   MESSAGE                            P/R/C   PARAMETERS
argo        steps-running       Running     15m   15m        0                                             0/1/1   greeting=hello
argo        steps-xk9vq         Succeeded   15m   20s        0                                             0/0/2   greeting=hello
`
)

// listFixture is the three workflows of the §5.1 example, in no particular
// order. The clock reads t0+15m.
func listFixture() []*v1alpha1.Workflow {
	done := stepsFailed()
	done.Status.Phase = v1alpha1.WorkflowSucceeded
	done.Status.Message = ""
	for id, n := range done.Status.Nodes {
		n.Phase, n.Message = v1alpha1.NodeSucceeded, ""
		done.Status.Nodes[id] = n
	}

	running := stepsRunning()
	running.Name = "steps-running"
	running.Status.Nodes = nil
	add(running,
		nd{name: "steps-running[0].hello1", typ: v1alpha1.NodeTypePod, phase: v1alpha1.NodeSucceeded, end: 7},
		nd{name: "steps-running[1].hello2", typ: v1alpha1.NodeTypePod, phase: v1alpha1.NodeRunning, start: 10, end: -1},
		nd{name: "steps-running", typ: v1alpha1.NodeTypeSteps, phase: v1alpha1.NodeRunning, end: -1},
	)

	failed := newWorkflow("hello-world-abcde")
	failed.CreationTimestamp = at(-30 * 60)
	failed.Status.Phase = v1alpha1.WorkflowFailed
	failed.Status.StartedAt = at(-30 * 60)
	failed.Status.FinishedAt = at(-30*60 + 41)
	failed.Status.Message = "child 'hello-world-abcde' failed"
	return []*v1alpha1.Workflow{failed, done, running}
}

func list(t *testing.T, wfs []*v1alpha1.Workflow, o ListOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteList(&b, wfs, o); err != nil {
		t.Fatalf("WriteList: %v", err)
	}
	return b.String()
}

func TestListMatchesReference(t *testing.T) {
	now := nowAt(15 * time.Minute)
	if got := list(t, listFixture(), ListOptions{Now: now}); trimLines(got) != refList {
		t.Errorf("list differs from ARGO-API.md §5.1:\n%s", got)
	}
	got := trimLines(list(t, listFixture(), ListOptions{Now: now, Output: "wide", AllNamespaces: true}))
	if !strings.HasPrefix(got, refListWideAll) {
		t.Errorf("list -o wide -A differs from ARGO-API.md §5.1:\n%s", got)
	}
}

func TestListGolden(t *testing.T) {
	now := nowAt(15 * time.Minute)
	more := func() []*v1alpha1.Workflow {
		wfs := listFixture()
		pending := newWorkflow("queued")
		pending.Namespace = "team-a"
		pending.CreationTimestamp = at(14 * 60)
		prio := int32(5)
		pending.Spec.Priority = &prio
		pending.Spec.Arguments.Parameters = params(
			"long", "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", "short", "x")
		pending.Spec.Arguments.Parameters = append(pending.Spec.Arguments.Parameters, v1alpha1.Parameter{Name: "unset"})
		suspended := suspended()
		suspended.CreationTimestamp = at(60)
		stopped := stepsFailed()
		stopped.Name = "stopped"
		stopped.Spec.Shutdown = v1alpha1.ShutdownStop
		stopped.Status.FinishedAt = at(5 * 60)
		return append(wfs, pending, suspended, stopped)
	}
	tests := []struct {
		name string
		wfs  []*v1alpha1.Workflow
		o    ListOptions
	}{
		{"default", more(), ListOptions{Now: now}},
		{"all_namespaces_wide", more(), ListOptions{Now: now, AllNamespaces: true, Output: "wide"}},
		{"no_headers", more(), ListOptions{Now: now, NoHeaders: true}},
		{"name", more(), ListOptions{Now: now, Output: "name"}},
		{"archive_uid", more(), ListOptions{Now: now, AllNamespaces: true, Output: "wide", UID: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, wf := range tt.wfs {
				wf.UID = types.UID(fmt.Sprint("uid-", i))
			}
			checkGolden(t, "list_"+tt.name, list(t, tt.wfs, tt.o))
		})
	}
}

func TestListEmpty(t *testing.T) {
	for output, want := range map[string]string{"": "No workflows found\n", "wide": "No workflows found\n",
		"name": "No workflows found\n", "json": "[]\n", "yaml": "[]\n"} {
		if got := list(t, nil, ListOptions{Output: output}); got != want {
			t.Errorf("-o %q of nothing = %q, want %q", output, got, want)
		}
	}
	if err := WriteList(&bytes.Buffer{}, listFixture(), ListOptions{Output: "table"}); err == nil {
		t.Error("unknown output: no error")
	}
}

func TestSortWorkflows(t *testing.T) {
	mk := func(name string, created, finished int) *v1alpha1.Workflow {
		wf := newWorkflow(name)
		wf.CreationTimestamp = at(created)
		if finished >= 0 {
			wf.Status.FinishedAt = at(finished)
		}
		return wf
	}
	wfs := []*v1alpha1.Workflow{
		mk("old-done", 0, 10), mk("running-old", 5, -1), mk("new-done", 1, 50), mk("running-new", 30, -1), mk("mid-done", 2, 20),
	}
	input := append([]*v1alpha1.Workflow(nil), wfs...)
	out := list(t, wfs, ListOptions{Output: "name"})
	if want := "running-new\nrunning-old\nnew-done\nmid-done\nold-done\n"; out != want {
		t.Errorf("order:\n%s\nwant:\n%s", out, want)
	}
	for i := range wfs {
		if wfs[i] != input[i] {
			t.Fatal("WriteList reordered its argument")
		}
	}
}

func TestListCostHint(t *testing.T) {
	var wfs []*v1alpha1.Workflow
	for i := 0; i < 101; i++ {
		wf := newWorkflow(fmt.Sprintf("wf-%03d", i))
		wf.Status.Phase = v1alpha1.WorkflowSucceeded
		wf.Status.FinishedAt = metav1.NewTime(t0.Add(time.Duration(i) * time.Second))
		wfs = append(wfs, wf)
	}
	out := list(t, wfs, ListOptions{Now: nowAt(time.Hour)})
	want := "\nYou have at least 101 completed workflows. Reducing the total number of workflows will reduce your costs.\n" +
		"Learn more at https://argo-workflows.readthedocs.io/en/latest/cost-optimisation/\n"
	if !strings.HasSuffix(out, want) {
		t.Errorf("cost hint missing:\n%s", out[len(out)-300:])
	}
	if out := list(t, wfs[:100], ListOptions{Now: nowAt(time.Hour)}); strings.Contains(out, "You have") {
		t.Error("cost hint shown for 100 workflows")
	}
}

func TestParameterSummary(t *testing.T) {
	got := parameterSummary(params("a", "1", "long", strings.Repeat("x", 32)+strings.Repeat("-", 10)+strings.Repeat("y", 15)))
	want := "a=1,long=" + strings.Repeat("x", 32) + "..." + strings.Repeat("y", 15)
	if got != want {
		t.Errorf("parameterSummary = %q, want %q", got, want)
	}
	if got := parameterSummary(params("v", strings.Repeat("z", 50))); got != "v="+strings.Repeat("z", 50) {
		t.Errorf("a 50-byte value was cut: %q", got)
	}
}
