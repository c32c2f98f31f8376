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

// ResolveWorkflowTemplateRef stores in wf.Status.StoredWorkflowSpec
// (storedWorkflowTemplateSpec) the spec a workflow that names a
// WorkflowTemplate runs: JoinWorkflowSpec of its spec over the template's.
// The workflow's spec stays as submitted, with the reference, as in Argo;
// the label Argo sets records where the workflow came from.
func ResolveWorkflowTemplateRef(wf *v1alpha1.Workflow, cat *Catalog) error {
	ref := wf.Spec.WorkflowTemplateRef
	if ref == nil {
		return nil
	}
	ts, kind := cat.Spec(ref.Name, ref.ClusterScope)
	if ts == nil {
		return fmt.Errorf("%s %q not found", kind, ref.Name)
	}
	return StoreWorkflowTemplateSpec(wf, ts, kind)
}

// StoreWorkflowTemplateSpec sets wf.Status.StoredWorkflowSpec to wf's spec
// joined over ts, the spec of the (Cluster)WorkflowTemplate (kind) that
// wf.Spec.WorkflowTemplateRef names, and labels wf with that template.
func StoreWorkflowTemplateSpec(wf *v1alpha1.Workflow, ts *v1alpha1.WorkflowSpec, kind string) error {
	ref := wf.Spec.WorkflowTemplateRef
	joined, err := JoinWorkflowSpec(&wf.Spec, ts, nil)
	if err != nil {
		return fmt.Errorf("merge %s %q into the workflow: %w", kind, ref.Name, err)
	}
	wf.Status.StoredWorkflowSpec = joined
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
