package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// leafNodeType is the node type of a leaf template (rule 1.1).
func leafNodeType(t *v1alpha1.Template) v1alpha1.NodeType {
	switch t.Type() {
	case v1alpha1.TemplateTypeHTTP:
		return v1alpha1.NodeTypeHTTP
	case v1alpha1.TemplateTypePlugin:
		return v1alpha1.NodeTypePlugin
	}
	return v1alpha1.NodeTypePod
}

// executeLeaf creates a leaf node Pending with a Launch, or revisits an
// existing one (its result was merged before the walk).
func (r *pass) executeLeaf(in invocation, opts execOpts) (outcome, error) {
	if n, ok := r.byName(in.name); ok {
		if r.relaunch[n.ID] && !fulfilled(n) && r.shutdown == "" {
			n, err := r.relaunchLeaf(n, in, opts)
			return outcome{node: n}, err
		}
		return r.revisitLeaf(n, in), nil
	}
	if r.stopsNew(opts) {
		n, ok := r.newNode(nodeInit{name: in.name, typ: leafNodeType(in.tmpl), h: in.h, scope: in.scope,
			boundaryID: opts.boundaryID, phase: v1alpha1.NodeFailed, flag: opts.flag, inputs: in.inputs,
			message: fmt.Sprintf("workflow shutdown with strategy: %s", r.shutdown)})
		if !ok {
			return outcome{hold: holdNodeLimit}, nil
		}
		return outcome{node: n}, nil
	}
	processed, err := processLeaf(in.tmpl, in.inputs, in.v)
	if err != nil {
		return outcome{}, err
	}
	n, ok := r.newNode(nodeInit{name: in.name, typ: leafNodeType(in.tmpl), h: in.h, scope: in.scope,
		boundaryID: opts.boundaryID, phase: v1alpha1.NodePending, flag: opts.flag, inputs: in.inputs})
	if !ok {
		return outcome{hold: holdNodeLimit}, nil
	}
	if cs := in.tmpl.ContainerSet; cs != nil && n.Type == v1alpha1.NodeTypePod {
		if !r.newContainerNodes(n, cs, in) {
			return outcome{node: n, hold: holdNodeLimit}, nil
		}
		n = r.nodes[n.ID]
	}
	deadline, err := r.leafDeadline(n, processed, opts)
	if err != nil {
		return outcome{node: n}, err
	}
	r.launch(n, processed, deadline, opts)
	return outcome{node: n}, nil
}

// relaunchLeaf plans the Launch of an existing leaf node again: the runtime
// never started it (Snapshot.Relaunch). The node goes back to Pending.
func (r *pass) relaunchLeaf(n v1alpha1.NodeStatus, in invocation, opts execOpts) (v1alpha1.NodeStatus, error) {
	r.sawWaiting()
	processed, err := processLeaf(in.tmpl, in.inputs, in.v)
	if err != nil {
		return n, err
	}
	deadline, err := r.leafDeadline(n, processed, opts)
	if err != nil {
		return n, err
	}
	if n.Phase != v1alpha1.NodePending {
		n = r.setPhase(n.ID, v1alpha1.NodePending)
	}
	r.launch(n, processed, deadline, opts)
	return n, nil
}

// processLeaf substitutes a leaf template fully and leniently (rule 6.9):
// inputs, globals, node.name, pod.name, steps.name, retries, lastRetry. The
// result is a private copy for the Launch.
func processLeaf(t *v1alpha1.Template, inputs *v1alpha1.Inputs, v *vars) (*v1alpha1.Template, error) {
	cp := *t
	cp.Inputs = *inputs
	out, err := substitute(v, &cp, expr.Lenient)
	if err != nil {
		return nil, err
	}
	if out == &cp {
		out = cp.DeepCopy()
	}
	return out, nil
}

