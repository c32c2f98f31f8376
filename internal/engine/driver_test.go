package engine

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// t0 is the fake clock's start.
var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// stepEnd is how the fake runtime ends one launched step.
type stepEnd struct {
	phase    v1alpha1.NodePhase // Succeeded (default), Failed, Error
	exitCode int32
	message  string
	result   *string           // stdout; reported only when IncludeResult
	params   map[string]string // output parameter values
	duration time.Duration     // how long it runs (default 1s)
	pending  bool              // never starts (stays Pending)
	hang     bool              // runs until killed or past its deadline
	running  bool              // reports Running, then nothing (a daemon)
	deaf     bool              // ignores Launch.Deadline (only a Kill stops it)
	noExit   bool              // reports no exit code (the main container never ran)
	arts     []v1alpha1.Artifact
	ctrs     []ContainerResult // a containerSet's containers, reported at the end
}

// driver plays controller and runtime around Reconcile: it persists the
// status, starts launches on a fake clock, reports their results, and
// advances the clock to the next event.
type driver struct {
	t         testing.TB
	wf        *v1alpha1.Workflow
	now       time.Time
	templates TemplateResolver
	limits    Limits
	respond   func(d *driver, l Launch) *stepEnd // per-test override; nil falls back to convention
	idle      func(d *driver) bool               // called when nothing is due: may change the workflow
	passes    int
	launches  []Launch
	kills     []Kill
	running   map[string]*fakePod
	pending   map[string]StepResult
	maxPasses int
	last      Result
	prepared  *Prepared
}

type fakePod struct {
	launch  Launch
	out     stepEnd
	start   time.Time
	end     time.Time // zero: never ends on its own
	started bool      // Running reported
}

// load parses one YAML file (Workflow plus any WorkflowTemplates) into a
// driver. The workflow's name is metadata.name, or generateName without its
// trailing "-".
func load(t testing.TB, yaml string) *driver {
	t.Helper()
	docs, err := spec.Load("test.yaml", []byte(yaml), spec.Lenient)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	d := &driver{t: t, now: t0, running: map[string]*fakePod{}, pending: map[string]StepResult{}, maxPasses: 5000, prepared: NewPrepared()}
	res := testResolver{}
	for _, doc := range docs {
		switch o := doc.Object.(type) {
		case *v1alpha1.Workflow:
			d.wf = o
		case *v1alpha1.WorkflowTemplate:
			res[o.Name] = &o.Spec
		case *v1alpha1.ClusterWorkflowTemplate:
			res["cluster/"+o.Name] = &o.Spec
		}
	}
	if d.wf == nil {
		t.Fatal("no Workflow in the YAML")
	}
	if d.wf.Name == "" {
		d.wf.Name = strings.TrimSuffix(d.wf.GenerateName, "-")
	}
	d.wf.UID = "uid-1"
	d.wf.Namespace = "default"
	d.wf.CreationTimestamp = metav1.NewTime(t0)
	if len(res) > 0 {
		d.templates = res
	}
	return d
}

// testResolver resolves templateRef from the WorkflowTemplates of the YAML.
type testResolver map[string]*v1alpha1.WorkflowSpec

func (r testResolver) Template(ref v1alpha1.TemplateRef) (*v1alpha1.Template, error) {
	key := ref.Name
	if ref.ClusterScope {
		key = "cluster/" + ref.Name
	}
	s, ok := r[key]
	if !ok {
		return nil, fmt.Errorf("workflow template %s not found", ref.Name)
	}
	for i := range s.Templates {
		if s.Templates[i].Name == ref.Template {
			return &s.Templates[i], nil
		}
	}
	return nil, fmt.Errorf("template %s not found in workflow template %s", ref.Template, ref.Name)
}

// reconcile runs one pass with the pending results.
func (d *driver) reconcile() Result {
	d.t.Helper()
	before := sumsOf(d.wf.Status.Nodes)
	res, err := checkedReconcile(d.t, Snapshot{Workflow: d.wf, Templates: d.templates, Results: d.pending, Limits: d.limits, Prepared: d.prepared}, d.now)
	if err != nil {
		d.t.Fatalf("Reconcile: %v", err)
	}
	d.passes++
	d.pending = map[string]StepResult{}
	applyResult(d.wf, res)
	d.last = res
	checkSums(d.t, d.wf, before, res.Changed)
	for _, k := range res.Plan.Kill {
		d.kills = append(d.kills, k)
		delete(d.running, k.NodeID)
	}
	for _, l := range res.Plan.Launch {
		d.launches = append(d.launches, l)
		d.start(l)
	}
	return res
}

