package spec

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

var (
	fieldNameRE  = regexp.MustCompile(`^[a-zA-Z0-9][-a-zA-Z0-9]*$`)
	paramNameRE  = regexp.MustCompile(`^[-a-zA-Z0-9_]+$`)
	metricNameRE = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
)

const maxFieldName = 128

// invalidFieldName says why name cannot be a template, step or task name:
// a DNS-1123-style label as Argo applies it (letters of either case, digits
// and '-', starting with a letter or digit, at most 128 characters).
func invalidFieldName(name string) string {
	if len(name) > maxFieldName {
		return "must be no more than 128 characters"
	}
	if !fieldNameRE.MatchString(name) {
		return "must consist of alpha-numeric characters or '-', and must start with an alpha-numeric character"
	}
	return ""
}

func invalidParamName(name string) string {
	if !paramNameRE.MatchString(name) {
		return "must consist of alpha-numeric characters, '_' or '-'"
	}
	return ""
}

// leafTypes are the template types that run something themselves.
func isLeaf(t *v1alpha1.Template) bool {
	return t.Steps == nil && t.DAG == nil
}

func isPodType(t *v1alpha1.Template) bool {
	return t.Container != nil || t.Script != nil || t.Resource != nil || t.ContainerSet != nil || t.Data != nil
}

// templateTypes lists the type fields that are set.
func templateTypes(t *v1alpha1.Template) []string {
	var out []string
	add := func(set bool, name string) {
		if set {
			out = append(out, name)
		}
	}
	add(t.Container != nil, "container")
	add(t.ContainerSet != nil, "containerSet")
	add(t.DAG != nil, "dag")
	add(t.Data != nil, "data")
	add(t.HTTP != nil, "http")
	add(t.Plugin != nil, "plugin")
	add(t.Resource != nil, "resource")
	add(t.Script != nil, "script")
	add(t.Steps != nil, "steps")
	add(t.Suspend != nil, "suspend")
	return out
}

const allTemplateTypes = "container, containerSet, dag, data, http, plugin, resource, script, steps, suspend"

// template checks one template: its type, inputs, outputs, control fields,
// and the variables its body uses.
func (v *specValidator) template(t *v1alpha1.Template, path string) {
	switch types := templateTypes(t); len(types) {
	case 0:
		v.r.add(path, "template %q has no type: set one of %s", t.Name, allTemplateTypes)
		return
	case 1:
	default:
		v.r.add(path, "template %q has several types (%s): set only one", t.Name, strings.Join(types, ", "))
		return
	}
	v.checkInputs(t, path+".inputs")
	v.checkOutputs(t, path+".outputs")
	v.checkControl(t, path)
	sc := v.templateScope(t)
	switch {
	case t.Steps != nil:
		v.steps(t, path, sc)
	case t.DAG != nil:
		v.dag(t, path, sc)
	default:
		v.leaf(t, path, sc)
	}
}

// templateScope is the global scope plus the template's own variables.
// A template without inputs shares one scope with all others of its kind
// (pod or not), so that validating many templates costs no scope each.
func (v *specValidator) templateScope(t *v1alpha1.Template) *scope {
	if v.templateBase == nil {
		base := v.global.clone()
		base.add("steps.name", "tasks.name")
		base.addPrefix("outputs.") // a template may name its own outputs (metrics, paths)
		base.setHint("inputs.parameters", "the template declares no such input parameter")
		base.setHint("inputs.artifacts", "the template declares no such input artifact")
		pod := base.clone()
		pod.add("pod.name")
		v.templateBase, v.podTemplateBase = base, pod
	}
	sc := v.templateBase
	if isPodType(t) {
		sc = v.podTemplateBase
	}
	if len(t.Inputs.Parameters) == 0 && len(t.Inputs.Artifacts) == 0 {
		return sc
	}
	sc = sc.clone()
	if len(t.Inputs.Parameters) > 0 {
		sc.add("inputs.parameters")
	}
	for _, p := range t.Inputs.Parameters {
		sc.add("inputs.parameters." + p.Name)
	}
	for _, a := range t.Inputs.Artifacts {
		sc.add("inputs.artifacts." + a.Name)
		if isLeaf(t) {
			sc.add("inputs.artifacts." + a.Name + ".path")
		}
	}
	return sc
}