// launch plans the Launch of a leaf node.
func (r *pass) launch(n v1alpha1.NodeStatus, t *v1alpha1.Template, deadline time.Time, opts execOpts) {
	pod := podName(r.wf.Name, n.Name, t.Name)
	include := t.Data != nil || r.includeResult(n.Name, opts)
	env := map[string]string{
		"ARGO_POD_NAME":              pod,
		"ARGO_NODE_ID":               n.ID,
		"ARGO_NODE_NAME":             n.Name,
		"ARGO_WORKFLOW_NAME":         r.wf.Name,
		"ARGO_WORKFLOW_UID":          string(r.wf.UID),
		"ARGO_INCLUDE_SCRIPT_OUTPUT": strconv.FormatBool(include),
	}
	if !deadline.IsZero() {
		env["ARGO_DEADLINE"] = deadline.UTC().Format(time.RFC3339)
	}
	r.addLaunch(Launch{
		NodeID:         n.ID,
		NodeName:       n.Name,
		PodName:        pod,
		Template:       t,
		IncludeResult:  include,
		ActiveDeadline: activeDeadline(t.ActiveDeadlineSeconds),
		Deadline:       deadline,
		Env:            env,
		OnExit:         opts.onExit,
	})
}

func activeDeadline(v *intstr.IntOrString) time.Duration {
	if v == nil {
		return 0
	}
	secs := v.IntValue()
	if v.Type == intstr.String {
		n, err := strconv.Atoi(strings.TrimSpace(v.StrVal))
		if err != nil {
			return 0
		}
		secs = n
	}
	if secs <= 0 {
		return 0
	}
	return time.Duration(secs) * time.Second
}

// includeResult reports whether stdout must be captured (rule 11.3): the
// parent Steps or DAG template mentions steps.<name>.outputs.result (or the
// tasks. or bracket form) for this step's name.
func (f *facts) includeResult(nodeName string, opts execOpts) bool {
	parent := opts.boundaryTmpl
	if parent == nil {
		return false
	}
	refs, ok := f.resultRefs[parent]
	if !ok {
		refs = collectResultRefs(parent)
		if f.resultRefs == nil {
			f.resultRefs = map[*v1alpha1.Template]map[string]bool{}
		}
		f.resultRefs[parent] = refs
	}
	return refs[stepOrTaskName(nodeName)]
}

// stepOrTaskName extracts the step or task name from a node name, removing
// loop and retry suffixes: "wf[0].fan(0:1)(0)" gives "fan"
// (ctl/operator.go getStepOrDAGTaskName).
func stepOrTaskName(name string) string {
	opener := byte(0)
	end := len(name)
loop:
	for i := len(name) - 1; i >= 0; i-- {
		c := name[i]
		switch {
		case opener != 0 && c == opener:
			opener = 0
		case opener != 0:
		case c == ')':
			opener = '('
		case c == ']':
			opener = '['
		default:
			end = i + 1
			break loop
		}
	}
	name = name[:end]
	if dot := strings.LastIndexByte(name, '.'); dot >= 0 {
		name = name[dot+1:]
	}
	return name
}

// mergeResults applies the runtime's reports to Pod nodes before the walk,
// as Argo's pod reconciliation does. A report for a completed node is
// ignored; Running only moves a Pending node on.
func (r *pass) mergeResults() {
	if len(r.results) == 0 {
		return
	}
	for _, id := range sortedKeys(r.results) {
		r.mergeResult(id, r.results[id])
	}
}

func (r *pass) mergeResult(id string, res StepResult) {
	n, ok := r.nodes[id]
	if !ok || !isLeafType(n.Type) || n.Phase.Fulfilled() {
		return
	}
	switch res.Phase {
	case v1alpha1.NodeRunning:
		r.mergeRunning(n, res)
	case v1alpha1.NodeSucceeded, v1alpha1.NodeFailed, v1alpha1.NodeError:
		r.mergeCompleted(n, res)
	}
}

func (r *pass) mergeRunning(n v1alpha1.NodeStatus, res StepResult) {
	if len(res.Containers) > 0 {
		r.mergeContainers(n, res, false)
		n = r.nodes[n.ID]
	}
	if n.Phase != v1alpha1.NodePending {
		return
	}
	n.Phase = v1alpha1.NodeRunning
	if res.HostNode != "" {
		n.HostNodeName = res.HostNode
	}
	if t := r.nodeTemplate(n); t != nil && t.Daemon != nil && *t.Daemon {
		yes := true
		n.Daemoned = &yes
		n.PodIP = res.PodIP
	}
	r.put(n)
}