// run drives the workflow to completion.
func (d *driver) run() *driver {
	d.t.Helper()
	for i := 0; i < d.maxPasses; i++ {
		res := d.reconcile()
		if d.wf.Status.Phase.Completed() {
			return d
		}
		d.collect()
		if len(d.pending) > 0 {
			continue
		}
		if d.idle != nil && d.idle(d) {
			continue
		}
		next := d.nextEvent(res.RequeueAfter)
		if next.IsZero() {
			d.t.Fatalf("stuck at %v: nothing running and no timer\n%s", d.now.Sub(t0), d.dump())
		}
		d.now = next
		d.collect()
	}
	d.t.Fatalf("not completed after %d passes\n%s", d.maxPasses, d.dump())
	return d
}

// runFor drives the workflow until the clock reaches t0+dur (or it
// completes), then stops without reporting what is due at that instant.
func (d *driver) runFor(dur time.Duration) *driver {
	d.t.Helper()
	stop := t0.Add(dur)
	for i := 0; i < d.maxPasses; i++ {
		res := d.reconcile()
		if d.wf.Status.Phase.Completed() {
			return d
		}
		d.collect()
		if len(d.pending) > 0 {
			continue
		}
		next := d.nextEvent(res.RequeueAfter)
		if next.IsZero() || !next.Before(stop) {
			d.now = stop
			return d
		}
		d.now = next
		d.collect()
	}
	return d
}

func (d *driver) start(l Launch) {
	out := d.decide(l)
	p := &fakePod{launch: l, out: *out, start: d.now}
	if !out.hang && !out.pending && !out.running {
		dur := out.duration
		if dur == 0 {
			dur = time.Second
		}
		p.end = d.now.Add(dur)
	}
	d.running[l.NodeID] = p
}

func (d *driver) decide(l Launch) *stepEnd {
	if d.respond != nil {
		if o := d.respond(d, l); o != nil {
			return o
		}
	}
	return conventionOutcome(l)
}

var (
	exitRE  = regexp.MustCompile(`exit (\d+)`)
	sleepRE = regexp.MustCompile(`sleep (\d+)(s|m|h|d)?`)
	echoRE  = regexp.MustCompile(`echo "?([^";&|\n]*)`)
	printRE = regexp.MustCompile(`print\("([^"]*)"\)`)
)

