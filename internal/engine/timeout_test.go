package engine

import (
	"testing"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const timeoutsStepYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: timeouts-step-
spec:
  entrypoint: sleep
  templates:
  - name: sleep
    container:
      image: argoproj/argosay:v2
      command: [bash, -c]
      args: ["echo 123; sleep 1d"]
    activeDeadlineSeconds: 10
`

// timeouts-step.yaml: the template's activeDeadlineSeconds becomes the
// pod's; the runtime kills it and reports the pod's message (rule 8.2).
func TestTimeoutsStepConformance(t *testing.T) {
	d := load(t, timeoutsStepYAML).run()
	msg := "Pod was active on the node longer than the specified deadline"
	d.expectExactly(v1alpha1.WorkflowFailed, msg, map[string]string{"timeouts-step": "Pod Failed " + msg})
	eq(t, "active deadline", d.launchOf("timeouts-step").ActiveDeadline, 10*time.Second)
	eq(t, "pod name of the root", d.launchOf("timeouts-step").PodName, "timeouts-step")
}

const dagTaskTimeoutYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: dag-task-level-timeout-
spec:
  entrypoint: diamond
  templates:
  - name: diamond
    dag:
      tasks:
      - name: A
        template: echo
        arguments:
          parameters: [{name: timeout, value: "20s"}]
      - name: B
        depends: "A"
        template: echo
        arguments:
          parameters: [{name: timeout, value: "10s"}]
      - name: C
        depends: "A"
        template: echo
        arguments:
          parameters: [{name: timeout, value: "20s"}]
  - name: echo
    timeout: "{{inputs.parameters.timeout}}"
    inputs:
      parameters:
      - name: timeout
    container:
      image: busybox
      command: [sleep, "15s"]
`

// dag-task-level-timeout.yaml: a templated timeout becomes the launch's
// deadline, measured from the node's start (rule 8.3).
func TestDAGTaskLevelTimeoutConformance(t *testing.T) {
	d := load(t, dagTaskTimeoutYAML).run()
	p := "dag-task-level-timeout"
	d.expectExactly(v1alpha1.WorkflowFailed, d.childFailed(p+".B", "Step exceeded its deadline"), map[string]string{
		p:        "DAG Failed ",
		p + ".A": "Pod Succeeded",
		p + ".B": "Pod Failed Step exceeded its deadline",
		p + ".C": "Pod Succeeded",
	})
	a, b := d.launchOf(p+".A"), d.launchOf(p+".B")
	eq(t, "A deadline", a.Deadline, d.node(p+".A").StartedAt.Add(20*time.Second))
	eq(t, "B deadline", b.Deadline, d.node(p+".B").StartedAt.Add(10*time.Second))
	eq(t, "timeout substituted", b.Template.Timeout, "10s")
}

func deadlineYAML(extra string) string {
	return `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: dl}
spec:
  entrypoint: main
  activeDeadlineSeconds: 10
  onExit: exit
  templates:
  - name: main
    steps:
    - - {name: long, template: long}
` + extra + `
  - name: long
    container: {image: busybox, command: [sleep, "60"]}
  - name: exit
    container: {image: busybox, command: [sleep, "30"]}
`
}

// Rule 8.1: past the workflow deadline, running pods are killed and Failed
// "Step exceeded its deadline"; the exit handler still runs and ignores the
// deadline; the workflow fails the normal way.
func TestWorkflowDeadline(t *testing.T) {
	d := load(t, deadlineYAML(""))
	d.respond = func(_ *driver, l Launch) *stepEnd {
		o := conventionOutcome(l)
		o.deaf = l.Template.Name == "long" // ignores its deadline: only the engine stops it
		return o
	}
	d.run()
	long := v1alpha1.NodeID("dl", "dl[0].long")
	d.expect(v1alpha1.WorkflowFailed, "child '"+long+"' failed", map[string]string{
		"dl[0].long": "Pod Failed Step exceeded its deadline",
		"dl.onExit":  "Pod Succeeded",
	})
	eq(t, "kill", d.kills, []Kill{{NodeID: long, Reason: "Step exceeded its deadline"}})
	eq(t, "long deadline", d.launchOf("dl[0].long").Deadline, t0.Add(10*time.Second))
	eq(t, "exit has no deadline", d.launchOf("dl.onExit").Deadline, time.Time{})
	eq(t, "exit ran after the deadline", d.node("dl.onExit").FinishedAt.Time, t0.Add(40*time.Second))
}

// Rule 8.1: after the deadline no pod is created: the node is Error
// "<name> exceeded its deadline"; suspend nodes fail too.
func TestWorkflowDeadlineNewPodsAndSuspend(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: dn}
spec:
  entrypoint: main
  activeDeadlineSeconds: 5
  templates:
  - name: main
    steps:
    - - {name: wait, template: wait}
      - {name: a, template: short}
    - - {name: b, template: short}
  - name: wait
    suspend: {}
  - name: short
    container: {image: busybox, command: [sleep, "9"]}
`)
	d.respond = func(_ *driver, l Launch) *stepEnd { return &stepEnd{duration: 9 * time.Second, hang: true} }
	d.run()
	d.expect(v1alpha1.WorkflowFailed, d.node("dn").Message, map[string]string{
		"dn[0].wait": "Suspend Failed Step exceeded its deadline",
		"dn[0].a":    "Pod Failed Step exceeded its deadline",
	})
	if d.has("dn[1].b") {
		t.Error("the second group must not start")
	}
	eq(t, "ended at the deadline", d.wf.Status.FinishedAt.Time, t0.Add(5*time.Second))
}

// Rule 8.3: a pod that is still Pending after its timeout fails "timeout",
// and its group fails at once, continueOn or not.
func TestPendingTimeout(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: pt}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: stuck, continueOn: {failed: true}}
  - name: stuck
    timeout: 30s
    container: {image: busybox, command: [echo, hi]}
`)
	d.respond = func(*driver, Launch) *stepEnd { return &stepEnd{pending: true} }
	d.run()
	d.expect(v1alpha1.WorkflowFailed, "timeout", map[string]string{
		"pt[0].a": "Pod Failed timeout",
		"pt[0]":   "StepGroup Failed timeout",
		"pt":      "Steps Failed timeout",
	})
	eq(t, "killed", len(d.kills), 1)
	eq(t, "at", d.wf.Status.FinishedAt.Time, t0.Add(30*time.Second+time.Millisecond))
}