func (r *pass) mergeCompleted(n v1alpha1.NodeStatus, res StepResult) {
	t := r.nodeTemplate(n)
	phase := res.Phase
	if phase == v1alpha1.NodeSucceeded && t != nil && t.Daemon != nil && *t.Daemon {
		phase = v1alpha1.NodeFailed // a daemon that exits on its own failed (rule 10.5)
	}
	msg := res.Message
	if phase == v1alpha1.NodeFailed && msg == "" && res.ExitCode != nil && *res.ExitCode != 0 {
		msg = fmt.Sprintf("main: Error (exit code %d)", *res.ExitCode)
	}
	n.Phase, n.Message, n.Daemoned = phase, msg, nil
	if res.HostNode != "" {
		n.HostNodeName = res.HostNode
	}
	n.Outputs = resultOutputs(res, t)
	if err := r.boundOutputs(&n); err != nil {
		n.Phase, n.Message = v1alpha1.NodeError, err.Error()
	}
	n.FinishedAt = metav1.NewTime(r.now)
	if !res.FinishedAt.IsZero() {
		n.FinishedAt = metav1.NewTime(res.FinishedAt.UTC())
	}
	if n.Type == v1alpha1.NodeTypePod {
		n.ResourcesDuration = nonEmpty(podResourcesDuration(t, ranFor(n, res)))
		synced := true
		n.TaskResultSynced = &synced
	}
	r.put(n)
	r.mergeContainers(n, res, true)
	r.exportOutputs(n.Outputs)
}

// boundOutputs applies the size limits to what a step reported: a result
// longer than Limits.MaxResultBytes keeps its last bytes, as Argo keeps the
// end of stdout; an output parameter longer than Limits.MaxParameterBytes is
// dropped, and the error says so (the node ends Error).
func (f *facts) boundOutputs(n *v1alpha1.NodeStatus) error {
	out := n.Outputs
	if out == nil {
		return nil
	}
	if out.Result != nil && len(*out.Result) > f.lim.MaxResultBytes {
		tail := lastBytes(*out.Result, f.lim.MaxResultBytes)
		out.Result = &tail
	}
	var err error
	kept := out.Parameters[:0]
	for _, p := range out.Parameters {
		if p.Value != nil && len(*p.Value) > f.lim.MaxParameterBytes {
			if err == nil {
				err = &limitError{node: n.Name, what: fmt.Sprintf("output parameter %q has %d bytes", p.Name, len(*p.Value)),
					key: "maxParameterBytes", limit: f.lim.MaxParameterBytes}
			}
			continue
		}
		kept = append(kept, p)
	}
	out.Parameters = kept
	return err
}

// lastBytes is the end of s in at most max bytes, starting on a rune.
func lastBytes(s string, max int) string {
	i := len(s) - max
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// ranFor is how long a step ran: from the report's times, or else the
// node's.
func ranFor(n v1alpha1.NodeStatus, res StepResult) time.Duration {
	if !res.StartedAt.IsZero() && !res.FinishedAt.IsZero() {
		return res.FinishedAt.Sub(res.StartedAt)
	}
	return n.FinishedAt.Sub(n.StartedAt.Time)
}

// resultOutputs builds a node's outputs from a report: the reported values,
// the exit code, and the globalName of each declared output.
func resultOutputs(res StepResult, t *v1alpha1.Template) *v1alpha1.Outputs {
	var out *v1alpha1.Outputs
	if res.Outputs != nil {
		out = res.Outputs.DeepCopy()
	}
	if res.ExitCode != nil {
		if out == nil {
			out = &v1alpha1.Outputs{}
		}
		code := strconv.Itoa(int(*res.ExitCode))
		out.ExitCode = &code
	}
	if out == nil || t == nil {
		return out
	}
	for i := range out.Parameters {
		p := &out.Parameters[i]
		for _, d := range t.Outputs.Parameters {
			if d.Name == p.Name && p.GlobalName == "" {
				p.GlobalName = d.GlobalName
			}
		}
	}
	for i := range out.Artifacts {
		a := &out.Artifacts[i]
		for _, d := range t.Outputs.Artifacts {
			if d.Name == a.Name && a.GlobalName == "" {
				a.GlobalName = d.GlobalName
			}
		}
	}
	return out
}