func (v *specValidator) leaf(t *v1alpha1.Template, path string, sc *scope) {
	sc.checkValue(v.r, t, path, nil)
	if c := t.Container; c != nil && c.Image == "" && !v.defaultImage() {
		v.r.add(path+".container.image", "a container template needs an image")
	}
	if s := t.Script; s != nil && s.Image == "" && !v.defaultImage() {
		v.r.add(path+".script.image", "a script template needs an image")
	}
	if res := t.Resource; res != nil {
		v.checkResource(res, path+".resource")
	}
	if h := t.HTTP; h != nil && h.URL == "" {
		v.r.add(path+".http.url", "an http template needs a url")
	}
	if s := t.Suspend; s != nil && s.Duration != "" {
		if err := checkDuration(s.Duration, true); err != nil {
			v.r.add(path+".suspend.duration", "%v", err)
		}
	}
	if cs := t.ContainerSet; cs != nil {
		v.checkContainerSet(cs, path+".containerSet")
	}
}

func (v *specValidator) defaultImage() bool {
	d := v.spec.TemplateDefaults
	return d != nil && ((d.Container != nil && d.Container.Image != "") || (d.Script != nil && d.Script.Image != ""))
}

func (v *specValidator) checkResource(res *v1alpha1.ResourceTemplate, path string) {
	switch res.Action {
	case "get", "create", "apply", "delete", "replace", "patch":
	default:
		if !strings.Contains(res.Action, "{{") {
			v.r.add(path+".action", "unknown action %q: use get, create, apply, delete, replace or patch", res.Action)
		}
	}
	if res.Manifest == "" && res.ManifestFrom == nil && len(res.Flags) == 0 {
		v.r.add(path+".manifest", "a resource template needs a manifest, manifestFrom or flags")
	}
	if res.Manifest != "" && !strings.Contains(res.Manifest, "{{") {
		var x any
		if err := yaml.Unmarshal([]byte(res.Manifest), &x); err != nil {
			v.r.add(path+".manifest", "the manifest is not valid YAML: %v", err)
		}
	}
	switch res.MergeStrategy {
	case "", "strategic", "merge", "json":
	default:
		v.r.add(path+".mergeStrategy", "unknown merge strategy %q: use strategic, merge or json", res.MergeStrategy)
	}
}

func (v *specValidator) checkContainerSet(cs *v1alpha1.ContainerSetTemplate, path string) {
	names := map[string]bool{}
	for i, c := range cs.Containers {
		if names[c.Name] {
			v.r.add(idx(path+".containers", i)+".name", "container name %q is not unique", c.Name)
		}
		names[c.Name] = true
	}
	deps := map[string][]string{}
	for i, c := range cs.Containers {
		for j, d := range c.Dependencies {
			if !names[d] {
				v.r.add(idx(idx(path+".containers", i)+".dependencies", j), "container %q not found", d)
			}
		}
		deps[c.Name] = c.Dependencies
	}
	if cycle := findCycle(deps); cycle != nil {
		v.r.add(path+".containers", "dependency cycle: %s", strings.Join(cycle, " -> "))
	}
}

// checkControl checks retry, timeouts, parallelism, memoize and metrics.
func (v *specValidator) checkControl(t *v1alpha1.Template, path string) {
	if t.RetryStrategy != nil {
		checkRetryStrategy(v.r, path+".retryStrategy", t.RetryStrategy)
	}
	if t.Timeout != "" {
		if !isLeaf(t) {
			v.r.add(path+".timeout", "timeout is only valid for leaf templates (not steps or dag)")
		} else if err := checkDuration(t.Timeout, false); err != nil {
			v.r.add(path+".timeout", "%v", err)
		}
	}
	if t.ActiveDeadlineSeconds != nil {
		if !isLeaf(t) {
			v.r.add(path+".activeDeadlineSeconds", "activeDeadlineSeconds is only valid for leaf templates")
		} else if !validPositiveIntOrTag(*t.ActiveDeadlineSeconds) {
			v.r.add(path+".activeDeadlineSeconds", "must be a positive integer or a {{variable}}")
		}
	}
	if t.Parallelism != nil && isLeaf(t) {
		v.r.add(path+".parallelism", "parallelism is only valid for steps and dag templates")
	}
	if t.Parallelism != nil {
		checkParallelism(v.r, path+".parallelism", t.Parallelism)
	}
	if m := t.Memoize; m != nil {
		if m.Key == "" {
			v.r.add(path+".memoize.key", "memoize needs a key")
		}
		if m.MaxAge != "" && !strings.Contains(m.MaxAge, "{{") {
			if _, err := time.ParseDuration(m.MaxAge); err != nil {
				v.r.add(path+".memoize.maxAge", "invalid duration %q: %v", m.MaxAge, err)
			}
		}
	}
	if t.Metrics != nil {
		for i, m := range t.Metrics.Prometheus {
			p := idx(path+".metrics.prometheus", i)
			if !metricNameRE.MatchString(m.Name) {
				v.r.add(p+".name", "metric name %q is invalid: use letters, digits, '_' or ':'", m.Name)
			}
			if m.Help == "" {
				v.r.add(p+".help", "metric %q needs a help text", m.Name)
			}
		}
	}
}

