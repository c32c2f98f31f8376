package spec

import (
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

type objectKind int

const (
	kindWorkflow objectKind = iota // a Workflow, or the workflowSpec of a CronWorkflow
	kindTemplate                   // a WorkflowTemplate or ClusterWorkflowTemplate: entrypoint and argument values optional
)

// specValidator checks one WorkflowSpec: of a Workflow, a WorkflowTemplate,
// a ClusterWorkflowTemplate or the workflowSpec of a CronWorkflow.
type specValidator struct {
	r    *reporter
	cat  *Catalog
	meta metav1.ObjectMeta
	spec *v1alpha1.WorkflowSpec
	path string // "spec" or "spec.workflowSpec"
	kind objectKind

	// templates are the templates that names resolve against: the spec's
	// own, or those of the WorkflowTemplate named by workflowTemplateRef.
	templates []v1alpha1.Template
	byName    map[string]*v1alpha1.Template
	args      v1alpha1.Arguments // spec.arguments merged with the referenced template's
	global    *scope
	// templateBase and podTemplateBase are the global scope plus what
	// every template, or every pod template, may refer to (templateScope).
	templateBase, podTemplateBase *scope
}

func newSpecValidator(r *reporter, cat *Catalog, meta metav1.ObjectMeta, spec *v1alpha1.WorkflowSpec, path string, kind objectKind) *specValidator {
	return &specValidator{r: r, cat: cat, meta: meta, spec: spec, path: path, kind: kind}
}

func (v *specValidator) run() {
	v.resolveWorkflowTemplateRef()
	v.indexTemplates()
	v.checkArguments(v.path+".arguments", v.spec.Arguments)
	v.buildGlobalScope()
	v.checkEntrypoint()
	v.checkExitHandlers()
	v.checkSpecFields()
	tp := v.path + ".templates"
	for i := range v.spec.Templates {
		v.template(&v.spec.Templates[i], idx(tp, i))
	}
}

// resolveWorkflowTemplateRef makes the referenced template's spec the source
// of templates and merges its arguments under ours, as Argo does at submit.
func (v *specValidator) resolveWorkflowTemplateRef() {
	v.templates = v.spec.Templates
	v.args = v.spec.Arguments
	ref := v.spec.WorkflowTemplateRef
	if ref == nil {
		return
	}
	p := v.path + ".workflowTemplateRef"
	if ref.Name == "" {
		v.r.add(p+".name", "a workflowTemplateRef needs a name")
		return
	}
	if len(v.spec.Templates) > 0 {
		v.r.add(v.path+".templates", "templates cannot be set together with workflowTemplateRef")
	}
	ts, kind := v.cat.Spec(ref.Name, ref.ClusterScope)
	if ts == nil {
		v.r.add(p+".name", "%s %q not found", kind, ref.Name)
		return
	}
	v.templates = ts.Templates
	v.args = mergeArguments(v.spec.Arguments, ts.Arguments)
	if v.spec.Entrypoint == "" {
		v.spec = withEntrypoint(v.spec, ts.Entrypoint)
	}
}

func withEntrypoint(s *v1alpha1.WorkflowSpec, entry string) *v1alpha1.WorkflowSpec {
	c := *s
	c.Entrypoint = entry
	return &c
}

// mergeArguments returns ours plus the parameters and artifacts of theirs
// that ours does not name.
func mergeArguments(ours, theirs v1alpha1.Arguments) v1alpha1.Arguments {
	out := v1alpha1.Arguments{Parameters: append([]v1alpha1.Parameter(nil), ours.Parameters...), Artifacts: append([]v1alpha1.Artifact(nil), ours.Artifacts...)}
	for _, p := range theirs.Parameters {
		if findParameter(ours.Parameters, p.Name) == nil {
			out.Parameters = append(out.Parameters, p)
		}
	}
	for _, a := range theirs.Artifacts {
		found := false
		for _, o := range ours.Artifacts {
			found = found || o.Name == a.Name
		}
		if !found {
			out.Artifacts = append(out.Artifacts, a)
		}
	}
	return out
}

func findParameter(ps []v1alpha1.Parameter, name string) *v1alpha1.Parameter {
	for i := range ps {
		if ps[i].Name == name {
			return &ps[i]
		}
	}
	return nil
}

func (v *specValidator) indexTemplates() {
	v.byName = make(map[string]*v1alpha1.Template, len(v.templates))
	for i := range v.templates {
		t := &v.templates[i]
		if _, dup := v.byName[t.Name]; !dup && t.Name != "" {
			v.byName[t.Name] = t
		}
	}
	names := make([]string, len(v.spec.Templates))
	for i, t := range v.spec.Templates {
		names[i] = t.Name
	}
	v.checkNames(v.path+".templates", "template", names, invalidFieldName)
}

func (v *specValidator) checkEntrypoint() {
	entry := v.spec.Entrypoint
	if entry == "" {
		if v.kind == kindWorkflow {
			v.r.add(v.path+".entrypoint", "spec.entrypoint is required")
		}
		return
	}
	t, ok := v.byName[entry]
	if !ok {
		if v.spec.WorkflowTemplateRef == nil || v.templates != nil {
			v.r.add(v.path+".entrypoint", "entrypoint template %q not found", entry)
		}
		return
	}
	if v.kind == kindWorkflow {
		v.checkSupplied(v.path+".arguments", t, v.args, entry)
	}
}

// checkExitHandlers checks spec.onExit and spec.hooks.
func (v *specValidator) checkExitHandlers() {
	if v.spec.OnExit != "" {
		if t, ok := v.byName[v.spec.OnExit]; !ok {
			v.r.add(v.path+".onExit", "template %q not found", v.spec.OnExit)
		} else {
			v.checkSupplied(v.path+".onExit", t, v.args, v.spec.OnExit)
		}
	}
	v.checkHooks(v.path+".hooks", v.spec.Hooks, v.global)
}

func (v *specValidator) checkHooks(path string, hooks v1alpha1.LifecycleHooks, sc *scope) {
	for _, name := range sortedKeys(hooks) {
		h := hooks[name]
		p := joinPath(path, string(name))
		if string(name) != "exit" && strings.TrimSpace(h.Expression) == "" {
			v.r.add(p+".expression", "hook %q needs an expression (only the exit hook runs without one)", name)
		}
		if h.Expression != "" {
			checkExprSyntax(v.r, p+".expression", h.Expression)
		}
		t := v.resolveCall(p, h.Template, h.TemplateRef, nil)
		v.checkArgumentsOf(p+".arguments", h.Arguments, t, sc)
	}
}

// checkSpecFields checks the spec-level settings that have a syntax of their own.
func (v *specValidator) checkSpecFields() {
	s := v.spec
	if s.PodGC != nil {
		switch s.PodGC.Strategy {
		case "", "OnPodCompletion", "OnPodSuccess", "OnWorkflowCompletion", "OnWorkflowSuccess":
		default:
			v.r.add(v.path+".podGC.strategy", "unknown strategy %q: use OnPodCompletion, OnPodSuccess, OnWorkflowCompletion or OnWorkflowSuccess", s.PodGC.Strategy)
		}
	}
	if s.ActiveDeadlineSeconds != nil && *s.ActiveDeadlineSeconds < 0 {
		v.r.add(v.path+".activeDeadlineSeconds", "must not be negative")
	}
	checkParallelism(v.r, v.path+".parallelism", s.Parallelism)
	if s.RetryStrategy != nil {
		checkRetryStrategy(v.r, v.path+".retryStrategy", s.RetryStrategy)
	}
	if s.VolumeClaimGC != nil {
		switch s.VolumeClaimGC.Strategy {
		case "", "OnWorkflowCompletion", "OnWorkflowSuccess":
		default:
			v.r.add(v.path+".volumeClaimGC.strategy", "unknown strategy %q: use OnWorkflowCompletion or OnWorkflowSuccess", s.VolumeClaimGC.Strategy)
		}
	}
	if s.Shutdown != "" && s.Shutdown != "Stop" && s.Shutdown != "Terminate" {
		v.r.add(v.path+".shutdown", "unknown shutdown strategy %q: use Stop or Terminate", s.Shutdown)
	}
	if s.TTLStrategy != nil {
		checkNonNegative(v.r, v.path+".ttlStrategy.secondsAfterCompletion", s.TTLStrategy.SecondsAfterCompletion)
		checkNonNegative(v.r, v.path+".ttlStrategy.secondsAfterSuccess", s.TTLStrategy.SecondsAfterSuccess)
		checkNonNegative(v.r, v.path+".ttlStrategy.secondsAfterFailure", s.TTLStrategy.SecondsAfterFailure)
	}
	if s.TemplateDefaults != nil && s.TemplateDefaults.RetryStrategy != nil {
		checkRetryStrategy(v.r, v.path+".templateDefaults.retryStrategy", s.TemplateDefaults.RetryStrategy)
	}
}

func checkNonNegative(r *reporter, path string, n *int32) {
	if n != nil && *n < 0 {
		r.add(path, "must not be negative")
	}
}

// buildGlobalScope lists the workflow.* variables every template may use.
func (v *specValidator) buildGlobalScope() {
	g := newScope()
	g.add("workflow.name", "workflow.namespace", "workflow.uid", "workflow.mainEntrypoint",
		"workflow.serviceAccountName", "workflow.creationTimestamp", "workflow.duration",
		"workflow.status", "workflow.failures", "workflow.labels", "workflow.annotations",
		"workflow.labels.json", "workflow.annotations.json", "workflow.parameters", "workflow.parameters.json")
	g.addPrefix("workflow.creationTimestamp.")
	for _, p := range v.args.Parameters {
		g.add("workflow.parameters." + p.Name)
	}
	if v.kind == kindTemplate {
		g.addPrefix("workflow.parameters.") // submitters (--from, event bindings) may add parameters
	}
	for k := range v.meta.Labels {
		g.add("workflow.labels." + k)
	}
	for k := range v.meta.Annotations {
		g.add("workflow.annotations." + k)
	}
	if wm := v.spec.WorkflowMetadata; wm != nil {
		for k := range wm.Labels {
			g.add("workflow.labels." + k)
		}
		for k := range wm.Annotations {
			g.add("workflow.annotations." + k)
		}
		for k := range wm.LabelsFrom {
			g.add("workflow.labels." + k)
		}
	}
	if v.spec.Priority != nil {
		g.add("workflow.priority")
	}
	if v.path != "spec" || v.kind == kindTemplate || v.meta.Annotations["workflows.argoproj.io/scheduled-time"] != "" {
		// A CronWorkflow's spec, a workflow it created or given
		// --scheduled-time, or a template a CronWorkflow may run.
		g.add("workflow.scheduledTime")
	}
	g.setHint("workflow.parameters", "declare it in spec.arguments.parameters")
	g.setHint("workflow.outputs", "no template exports that globalName")
	v.addGlobalOutputs(g)
	v.global = g
}

// addGlobalOutputs adds workflow.outputs.* for every globalName exported by a template.
func (v *specValidator) addGlobalOutputs(g *scope) {
	forEachTemplate(v.templates, func(t *v1alpha1.Template) {
		for _, p := range t.Outputs.Parameters {
			addGlobalName(g, "workflow.outputs.parameters.", p.GlobalName)
		}
		for _, a := range t.Outputs.Artifacts {
			addGlobalName(g, "workflow.outputs.artifacts.", a.GlobalName)
		}
	})
}

func addGlobalName(g *scope, prefix, name string) {
	switch {
	case name == "":
	case strings.Contains(name, "{{"):
		g.addPrefix(prefix) // named at run time
	default:
		g.add(prefix + name)
	}
}

// forEachTemplate calls fn for every template, including inline ones.
func forEachTemplate(ts []v1alpha1.Template, fn func(*v1alpha1.Template)) {
	for i := range ts {
		walkTemplate(&ts[i], fn, 0)
	}
}

func walkTemplate(t *v1alpha1.Template, fn func(*v1alpha1.Template), depth int) {
	if t == nil || depth > 100 {
		return
	}
	fn(t)
	for _, g := range t.Steps {
		for i := range g {
			walkTemplate(g[i].Inline, fn, depth+1)
		}
	}
	if t.DAG != nil {
		for i := range t.DAG.Tasks {
			walkTemplate(t.DAG.Tasks[i].Inline, fn, depth+1)
		}
	}
}

func (r *reporter) validateObjectMeta(m *metav1.ObjectMeta) {
	if m.Name == "" && m.GenerateName == "" {
		r.warn("metadata", "neither metadata.name nor metadata.generateName is set: a name will be generated")
	}
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}
