package server

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Labels Argo sets on a workflow submitted from another object.
const (
	labelWorkflowTemplate        = "workflows.argoproj.io/workflow-template"
	labelClusterWorkflowTemplate = "workflows.argoproj.io/cluster-workflow-template"
)

// submitKind maps every spelling of resourceKind Argo accepts to a kind.
func submitKind(k string) (store.Kind, bool) {
	switch k {
	case "CronWorkflow", "cronworkflow", "cronworkflows", "cronwf":
		return store.KindCronWorkflow, true
	case "WorkflowTemplate", "workflowtemplate", "workflowtemplates", "wftmpl":
		return store.KindWorkflowTemplate, true
	case "ClusterWorkflowTemplate", "clusterworkflowtemplate", "clusterworkflowtemplates", "cwftmpl":
		return store.KindClusterWorkflowTemplate, true
	}
	return "", false
}

// SubmitWorkflow creates a workflow from a WorkflowTemplate,
// ClusterWorkflowTemplate or CronWorkflow (argo submit --from).
func (s *workflowServer) SubmitWorkflow(ctx context.Context, req *workflow.WorkflowSubmitRequest) (*v1alpha1.Workflow, error) {
	kind, ok := submitKind(req.GetResourceKind())
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "resourceKind %q is not supported: use WorkflowTemplate, ClusterWorkflowTemplate or CronWorkflow", req.GetResourceKind())
	}
	ns := req.GetNamespace()
	if ns == "" {
		ns = defaultNamespace
	}
	wf, err := s.workflowFrom(ctx, kind, ns, req.GetResourceName())
	if err != nil {
		return nil, err
	}
	if err := applySubmitOpts(wf, req.GetSubmitOptions()); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	wf, err = s.admit(ctx, ns, wf)
	if err != nil {
		return nil, err
	}
	o := req.GetSubmitOptions()
	if o == nil {
		o = &v1alpha1.SubmitOpts{}
	}
	if o.ServerDryRun && wf.Name == "" {
		wf.Name = store.GenerateName(wf.GenerateName) // as the store would name it
	}
	if o.DryRun || o.ServerDryRun {
		return wf, nil
	}
	if err := s.expand(ctx, wf); err != nil {
		return nil, err
	}
	if err := s.createNamed(ctx, wf, nil); err != nil {
		return nil, err
	}
	s.log.Info("workflow submitted", "namespace", wf.Namespace, "name", wf.Name, "from", string(kind)+"/"+req.GetResourceName())
	return wf, nil
}

// workflowFrom builds the workflow a template or cron workflow submits.
func (s *workflowServer) workflowFrom(ctx context.Context, kind store.Kind, ns, name string) (*v1alpha1.Workflow, error) {
	getNS := ns
	if kind == store.KindClusterWorkflowTemplate {
		getNS = ""
	}
	obj, err := s.store.Get(ctx, kind, getNS, name)
	if err != nil {
		return nil, kindError(err, kind, name)
	}
	wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: name + "-"}}
	wf.APIVersion, wf.Kind = v1alpha1.APIVersion, "Workflow"
	switch o := obj.(type) {
	case *v1alpha1.WorkflowTemplate:
		wf.Spec.WorkflowTemplateRef = &v1alpha1.WorkflowTemplateRef{Name: name}
		if m := o.Spec.WorkflowMetadata; m != nil {
			addMeta(wf, m.Labels, m.Annotations)
		}
		setLabel(wf, labelWorkflowTemplate, name)
	case *v1alpha1.ClusterWorkflowTemplate:
		wf.Spec.WorkflowTemplateRef = &v1alpha1.WorkflowTemplateRef{Name: name, ClusterScope: true}
		if m := o.Spec.WorkflowMetadata; m != nil {
			addMeta(wf, m.Labels, m.Annotations)
		}
		setLabel(wf, labelClusterWorkflowTemplate, name)
	case *v1alpha1.CronWorkflow:
		// As a scheduled run, but now and under a generated name.
		wf = spec.WorkflowFromCron(o, time.Now())
		wf.Namespace, wf.Name, wf.GenerateName = ns, "", name+"-"
	default:
		return nil, status.Errorf(codes.Internal, "store returned %T for a %s", obj, kind)
	}
	return wf, nil
}

// expand stores in the status of a workflow that names a WorkflowTemplate
// the spec it runs (spec.ResolveWorkflowTemplateRef), so that what runs
// does not change when the template does; its own spec stays as written.
func (s *workflowServer) expand(ctx context.Context, wf *v1alpha1.Workflow) error {
	if wf.Spec.WorkflowTemplateRef == nil {
		return nil
	}
	cat, err := s.catalog(ctx, wf.Namespace)
	if err != nil {
		return err
	}
	if err := spec.ResolveWorkflowTemplateRef(wf, cat); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	return nil
}

func addMeta(wf *v1alpha1.Workflow, labels, annotations map[string]string) {
	for k, v := range labels {
		setLabel(wf, k, v)
	}
	for k, v := range annotations {
		if wf.Annotations == nil {
			wf.Annotations = map[string]string{}
		}
		wf.Annotations[k] = v
	}
}

func setLabel(wf *v1alpha1.Workflow, k, v string) {
	if wf.Labels == nil {
		wf.Labels = map[string]string{}
	}
	wf.Labels[k] = v
}

// applySubmitOpts applies argo's SubmitOpts.
func applySubmitOpts(wf *v1alpha1.Workflow, o *v1alpha1.SubmitOpts) error {
	if o == nil {
		return nil
	}
	if err := spec.ApplySubmitOptions(wf, spec.SubmitOptions{
		Parameters: o.Parameters, Entrypoint: o.Entrypoint,
		Name: o.Name, GenerateName: o.GenerateName, Labels: o.Labels,
	}); err != nil {
		return err
	}
	if a := o.Annotations; a != "" {
		for _, kv := range strings.Split(a, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return fmt.Errorf("annotations: %q is not key=value", kv)
			}
			if wf.Annotations == nil {
				wf.Annotations = map[string]string{}
			}
			wf.Annotations[k] = v
		}
	}
	if sa := o.ServiceAccount; sa != "" {
		wf.Spec.ServiceAccountName = sa
	}
	if pc := o.PodPriorityClassName; pc != "" {
		wf.Spec.PodPriorityClassName = pc
	}
	if o.Priority != nil {
		p := *o.Priority
		wf.Spec.Priority = &p
	}
	if ref := o.OwnerReference; ref != nil && ref.Name != "" {
		wf.OwnerReferences = append(wf.OwnerReferences, *ref.DeepCopy())
	}
	return nil
}

// kindError is storeError with the resource name of another kind.
func kindError(err error, kind store.Kind, name string) error {
	st := status.Convert(storeError(err, name))
	if st.Code() == codes.NotFound {
		return status.Errorf(codes.NotFound, "%s.argoproj.io %q not found", strings.ToLower(string(kind))+"s", name)
	}
	return st.Err()
}
