package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apiclient/event"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// WorkflowEventBinding management: braid's own calls on EventService
// (argo-server has none; on Kubernetes kubectl writes bindings). Create
// and update validate as lint does: a selector or a valueFrom.event that
// does not compile is a 400 naming the binding and the expression, and
// nothing is stored. The WorkflowTemplate a binding submits need not exist
// yet, as in Argo: a binding may be applied before its template. An event
// that matches a binding whose template is missing answers with an error
// that names both (see ReceiveEvent).

func (s *eventServer) CreateWorkflowEventBinding(ctx context.Context, req *event.CreateWorkflowEventBindingRequest) (*v1alpha1.WorkflowEventBinding, error) {
	b, err := s.admitBinding(ctx, req.GetNamespace(), req.GetWorkflowEventBinding())
	if err != nil {
		return nil, err
	}
	c := &s.bindings
	if b.Name == "" && b.GenerateName == "" {
		return nil, status.Error(codes.InvalidArgument, "metadata.name or metadata.generateName is required")
	}
	if o := req.GetCreateOptions(); o != nil && len(o.DryRun) > 0 {
		return b, nil
	}
	if b.Name != "" {
		if err := c.store.Create(ctx, b); err != nil {
			return nil, c.errorf(err, b.Name)
		}
	} else if err := c.createGenerated(ctx, b); err != nil {
		return nil, err
	}
	c.log.Info("created", "kind", c.kind, "namespace", b.Namespace, "name", b.Name)
	return b, nil
}

func (s *eventServer) GetWorkflowEventBinding(ctx context.Context, req *event.GetWorkflowEventBindingRequest) (*v1alpha1.WorkflowEventBinding, error) {
	return as[v1alpha1.WorkflowEventBinding](s.bindings.get(ctx, req.GetNamespace(), req.GetName()))
}

// UpdateWorkflowEventBinding replaces a stored binding. An empty
// metadata.resourceVersion replaces whatever is stored; a stale one is a
// conflict.
func (s *eventServer) UpdateWorkflowEventBinding(ctx context.Context, req *event.UpdateWorkflowEventBindingRequest) (*v1alpha1.WorkflowEventBinding, error) {
	b, err := s.admitBinding(ctx, req.GetNamespace(), req.GetWorkflowEventBinding())
	if err != nil {
		return nil, err
	}
	c := &s.bindings
	switch name := req.GetName(); {
	case b.Name == "" && name == "":
		return nil, status.Error(codes.InvalidArgument, "metadata.name is required")
	case b.Name == "":
		b.Name = name
	case name != "" && b.Name != name:
		return nil, status.Errorf(codes.InvalidArgument,
			"the name of the WorkflowEventBinding (%q) does not match the name of the request (%q)", b.Name, name)
	}
	cur, err := c.get(ctx, b.Namespace, b.Name)
	if err != nil {
		return nil, err
	}
	if b.ResourceVersion == "" {
		b.ResourceVersion = cur.GetResourceVersion()
	}
	if err := c.store.Update(ctx, b); err != nil {
		return nil, c.errorf(err, b.Name)
	}
	c.log.Info("updated", "kind", c.kind, "namespace", b.Namespace, "name", b.Name)
	return b, nil
}

func (s *eventServer) DeleteWorkflowEventBinding(ctx context.Context, req *event.DeleteWorkflowEventBindingRequest) (*event.DeleteWorkflowEventBindingResponse, error) {
	if err := s.bindings.delete(ctx, req.GetNamespace(), req.GetName(), req.GetDeleteOptions()); err != nil {
		return nil, err
	}
	return &event.DeleteWorkflowEventBindingResponse{}, nil
}

// admitBinding decodes and validates a submitted binding: its namespace
// defaults to the request's, its names are checked as Kubernetes does, and
// its expressions must compile.
func (s *eventServer) admitBinding(ctx context.Context, namespace string, in *v1alpha1.WorkflowEventBinding) (*v1alpha1.WorkflowEventBinding, error) {
	obj, err := s.bindings.admit(ctx, namespace, in)
	if err != nil {
		return nil, err
	}
	b, ok := obj.(*v1alpha1.WorkflowEventBinding)
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "%s: not a %s", s.bindings.kind, s.bindings.kind)
	}
	return b, nil
}

// submittedTemplate is a catalog in which the template b submits exists
// (empty): validation then checks b's own fields only, as Argo accepts a
// binding whose template does not exist yet.
func submittedTemplate(b *v1alpha1.WorkflowEventBinding) *spec.Catalog {
	if b.Spec.Submit == nil || b.Spec.Submit.WorkflowTemplateRef.Name == "" {
		return spec.NewCatalog(nil)
	}
	ref := b.Spec.Submit.WorkflowTemplateRef
	var obj spec.Object
	if ref.ClusterScope {
		t := &v1alpha1.ClusterWorkflowTemplate{}
		t.Name = ref.Name
		obj = t
	} else {
		t := &v1alpha1.WorkflowTemplate{}
		t.Name, t.Namespace = ref.Name, b.Namespace
		obj = t
	}
	return spec.NewCatalog([]*spec.Document{{Name: ref.Name, Object: obj}})
}

// dispatchError is the answer to an event that matched bindings which
// could not submit their workflow (a missing template, a parameter that
// did not evaluate); it names each binding and what went wrong. Workflows
// of the other bindings are submitted all the same.
func dispatchError(failed []string) error {
	return status.Errorf(codes.Internal, "failed to dispatch event: %s", strings.Join(failed, "; "))
}

// dispatchFailure is one binding's part of a dispatchError.
func dispatchFailure(b *v1alpha1.WorkflowEventBinding, err error) string {
	return fmt.Sprintf("WorkflowEventBinding %q: %s", b.Name, withoutStatusPrefix(err.Error()))
}

// withoutStatusPrefix drops the "rpc error: code = X desc = " that a
// wrapped status error puts in the middle of a message.
func withoutStatusPrefix(msg string) string {
	const head, desc = "rpc error: code = ", " desc = "
	for {
		i := strings.Index(msg, head)
		if i < 0 {
			return msg
		}
		j := strings.Index(msg[i:], desc)
		if j < 0 {
			return msg
		}
		msg = msg[:i] + msg[i+j+len(desc):]
	}
}

// errSelector marks a binding whose selector did not evaluate to a bool
// for an event: it is logged and skipped, and does not fail the event for
// the other bindings.
var errSelector = errors.New("selector")
