package printer

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The §5.2 example as ARGO-API.md prints it (its lines lost their trailing
// pad spaces).
const refStepsFailed = `Name:                steps-xk9vq
Namespace:           argo
ServiceAccount:      unset (will run with the default ServiceAccount)
Status:              Failed
Message:             child 'steps-xk9vq-2794516801' failed
Conditions:
 PodRunning          False
 Completed           True
Created:             Mon Nov 30 09:00:00 +0000 (16 minutes ago)
Started:             Mon Nov 30 09:00:00 +0000 (16 minutes ago)
Finished:            Mon Nov 30 09:00:20 +0000 (15 minutes ago)
Duration:            20 seconds
Progress:            1/2
ResourcesDuration:   2s*(1 cpu),8s*(100Mi memory)
Parameters:
  greeting:          hello

STEP            TEMPLATE       PODNAME                               DURATION  MESSAGE
 ✖ steps-xk9vq  main                                                           child 'steps-xk9vq-2794516801' failed
 ├───✔ hello1   print-message  steps-xk9vq-print-message-3449935319  7s
 └───✖ hello2   print-message  steps-xk9vq-print-message-2794516801  7s        Error (exit code 1)
`

// The §5.3 submit output of a fresh workflow.
const refPending = `Name:                steps-xk9vq
Namespace:           argo
ServiceAccount:      unset (will run with the default ServiceAccount)
Status:              Pending
Created:             Mon Nov 30 09:00:00 +0000 (16 minutes ago)
Progress:
Parameters:
  greeting:          hello
`

func get(t *testing.T, wf *v1alpha1.Workflow, o Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteGet(&b, wf, o); err != nil {
		t.Fatalf("WriteGet: %v", err)
	}
	return b.String()
}

func TestGetMatchesReference(t *testing.T) {
	got := get(t, stepsFailed(), Options{NoColor: true, Now: nowAt(16 * time.Minute)})
	if trimLines(got) != refStepsFailed {
		t.Errorf("get view differs from ARGO-API.md §5.2:\n%s", got)
	}

	wf := newWorkflow("steps-xk9vq")
	wf.Spec.Arguments.Parameters = params("greeting", "hello")
	got = get(t, wf, Options{NoColor: true, Now: nowAt(16 * time.Minute)})
	if trimLines(got) != refPending {
		t.Errorf("pending view differs from ARGO-API.md §5.3:\n%s", got)
	}
}

func TestGetGolden(t *testing.T) {
	sixteen := nowAt(16 * time.Minute)
	tests := []struct {
		name string
		wf   *v1alpha1.Workflow
		o    Options
	}{
		{"steps_failed", stepsFailed(), Options{NoColor: true, Now: sixteen}},
		{"steps_failed_color", stepsFailed(), Options{Now: sixteen}},
		{"steps_failed_wide", withArtifacts(stepsFailed()), Options{NoColor: true, Output: "wide", Now: sixteen}},
		{"steps_failed_short", stepsFailed(), Options{NoColor: true, Output: "short", Now: sixteen}},
		{"steps_running", stepsRunning(), Options{NoColor: true, Now: nowAt(15*time.Minute + 10*time.Second)}},
		{"dag_taskgroup", dagFanOut(), Options{NoColor: true, Now: sixteen}},
		{"dag_taskgroup_color", dagFanOut(), Options{Now: sixteen}},
		{"retry", retries(), Options{NoColor: true, Now: sixteen}},
		{"retry_no_utf8", retries(), Options{NoColor: true, NoUTF8: true, Now: sixteen}},
		{"parallel_no_utf8", parallel(), Options{NoColor: true, NoUTF8: true, Now: sixteen}},
		{"parallel_no_utf8_color", parallel(), Options{NoUTF8: true, Now: sixteen}},
		{"on_exit", onExit(), Options{NoColor: true, Now: sixteen}},
		{"on_exit_wide", onExit(), Options{NoColor: true, Output: "wide", Now: sixteen}},
		{"suspend_running", suspended(), Options{NoColor: true, Now: nowAt(2 * time.Minute)}},
		{"suspend_running_color", suspended(), Options{Now: nowAt(2 * time.Minute)}},
		{"sibling_order", siblings(), Options{NoColor: true, Now: sixteen}},
		{"header_cases", headerCases(), Options{NoColor: true, Now: nowAt(4 * time.Hour)}},
		{"header_cases_color", headerCases(), Options{Now: nowAt(4 * time.Hour)}},
		{"status_filter", stepsFailed(), Options{NoColor: true, Now: sixteen, StatusFilter: []string{"Failed"}}},
		{"field_selector", dagFanOut(), Options{NoColor: true, Now: sixteen, NodeFieldSelector: "templateName=echo,phase!=Failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, "get_"+tt.name, get(t, tt.wf, tt.o))
		})
	}
}

func TestGetHidesOmittedAndSingleRetry(t *testing.T) {
	out := get(t, dagFanOut(), Options{NoColor: true, Now: nowAt(time.Hour)})
	if strings.Contains(out, " D ") || strings.Contains(out, "omitted") {
		t.Errorf("Omitted node D is drawn:\n%s", out)
	}
	out = get(t, retries(), Options{NoColor: true, Now: nowAt(time.Hour)})
	if strings.Contains(out, "✔ once ") || !strings.Contains(out, "✔ once(0)") {
		t.Errorf("a Retry with one child should give way to the child:\n%s", out)
	}
	if !strings.Contains(out, "✔ flaky ") {
		t.Errorf("a Retry with two children should be drawn:\n%s", out)
	}
}

func TestGetOutputs(t *testing.T) {
	wf := stepsFailed()
	if got := get(t, wf, Options{Output: "name"}); got != "steps-xk9vq\n" {
		t.Errorf("-o name = %q", got)
	}
	js := get(t, wf, Options{Output: "json"})
	if !strings.HasPrefix(js, "{\n    \"metadata\": {\n        \"name\": \"steps-xk9vq\",") || !strings.HasSuffix(js, "}\n") {
		t.Errorf("-o json is not 4-space indented:\n%.200s", js)
	}
	if err := WriteGet(&bytes.Buffer{}, wf, Options{Output: "yaml"}); err == nil {
		t.Error("-o yaml should be left to the caller")
	}
}

func TestGetNoTreeWithoutRootNode(t *testing.T) {
	wf := stepsFailed()
	delete(wf.Status.Nodes, "steps-xk9vq")
	out := get(t, wf, Options{NoColor: true, Now: nowAt(time.Hour)})
	if strings.Contains(out, "STEP") {
		t.Errorf("tree drawn without the root node:\n%s", out)
	}
	if got := get(t, wf, Options{Output: "short", NoColor: true, Now: nowAt(time.Hour)}); got != out {
		t.Errorf("short view without a tree should be the header block, got:\n%s", got)
	}
}

func TestGetErrors(t *testing.T) {
	for name, o := range map[string]Options{
		"both filters":     {StatusFilter: []string{"Failed"}, NodeFieldSelector: "phase=Failed"},
		"invalid selector": {NodeFieldSelector: "phase"},
		"bad escape":       {NodeFieldSelector: `phase=a\b`},
		"unknown output":   {Output: "tree"},
	} {
		if err := WriteGet(&bytes.Buffer{}, stepsFailed(), o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	wf := stepsFailed()
	st := node(wf, "steps-xk9vq[0].hello1")
	st.Type = ""
	set(wf, st)
	if err := WriteGet(&bytes.Buffer{}, wf, Options{}); err == nil {
		t.Error("a node without a type should be an error")
	}
}

func TestWorkflowStatus(t *testing.T) {
	yes := true
	tests := []struct {
		name string
		edit func(*v1alpha1.Workflow)
		want string
	}{
		{"phase", func(wf *v1alpha1.Workflow) {}, "Failed"},
		{"terminated", func(wf *v1alpha1.Workflow) { wf.Spec.Shutdown = v1alpha1.ShutdownTerminate }, "Failed (Terminated)"},
		{"stopped", func(wf *v1alpha1.Workflow) { wf.Spec.Shutdown = v1alpha1.ShutdownStop }, "Failed (Terminated)"},
		{"succeeded ignores shutdown", func(wf *v1alpha1.Workflow) {
			wf.Status.Phase = v1alpha1.WorkflowSucceeded
			wf.Spec.Shutdown = v1alpha1.ShutdownStop
		}, "Succeeded"},
		{"running", func(wf *v1alpha1.Workflow) { wf.Status.Phase = v1alpha1.WorkflowRunning }, "Running"},
		{"spec.suspend", func(wf *v1alpha1.Workflow) {
			wf.Status.Phase = v1alpha1.WorkflowRunning
			wf.Spec.Suspend = &yes
		}, "Running (Suspended)"},
		{"no phase", func(wf *v1alpha1.Workflow) { wf.Status.Phase = "" }, "Pending"},
		{"pending", func(wf *v1alpha1.Workflow) { wf.Status.Phase = v1alpha1.WorkflowPending }, "Pending"},
		{"no phase, no creation", func(wf *v1alpha1.Workflow) {
			wf.Status.Phase = ""
			wf.CreationTimestamp = metav1.Time{}
		}, "Unknown"},
		{"error", func(wf *v1alpha1.Workflow) { wf.Status.Phase = v1alpha1.WorkflowError }, "Error"},
	}
	for _, tt := range tests {
		wf := stepsFailed()
		tt.edit(wf)
		if got := WorkflowStatus(wf); got != tt.want {
			t.Errorf("%s: WorkflowStatus = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := WorkflowStatus(suspended()); got != "Running (Suspended)" {
		t.Errorf("running Suspend node: WorkflowStatus = %q", got)
	}
}

func TestResourcesDuration(t *testing.T) {
	rd := v1alpha1.ResourcesDuration{
		corev1.ResourceMemory: 8, corev1.ResourceCPU: 65, "nvidia.com/gpu": 3, corev1.ResourceEphemeralStorage: 1,
	}
	got := resourcesDuration(rd)
	want := "1m5s*(1 cpu),1s*(10Gi ephemeral-storage),8s*(100Mi memory),3s*(1 nvidia.com/gpu)"
	if got != want {
		t.Errorf("resourcesDuration = %q, want %q", got, want)
	}
}

func TestLoopIndex(t *testing.T) {
	for name, want := range map[string]int{
		"loop(0:x y)": 0, "loop(12:a:1,k:v)": 12, "r(1)": -1, "plain": -1, "a:b(1:c)": -1, "x(:y)": -1, "x(y:z)": -1,
	} {
		if got := loopIndex(name); got != want {
			t.Errorf("loopIndex(%q) = %d, want %d", name, got, want)
		}
	}
}