// conventionOutcome decides a step's end from its command line: "exit N"
// fails with N, "sleep N" takes N seconds, "echo X" prints X.
func conventionOutcome(l Launch) *stepEnd {
	line := commandLine(l.Template)
	o := &stepEnd{phase: v1alpha1.NodeSucceeded}
	if m := exitRE.FindStringSubmatch(line); m != nil && m[1] != "0" {
		n, _ := strconv.Atoi(m[1])
		o.phase, o.exitCode = v1alpha1.NodeFailed, int32(n)
	}
	if m := sleepRE.FindStringSubmatch(line); m != nil {
		n, _ := strconv.Atoi(m[1])
		unit := map[string]time.Duration{"": time.Second, "s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]]
		o.duration = time.Duration(n) * unit
	}
	if m := echoRE.FindStringSubmatch(line); m != nil {
		s := strings.TrimSpace(m[1])
		o.result = &s
	}
	if m := printRE.FindStringSubmatch(line); m != nil {
		s := m[1]
		o.result = &s
	}
	return o
}

func commandLine(t *v1alpha1.Template) string {
	switch {
	case t.Container != nil:
		return strings.Join(append(append([]string{}, t.Container.Command...), t.Container.Args...), " ")
	case t.Script != nil:
		return strings.Join(append(append([]string{}, t.Script.Command...), t.Script.Args...), " ") + " " + t.Script.Source
	}
	return ""
}

// collect turns what is due at d.now into pending results.
func (d *driver) collect() {
	for _, id := range sortedKeys(d.running) {
		p := d.running[id]
		if p.out.pending {
			continue
		}
		if res, done := d.finished(p); done {
			d.pending[id] = res
			delete(d.running, id)
			continue
		}
		if !p.started {
			p.started = true
			d.pending[id] = StepResult{Phase: v1alpha1.NodeRunning, StartedAt: p.start, PodIP: "10.0.0.1", HostNode: "host"}
		}
	}
}

// finished reports a pod's final result when it is due, its deadlines
// included.
func (d *driver) finished(p *fakePod) (StepResult, bool) {
	l := p.launch
	if !l.Deadline.IsZero() && !p.out.deaf && !d.now.Before(l.Deadline) && (p.end.IsZero() || p.end.After(l.Deadline)) {
		return StepResult{Phase: v1alpha1.NodeFailed, Message: "Step exceeded its deadline", ExitCode: i32(143),
			StartedAt: p.start, FinishedAt: d.now}, true
	}
	if l.ActiveDeadline > 0 {
		ad := p.start.Add(l.ActiveDeadline)
		if !d.now.Before(ad) && (p.end.IsZero() || p.end.After(ad)) {
			return StepResult{Phase: v1alpha1.NodeFailed, Message: "Pod was active on the node longer than the specified deadline",
				StartedAt: p.start, FinishedAt: d.now}, true
		}
	}
	if p.end.IsZero() || d.now.Before(p.end) {
		return StepResult{}, false
	}
	o := p.out
	res := StepResult{Phase: o.phase, Message: o.message, ExitCode: i32(o.exitCode), StartedAt: p.start, FinishedAt: p.end,
		Containers: o.ctrs}
	if o.noExit {
		res.ExitCode = nil
	}
	if res.Phase == "" {
		res.Phase = v1alpha1.NodeSucceeded
	}
	out := &v1alpha1.Outputs{}
	if l.IncludeResult && o.result != nil {
		s := *o.result
		out.Result = &s
	}
	for _, p := range l.Template.Outputs.Parameters {
		if v, ok := o.params[p.Name]; ok {
			out.Parameters = append(out.Parameters, v1alpha1.Parameter{Name: p.Name, Value: v1alpha1.AnyStringPtr(v), GlobalName: p.GlobalName})
		} else if p.ValueFrom != nil && p.ValueFrom.Default != nil {
			out.Parameters = append(out.Parameters, v1alpha1.Parameter{Name: p.Name, Value: p.ValueFrom.Default, GlobalName: p.GlobalName})
		}
	}
	out.Artifacts = o.arts
	if out.Result != nil || len(out.Parameters) > 0 || len(out.Artifacts) > 0 {
		res.Outputs = out
	}
	return res, true
}

func i32(v int32) *int32 { return &v }

// nextEvent is the earliest pod end, deadline or requeue time.
func (d *driver) nextEvent(requeue time.Duration) time.Time {
	var next time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && t.After(d.now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
		if !t.IsZero() && !t.After(d.now) && next.IsZero() {
			next = d.now.Add(time.Millisecond)
		}
	}
	for _, p := range d.running {
		consider(p.end)
		if !p.out.deaf {
			consider(p.launch.Deadline)
		}
		if p.launch.ActiveDeadline > 0 {
			consider(p.start.Add(p.launch.ActiveDeadline))
		}
	}
	if requeue > 0 {
		consider(d.now.Add(requeue))
	}
	return next
}

// node returns the node with this name.
func (d *driver) node(name string) v1alpha1.NodeStatus {
	d.t.Helper()
	n, ok := d.wf.Status.Nodes[v1alpha1.NodeID(d.wf.Name, name)]
	if !ok {
		d.t.Fatalf("no node %q\n%s", name, d.dump())
	}
	return n
}

func (d *driver) has(name string) bool {
	_, ok := d.wf.Status.Nodes[v1alpha1.NodeID(d.wf.Name, name)]
	return ok
}

// names maps node IDs to node names.
func (d *driver) names(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if n, ok := d.wf.Status.Nodes[id]; ok {
			out = append(out, n.Name)
		} else {
			out = append(out, "?"+id)
		}
	}
	return out
}

func (d *driver) children(name string) []string { return d.names(d.node(name).Children) }

func (d *driver) outbound(name string) []string { return d.names(d.node(name).OutboundNodes) }

// launchOf returns the launch of the node with this name.
func (d *driver) launchOf(name string) Launch {
	d.t.Helper()
	id := v1alpha1.NodeID(d.wf.Name, name)
	for _, l := range d.launches {
		if l.NodeID == id {
			return l
		}
	}
	d.t.Fatalf("no launch for %q", name)
	return Launch{}
}

// dump renders the node tree for failure messages.
func (d *driver) dump() string {
	var lines []string
	for _, n := range d.wf.Status.Nodes {
		lines = append(lines, fmt.Sprintf("  %-40s %-9s %-9s %q children=%v", n.Name, n.Type, n.Phase, n.Message, d.names(n.Children)))
	}
	sort.Strings(lines)
	return fmt.Sprintf("workflow %s %q\n%s", d.wf.Status.Phase, d.wf.Status.Message, strings.Join(lines, "\n"))
}

// expect checks the workflow phase and message and the listed nodes. A
// node is described as "Type Phase" or "Type Phase message"; "Phase" alone
// skips the type check.
func (d *driver) expect(phase v1alpha1.WorkflowPhase, message string, nodes map[string]string) {
	d.t.Helper()
	st := d.wf.Status
	if st.Phase != phase || st.Message != message {
		d.t.Errorf("workflow: got %s %q, want %s %q\n%s", st.Phase, st.Message, phase, message, d.dump())
	}
	for name, want := range nodes {
		if !d.has(name) {
			d.t.Errorf("missing node %q\n%s", name, d.dump())
			continue
		}
		n := d.node(name)
		if got := describe(n, want); got != want {
			d.t.Errorf("node %q: got %q, want %q", name, got, want)
		}
	}
}

