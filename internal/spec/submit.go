package spec

import (
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// SubmitOptions are the changes `argo submit` lets a user make to a
// workflow before it runs.
type SubmitOptions struct {
	// Parameters are "name=value" pairs (-p); they override
	// spec.arguments.parameters or add to them.
	Parameters []string
	// ParameterFile is the content of a YAML or JSON file mapping names to values.
	ParameterFile []byte
	// Entrypoint overrides spec.entrypoint.
	Entrypoint string
	// Name and GenerateName override the metadata.
	Name, GenerateName string
	// Labels are "k=v" pairs, comma separated, added to metadata.labels.
	Labels string
}

// ApplySubmitOptions changes wf as o says. Parameters from the file are
// applied first, so that -p wins.
func ApplySubmitOptions(wf *v1alpha1.Workflow, o SubmitOptions) error {
	if len(o.ParameterFile) > 0 {
		var m map[string]any
		if err := yaml.Unmarshal(o.ParameterFile, &m); err != nil {
			return fmt.Errorf("parameter file: %w", err)
		}
		for _, k := range sortedKeys(m) {
			setParameter(wf, k, parameterText(m[k]))
		}
	}
	for _, p := range o.Parameters {
		name, value, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return fmt.Errorf("parameter %q: expected name=value", p)
		}
		setParameter(wf, name, value)
	}
	if o.Entrypoint != "" {
		wf.Spec.Entrypoint = o.Entrypoint
	}
	if o.Name != "" {
		wf.Name = o.Name
	}
	if o.GenerateName != "" {
		wf.GenerateName = o.GenerateName
	}
	if o.Labels != "" {
		for _, kv := range strings.Split(o.Labels, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return fmt.Errorf("label %q: expected key=value", kv)
			}
			if wf.Labels == nil {
				wf.Labels = map[string]string{}
			}
			wf.Labels[k] = v
		}
	}
	return nil
}

func parameterText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func setParameter(wf *v1alpha1.Workflow, name, value string) {
	v := v1alpha1.AnyString(value)
	if p := findParameter(wf.Spec.Arguments.Parameters, name); p != nil {
		p.Value = &v
		return
	}
	wf.Spec.Arguments.Parameters = append(wf.Spec.Arguments.Parameters, v1alpha1.Parameter{Name: name, Value: &v})
}

// ResolveWorkflowTemplateRef fills a workflow that names a WorkflowTemplate
// with that template's spec: the workflow's own fields win, and its
// arguments are merged with the template's by name. The label Argo sets
// records where the workflow came from.
func ResolveWorkflowTemplateRef(wf *v1alpha1.Workflow, cat *Catalog) error {
	ref := wf.Spec.WorkflowTemplateRef
	if ref == nil {
		return nil
	}
	ts, kind := cat.Spec(ref.Name, ref.ClusterScope)
	if ts == nil {
		return fmt.Errorf("%s %q not found", kind, ref.Name)
	}
	merged, err := mergeSpecs(ts, &wf.Spec)
	if err != nil {
		return fmt.Errorf("merge %s %q into the workflow: %w", kind, ref.Name, err)
	}
	merged.Arguments = mergeArguments(wf.Spec.Arguments, ts.Arguments)
	merged.WorkflowTemplateRef = ref
	wf.Spec = *merged
	if wf.Labels == nil {
		wf.Labels = map[string]string{}
	}
	label := "workflows.argoproj.io/workflow-template"
	if ref.ClusterScope {
		label = "workflows.argoproj.io/cluster-workflow-template"
	}
	wf.Labels[label] = ref.Name
	return nil
}

// mergeSpecs overlays the top-level fields set in ours on theirs.
func mergeSpecs(theirs, ours *v1alpha1.WorkflowSpec) (*v1alpha1.WorkflowSpec, error) {
	base, err := toMap(theirs)
	if err != nil {
		return nil, err
	}
	over, err := toMap(ours)
	if err != nil {
		return nil, err
	}
	for k, v := range over {
		base[k] = v
	}
	data, err := json.Marshal(base)
	if err != nil {
		return nil, err
	}
	out := &v1alpha1.WorkflowSpec{}
	return out, json.Unmarshal(data, out)
}

func toMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	return m, json.Unmarshal(data, &m)
}