// Rule 8.3: one second or less left at creation is an Error.
func TestTimeoutTooShort(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: ts}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: quick}
  - name: quick
    timeout: 1s
    container: {image: busybox, command: [echo, hi]}
`).run()
	d.expect(v1alpha1.WorkflowFailed, "step group deemed errored due to child ts[0].a error: ts[0].a exceeded its deadline", map[string]string{
		"ts[0].a": "Pod Error ts[0].a exceeded its deadline",
		"ts[0]":   "StepGroup Error step group deemed errored due to child ts[0].a error: ts[0].a exceeded its deadline",
	})
}

// Rule 7.4: retries stop at the workflow deadline.
func TestRetryStopsAtDeadline(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: rd}
spec:
  entrypoint: main
  activeDeadlineSeconds: 10
  templates:
  - name: main
    retryStrategy: {limit: 10, backoff: {duration: "20"}}
    container: {image: busybox, command: [sh, -c, "exit 1"]}
`).run()
	d.expect(v1alpha1.WorkflowFailed, "retry exceeded workflow deadline 2025-01-02 03:04:15 +0000 UTC", map[string]string{
		"rd": "Retry Failed retry exceeded workflow deadline 2025-01-02 03:04:15 +0000 UTC"})
}

const suspendTemplateYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: suspend-template-
spec:
  entrypoint: suspend
  templates:
  - name: suspend
    steps:
    - - name: build
        template: hello-world
    - - name: approve
        template: approve
    - - name: delay
        template: delay
    - - name: release
        template: hello-world
  - name: approve
    suspend: {}
  - name: delay
    suspend:
      duration: "20"
  - name: hello-world
    container:
      image: busybox
      command: [echo]
      args: ["hello world"]
`

// suspend-template.yaml with a simulated resume; the delay resumes itself
// after 20 seconds (rule 8.5).
func TestSuspendTemplateConformance(t *testing.T) {
	d := load(t, suspendTemplateYAML)
	var resumedAt time.Time
	d.idle = func(d *driver) bool {
		if d.has("suspend-template[1].approve") && resumedAt.IsZero() {
			d.now = d.now.Add(time.Hour) // someone approves an hour later
			resumedAt = d.now
			return d.resume("suspend-template[1].approve")
		}
		return false
	}
	d.run()
	p := "suspend-template"
	d.expectExactly(v1alpha1.WorkflowSucceeded, "", map[string]string{
		p:                 "Steps Succeeded",
		p + "[0]":         "StepGroup Succeeded",
		p + "[0].build":   "Pod Succeeded",
		p + "[1]":         "StepGroup Succeeded",
		p + "[1].approve": "Suspend Succeeded",
		p + "[2]":         "StepGroup Succeeded",
		p + "[2].delay":   "Suspend Succeeded",
		p + "[3]":         "StepGroup Succeeded",
		p + "[3].release": "Pod Succeeded",
	})
	delay := d.node(p + "[2].delay")
	eq(t, "delay started", delay.StartedAt.Time, resumedAt)
	eq(t, "delay lasted", delay.FinishedAt.Sub(delay.StartedAt.Time), 20*time.Second)
}

// Rule 8.5: supplied outputs take their defaults when the duration passes;
// without a default the node errors.
func TestSuspendSuppliedOutputs(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: so}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: wait, template: wait}
    - - name: use
        template: show
        arguments: {parameters: [{name: v, value: "{{steps.wait.outputs.parameters.answer}}"}]}
  - name: wait
    suspend: {duration: 1m}
    outputs:
      parameters:
      - name: answer
        valueFrom: {supplied: {}, default: "no"}
  - name: show
    inputs: {parameters: [{name: v}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.v}}"]}
`)
	var waits []time.Duration
	d.idle = func(d *driver) bool {
		waits = append(waits, d.last.RequeueAfter)
		return false
	}
	d.run()
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{"so[0].wait": "Suspend Succeeded"})
	eq(t, "requeue", waits[0], time.Minute)
	eq(t, "answer", arg(d.launchOf("so[1].use"), "v"), "no")
}