// childFailed is the message of a workflow whose node without a message (a
// DAG) failed through the node called name, whose message is msg.
func (d *driver) childFailed(name, msg string) string {
	return fmt.Sprintf("child '%s' failed: %s", v1alpha1.NodeID(d.wf.Name, name), msg)
}

// expectExactly is expect plus: no other nodes exist.
func (d *driver) expectExactly(phase v1alpha1.WorkflowPhase, message string, nodes map[string]string) {
	d.t.Helper()
	d.expect(phase, message, nodes)
	for _, n := range d.wf.Status.Nodes {
		if _, ok := nodes[n.Name]; !ok {
			d.t.Errorf("unexpected node %q (%s %s %q)", n.Name, n.Type, n.Phase, n.Message)
		}
	}
}

// describe renders n in the form of want.
func describe(n v1alpha1.NodeStatus, want string) string {
	parts := strings.SplitN(want, " ", 3)
	isType := len(parts) > 1 && isNodeType(parts[0])
	switch {
	case !isType && len(parts) == 1:
		return string(n.Phase)
	case !isType:
		return string(n.Phase) + " " + n.Message
	case len(parts) == 2:
		return string(n.Type) + " " + string(n.Phase)
	}
	return string(n.Type) + " " + string(n.Phase) + " " + n.Message
}

func isNodeType(s string) bool {
	switch v1alpha1.NodeType(s) {
	case v1alpha1.NodeTypePod, v1alpha1.NodeTypeSteps, v1alpha1.NodeTypeStepGroup, v1alpha1.NodeTypeDAG,
		v1alpha1.NodeTypeTaskGroup, v1alpha1.NodeTypeRetry, v1alpha1.NodeTypeSkipped, v1alpha1.NodeTypeSuspend,
		v1alpha1.NodeTypeHTTP, v1alpha1.NodeTypePlugin, v1alpha1.NodeTypeContainer:
		return true
	}
	return false
}

// eq fails the test when got and want differ (compared as JSON).
func eq(t testing.TB, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// param returns an output parameter of a node.
func param(n v1alpha1.NodeStatus, name string) string {
	if n.Outputs == nil {
		return "<no outputs>"
	}
	for _, p := range n.Outputs.Parameters {
		if p.Name == name && p.Value != nil {
			return p.Value.String()
		}
	}
	return "<missing>"
}

// arg returns the value of an input parameter of a launch.
func arg(l Launch, name string) string {
	for _, p := range l.Template.Inputs.Parameters {
		if p.Name == name && p.Value != nil {
			return p.Value.String()
		}
	}
	return "<missing>"
}

// argsOf returns the container args (or command) of a launch, joined.
func argsOf(l Launch) string { return commandLine(l.Template) }

// resume sets a Running suspend node Succeeded, as `argo resume` does.
func (d *driver) resume(name string) bool {
	id := v1alpha1.NodeID(d.wf.Name, name)
	n, ok := d.wf.Status.Nodes[id]
	if !ok || n.Type != v1alpha1.NodeTypeSuspend || n.Phase != v1alpha1.NodeRunning {
		return false
	}
	n.Phase = v1alpha1.NodeSucceeded
	n.FinishedAt = metav1.NewTime(d.now)
	d.wf.Status.Nodes[id] = n
	return true
}

// fixed returns a respond function giving each template (by template name)
// a fixed outcome; others follow the convention.
func fixed(m map[string]*stepEnd) func(*driver, Launch) *stepEnd {
	return func(_ *driver, l Launch) *stepEnd {
		if o, ok := m[l.Template.Name]; ok {
			c := *o
			return &c
		}
		return nil
	}
}

func str(s string) *string { return &s }

func metav1ObjectMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", UID: "uid-1", CreationTimestamp: metav1.NewTime(t0)}
}

func containerOf(cmd ...string) *corev1.Container {
	return &corev1.Container{Image: "busybox", Command: cmd}
}

func ptrIntOrString(s string) *intstr.IntOrString {
	v := intstr.FromString(s)
	return &v
}

// applyResult takes a pass's status and metadata into wf, as the
// controller does before it persists.
func applyResult(wf *v1alpha1.Workflow, res Result) {
	wf.Status = res.Status
	if m := res.Metadata; m != nil {
		wf.Labels, wf.Annotations = m.Labels, m.Annotations
	}
}
