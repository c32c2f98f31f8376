package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apiclient/clusterworkflowtemplate"
	"github.com/braidwf/braid/pkg/apiclient/cronworkflow"
	"github.com/braidwf/braid/pkg/apiclient/event"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apiclient/workflowtemplate"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// `braid apply -f FILE|DIR`: kubectl apply for braid's kinds. Each object
// is created, or, when it exists, updated at its current resourceVersion
// unless nothing changed; one line per object says which, as kubectl does:
// "workflowtemplate.argoproj.io/x created|configured|unchanged". A
// Workflow with only a generateName is always created; an existing
// Workflow cannot be changed (the API has no update). WorkflowEventBindings
// go through braid's own binding API (eventbinding.go in the server).

// applier is the API of one kind, on typed objects. get answers a
// NotFound status (or store.ErrNotFound) for a missing object; update is
// nil for a kind that cannot be changed.
type applier struct {
	get    func(ctx context.Context, ns, name string) (spec.Object, error)
	create func(ctx context.Context, obj spec.Object) (spec.Object, error)
	update func(ctx context.Context, obj spec.Object) (spec.Object, error)
}

func newApplyCommand(s streams, g *globalFlags) *cobra.Command {
	var files []string
	strict := true
	cmd := &cobra.Command{
		Use:   "apply -f FILE|DIR [-f ...]",
		Short: "create or update braid objects from files, as kubectl apply does",
		Long: `Create or update Workflows, WorkflowTemplates, ClusterWorkflowTemplates,
CronWorkflows and WorkflowEventBindings from files or directories, each of
which may hold many documents. An object that exists is updated, unless it
is unchanged. Documents of other kinds are skipped with a note.`,
		Example: `  braid apply -f templates/
  braid apply -f cron.yaml -f wf.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return errors.New("must specify one of -f")
			}
			docs, err := loadDocuments(s, files, strict)
			if err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				a := &applyRun{s: s, sess: sess}
				return a.applyAll(ctx, docs)
			})
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "a file or directory of objects to apply (repeatable; \"-\" reads standard input)")
	cmd.Flags().BoolVar(&strict, "strict", true, "reject unknown fields and duplicate keys in the files")
	return cmd
}

// applyRun is one apply on a session.
type applyRun struct {
	s    streams
	sess *session
}

// applyAll applies each object in order. A failure is reported and the
// rest are still applied; the exit code is then 1.
func (a *applyRun) applyAll(ctx context.Context, docs []*spec.Document) error {
	failed := 0
	for _, d := range docs {
		if d.Object == nil {
			fmt.Fprintf(a.s.err, "note: %s: skipped %s %s: %s\n", d.File, d.Kind, d.Name, d.Skipped)
			continue
		}
		verb, err := a.applyOne(ctx, d)
		var issues spec.Issues
		switch {
		case errors.As(err, &issues):
			failed++
			fmt.Fprintf(a.s.err, "Error: %v\n", issues)
			continue
		case err != nil:
			failed++
			fmt.Fprintf(a.s.err, "Error: %s: %s %q: %v\n", d.File, d.Kind, d.Name, err)
			continue
		}
		fmt.Fprintf(a.s.out, "%s/%s %s\n", kindSuffix(d.Kind), d.Object.GetName(), verb)
		a.warnMissingTemplate(ctx, d, docs)
	}
	if failed > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// warnMissingTemplate notes a WorkflowEventBinding whose template is
// neither among the applied documents nor on the server. The server
// accepts it, as Argo does (the template may come later); until then an
// event it matches answers with an error.
func (a *applyRun) warnMissingTemplate(ctx context.Context, d *spec.Document, docs []*spec.Document) {
	b, ok := d.Object.(*v1alpha1.WorkflowEventBinding)
	if !ok || b.Spec.Submit == nil || b.Spec.Submit.WorkflowTemplateRef.Name == "" {
		return
	}
	ref := b.Spec.Submit.WorkflowTemplateRef
	kind := "WorkflowTemplate"
	if ref.ClusterScope {
		kind = "ClusterWorkflowTemplate"
	}
	for _, o := range docs {
		if o.Kind == kind && o.Object != nil && o.Object.GetName() == ref.Name {
			return
		}
	}
	var err error
	if ref.ClusterScope {
		_, err = a.sess.ClusterWorkflowTemplate.GetClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateGetRequest{Name: ref.Name})
	} else {
		ns := cmp.Or(b.Namespace, a.sess.namespace)
		_, err = a.sess.WorkflowTemplate.GetWorkflowTemplate(ctx, &workflowtemplate.WorkflowTemplateGetRequest{Name: ref.Name, Namespace: ns})
	}
	if isNotFound(err) {
		fmt.Fprintf(a.s.err, "warning: %s: WorkflowEventBinding %q: %s %q not found: events it matches fail until it exists\n",
			d.File, b.Name, kind, ref.Name)
	}
}

// applyOne creates or updates one object and says which it did.
func (a *applyRun) applyOne(ctx context.Context, d *spec.Document) (string, error) {
	ap, err := a.applierFor(ctx, d)
	if err != nil {
		return "", err
	}
	obj := d.Object.DeepCopyObject().(spec.Object)
	if d.Kind != "ClusterWorkflowTemplate" && obj.GetNamespace() == "" {
		obj.SetNamespace(a.sess.namespace)
	}
	if obj.GetName() == "" {
		if d.Kind != "Workflow" {
			return "", errors.New("metadata.name is required")
		}
		created, err := ap.create(ctx, obj)
		if err != nil {
			return "", err
		}
		d.Object.SetName(created.GetName())
		return "created", nil
	}
	last, err := setLastApplied(obj)
	if err != nil {
		return "", err
	}
	if ap.update == nil {
		return createOnly(ctx, ap, d, obj, last)
	}
	cur, err := ap.get(ctx, obj.GetNamespace(), obj.GetName())
	if isNotFound(err) {
		if _, err := ap.create(ctx, obj); err != nil {
			return "", err
		}
		return "created", nil
	}
	if err != nil {
		return "", err
	}
	if same, err := appliedBefore(d.Object, cur, last); err != nil || same {
		return "unchanged", err
	}
	obj.SetResourceVersion(cur.GetResourceVersion())
	if _, err := ap.update(ctx, obj); err != nil {
		return "", err
	}
	return "configured", nil
}

// createOnly applies an object of a kind that cannot be updated (a
// Workflow): it is created, else it must be unchanged. It is created
// first, as a get would also find a workflow that only the archive holds.
func createOnly(ctx context.Context, ap *applier, d *spec.Document, obj spec.Object, last string) (string, error) {
	_, err := ap.create(ctx, obj)
	if err == nil {
		return "created", nil
	}
	if status.Code(err) != codes.AlreadyExists {
		return "", err
	}
	cur, gerr := ap.get(ctx, obj.GetNamespace(), obj.GetName())
	if gerr != nil {
		return "", errors.Join(err, gerr)
	}
	same, err := appliedBefore(d.Object, cur, last)
	if err != nil || same {
		return "unchanged", err
	}
	return "", fmt.Errorf("it exists and a %s cannot be changed: delete it first", d.Kind)
}

// appliedBefore reports whether cur already is what applying want (whose
// last-applied JSON is last) would make it.
func appliedBefore(want, cur spec.Object, last string) (bool, error) {
	if prev, ok := cur.GetAnnotations()[lastAppliedAnnotation]; ok {
		return prev == last, nil
	}
	return unchanged(want, cur)
}

// lastAppliedAnnotation holds the object as last applied, as kubectl
// keeps it: what the server made of the object (a workflow's resolved
// template, say) does not count as a change.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// setLastApplied records obj, as given, in its last-applied annotation and
// returns the recorded JSON.
func setLastApplied(obj spec.Object) (string, error) {
	ann := obj.GetAnnotations()
	delete(ann, lastAppliedAnnotation)
	clean := obj.DeepCopyObject().(spec.Object)
	clean.SetAnnotations(ann)
	if len(ann) == 0 {
		clean.SetAnnotations(nil)
	}
	data, err := json.Marshal(clean)
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", obj.GetName(), err)
	}
	ann = maps.Clone(ann)
	if ann == nil {
		ann = map[string]string{}
	}
	ann[lastAppliedAnnotation] = string(data)
	obj.SetAnnotations(ann)
	return string(data), nil
}

func isNotFound(err error) bool {
	return status.Code(err) == codes.NotFound || errors.Is(err, store.ErrNotFound)
}

// unchanged reports whether applying want to cur would change nothing:
// the same spec, and each of want's labels and annotations already set.
// It decides for objects that were not created by apply.
func unchanged(want, cur spec.Object) (bool, error) {
	for _, m := range []struct{ want, cur map[string]string }{
		{want.GetLabels(), cur.GetLabels()}, {want.GetAnnotations(), cur.GetAnnotations()},
	} {
		for k, v := range m.want {
			if got, ok := m.cur[k]; !ok || got != v {
				return false, nil
			}
		}
	}
	ws, err := specOf(want)
	if err != nil {
		return false, err
	}
	cs, err := specOf(cur)
	if err != nil {
		return false, err
	}
	return reflect.DeepEqual(ws, cs), nil
}

// specOf is the generic JSON form of an object's spec.
func specOf(o spec.Object) (any, error) {
	data, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", o, err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode %T: %w", o, err)
	}
	return m["spec"], nil
}

// applierFor is the API of the document's kind.
func (a *applyRun) applierFor(ctx context.Context, d *spec.Document) (*applier, error) {
	sess := a.sess
	switch d.Kind {
	case "Workflow":
		return &applier{
			get: apiGet(func(ns, name string) (*v1alpha1.Workflow, error) {
				return sess.Workflow.GetWorkflow(ctx, &workflow.WorkflowGetRequest{Name: name, Namespace: ns})
			}),
			create: apiWrite(func(body *v1alpha1.Workflow) (*v1alpha1.Workflow, error) {
				return sess.Workflow.CreateWorkflow(ctx, &workflow.WorkflowCreateRequest{Namespace: body.Namespace, Workflow: body, CreateOptions: &metav1.CreateOptions{}})
			}),
		}, nil
	case "WorkflowTemplate":
		api := sess.WorkflowTemplate
		return &applier{
			get: apiGet(func(ns, name string) (*v1alpha1.WorkflowTemplate, error) {
				return api.GetWorkflowTemplate(ctx, &workflowtemplate.WorkflowTemplateGetRequest{Name: name, Namespace: ns})
			}),
			create: apiWrite(func(body *v1alpha1.WorkflowTemplate) (*v1alpha1.WorkflowTemplate, error) {
				return api.CreateWorkflowTemplate(ctx, &workflowtemplate.WorkflowTemplateCreateRequest{Namespace: body.Namespace, Template: body, CreateOptions: &metav1.CreateOptions{}})
			}),
			update: apiWrite(func(body *v1alpha1.WorkflowTemplate) (*v1alpha1.WorkflowTemplate, error) {
				return api.UpdateWorkflowTemplate(ctx, &workflowtemplate.WorkflowTemplateUpdateRequest{Name: body.Name, Namespace: body.Namespace, Template: body})
			}),
		}, nil
	case "ClusterWorkflowTemplate":
		api := sess.ClusterWorkflowTemplate
		return &applier{
			get: apiGet(func(_, name string) (*v1alpha1.ClusterWorkflowTemplate, error) {
				return api.GetClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateGetRequest{Name: name})
			}),
			create: apiWrite(func(body *v1alpha1.ClusterWorkflowTemplate) (*v1alpha1.ClusterWorkflowTemplate, error) {
				return api.CreateClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateCreateRequest{Template: body, CreateOptions: &metav1.CreateOptions{}})
			}),
			update: apiWrite(func(body *v1alpha1.ClusterWorkflowTemplate) (*v1alpha1.ClusterWorkflowTemplate, error) {
				return api.UpdateClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateUpdateRequest{Name: body.Name, Template: body})
			}),
		}, nil
	case "CronWorkflow":
		api := sess.CronWorkflow
		return &applier{
			get: apiGet(func(ns, name string) (*v1alpha1.CronWorkflow, error) {
				return api.GetCronWorkflow(ctx, &cronworkflow.GetCronWorkflowRequest{Name: name, Namespace: ns})
			}),
			create: apiWrite(func(body *v1alpha1.CronWorkflow) (*v1alpha1.CronWorkflow, error) {
				return api.CreateCronWorkflow(ctx, &cronworkflow.CreateCronWorkflowRequest{Namespace: body.Namespace, CronWorkflow: body, CreateOptions: &metav1.CreateOptions{}})
			}),
			update: apiWrite(func(body *v1alpha1.CronWorkflow) (*v1alpha1.CronWorkflow, error) {
				return api.UpdateCronWorkflow(ctx, &cronworkflow.UpdateCronWorkflowRequest{Name: body.Name, Namespace: body.Namespace, CronWorkflow: body})
			}),
		}, nil
	case "WorkflowEventBinding":
		return a.bindingApplier(ctx), nil
	}
	return nil, fmt.Errorf("braid cannot apply a %s", d.Kind)
}

// apiGet adapts a get call to the applier's form.
func apiGet[P spec.Object](call func(ns, name string) (P, error)) func(context.Context, string, string) (spec.Object, error) {
	return func(_ context.Context, ns, name string) (spec.Object, error) {
		return answer(call(ns, name))
	}
}

// apiWrite adapts a create or update call to the applier's form: the
// object (which the loader made of the kind's type) is the request's body.
func apiWrite[P spec.Object](call func(P) (P, error)) func(context.Context, spec.Object) (spec.Object, error) {
	return func(_ context.Context, o spec.Object) (spec.Object, error) {
		body, err := typed[P](o)
		if err != nil {
			return nil, err
		}
		return answer(call(body))
	}
}

// bindingApplier is braid's WorkflowEventBinding API (direct mode's
// in-process server serves it too). The server validates each binding;
// argo-server has no such API, so against one it fails with a clear
// message.
func (a *applyRun) bindingApplier(ctx context.Context) *applier {
	api := a.sess.Event
	noAPI := func(err error) error {
		if status.Code(err) == codes.Unimplemented {
			return fmt.Errorf("the server has no API for WorkflowEventBindings (argo-server has none; use kubectl on Kubernetes): %w", err)
		}
		return err
	}
	get := apiGet(func(ns, name string) (*v1alpha1.WorkflowEventBinding, error) {
		res, err := api.GetWorkflowEventBinding(ctx, &event.GetWorkflowEventBindingRequest{Namespace: ns, Name: name})
		return res, noAPI(err)
	})
	return &applier{
		get: get,
		create: apiWrite(func(body *v1alpha1.WorkflowEventBinding) (*v1alpha1.WorkflowEventBinding, error) {
			return api.CreateWorkflowEventBinding(ctx, &event.CreateWorkflowEventBindingRequest{Namespace: body.Namespace, WorkflowEventBinding: body, CreateOptions: &metav1.CreateOptions{}})
		}),
		update: apiWrite(func(body *v1alpha1.WorkflowEventBinding) (*v1alpha1.WorkflowEventBinding, error) {
			return api.UpdateWorkflowEventBinding(ctx, &event.UpdateWorkflowEventBindingRequest{Namespace: body.Namespace, Name: body.Name, WorkflowEventBinding: body})
		}),
	}
}