func checkParallelism(r *reporter, path string, p *intstr.IntOrString) {
	if p == nil {
		return
	}
	if !validNonNegativeIntOrTag(*p) {
		r.add(path, "must be a non-negative integer or a {{variable}}, got %q", p.String())
	}
}

func validNonNegativeIntOrTag(v intstr.IntOrString) bool {
	if v.Type == intstr.Int {
		return v.IntVal >= 0
	}
	if strings.Contains(v.StrVal, "{{") {
		return true
	}
	n, err := strconv.Atoi(strings.TrimSpace(v.StrVal))
	return err == nil && n >= 0
}

func validPositiveIntOrTag(v intstr.IntOrString) bool {
	if v.Type == intstr.Int {
		return v.IntVal > 0
	}
	if strings.Contains(v.StrVal, "{{") {
		return true
	}
	n, err := strconv.Atoi(strings.TrimSpace(v.StrVal))
	return err == nil && n > 0
}

// checkDuration parses an Argo duration. With bareSeconds, an integer means
// seconds (suspend, backoff); without, a unit is required (timeout).
func checkDuration(s string, bareSeconds bool) error {
	if strings.Contains(s, "{{") {
		return nil
	}
	if _, err := strconv.Atoi(s); err == nil {
		if bareSeconds {
			return nil
		}
		return fmt.Errorf("invalid duration %q: add a unit, for example %ss", s, s)
	}
	if _, err := time.ParseDuration(s); err != nil {
		return fmt.Errorf("invalid duration %q: %v", s, strings.TrimPrefix(err.Error(), "time: "))
	}
	return nil
}

func checkRetryStrategy(r *reporter, path string, rs *v1alpha1.RetryStrategy) {
	if rs.Limit != nil && !validNonNegativeIntOrTag(*rs.Limit) {
		r.add(path+".limit", "must be a non-negative integer or a {{variable}}, got %q", rs.Limit.String())
	}
	switch rs.RetryPolicy {
	case "", "Always", "OnFailure", "OnError", "OnTransientError":
	default:
		r.add(path+".retryPolicy", "unknown retryPolicy %q: use Always, OnFailure, OnError or OnTransientError", rs.RetryPolicy)
	}
	if b := rs.Backoff; b != nil {
		for _, f := range []struct{ name, val string }{{"duration", b.Duration}, {"maxDuration", b.MaxDuration}, {"cap", b.Cap}} {
			if f.val == "" {
				continue
			}
			if err := checkDuration(f.val, true); err != nil {
				r.add(path+".backoff."+f.name, "%v", err)
			}
		}
		if b.Factor != nil && !validNonNegativeIntOrTag(*b.Factor) {
			r.add(path+".backoff.factor", "must be a non-negative integer or a {{variable}}, got %q", b.Factor.String())
		}
	}
	if rs.Expression != "" {
		checkExprSyntax(r, path+".expression", rs.Expression)
	}
}

// checkExprSyntax compiles an expr-lang expression for syntax.
func checkExprSyntax(r *reporter, path, e string) {
	if strings.Contains(e, "{{") {
		return // substituted before it is evaluated
	}
	if err := expr.Check(e); err != nil {
		r.add(path, "%s", firstLine(err))
	}
}
