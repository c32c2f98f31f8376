package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apiclient/event"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// labelWorkflowEventBinding names the binding that submitted a workflow.
const labelWorkflowEventBinding = "workflows.argoproj.io/workflow-event-binding"

var _ event.EventServiceServer = (*eventServer)(nil)

// eventServer is EventService: it lists WorkflowEventBindings, and
// ReceiveEvent submits a workflow for each binding an event matches.
// Events are dispatched before the call returns (argo-server's default,
// without --event-async-dispatch).
type eventServer struct {
	event.UnimplementedEventServiceServer
	bindings crud
	wfs      *workflowServer
	log      *slog.Logger
}

func newEventServer(st Store, log *slog.Logger) *eventServer {
	return &eventServer{
		bindings: crud{
			store: st, log: log, kind: store.KindWorkflowEventBinding,
			resource: "workfloweventbindings.argoproj.io", namespaced: true,
			list: func(objs []store.Object, next string) (any, error) {
				items, err := typedItems[v1alpha1.WorkflowEventBinding](objs)
				l := v1alpha1.WorkflowEventBindingList{Items: items}
				l.Continue = next
				return &l, err
			},
		},
		wfs: &workflowServer{store: st, log: log},
		log: log,
	}
}

func (s *eventServer) ListWorkflowEventBindings(ctx context.Context, req *event.ListWorkflowEventBindingsRequest) (*v1alpha1.WorkflowEventBindingList, error) {
	return as[v1alpha1.WorkflowEventBindingList](s.bindings.listPage(ctx, req.GetNamespace(), req.GetListOptions(), ""))
}

// ReceiveEvent checks the event against every WorkflowEventBinding of the
// namespace ("" for every namespace) and submits a workflow for each one
// whose selector is true. A binding whose selector cannot be evaluated is
// logged and skipped. The answer is {} whatever matched, unless a binding
// that matched could not submit its workflow (its template is missing):
// then, as argo-server dispatching synchronously, an error (500) names
// each such binding, after the others have submitted theirs.
func (s *eventServer) ReceiveEvent(ctx context.Context, req *event.EventRequest) (*event.EventResponse, error) {
	objs, _, err := s.bindings.store.List(ctx, store.KindWorkflowEventBinding, req.GetNamespace(), store.ListOptions{})
	if err != nil {
		return nil, s.bindings.errorf(err, "")
	}
	env, err := eventEnv(ctx, req)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "event: %v", err)
	}
	var failed []string // bindings that matched and could not submit (eventbinding.go)
	for _, o := range objs {
		b, ok := o.(*v1alpha1.WorkflowEventBinding)
		if !ok {
			return nil, status.Errorf(codes.Internal, "store returned %T for a WorkflowEventBinding", o)
		}
		log := s.log.With("namespace", b.Namespace, "binding", b.Name)
		wf, err := s.dispatch(ctx, b, env)
		switch {
		case err != nil:
			log.Warn("event not dispatched", "error", err)
			if !errors.Is(err, errSelector) {
				failed = append(failed, dispatchFailure(b, err))
			}
		case wf != nil:
			log.Info("workflow submitted from event", "workflow", wf.Name, "discriminator", req.GetDiscriminator())
		}
	}
	if len(failed) > 0 {
		return nil, dispatchError(failed)
	}
	return &event.EventResponse{}, nil
}

// eventEnv is what binding expressions see: payload, metadata (the
// request's x- headers, lower-case, each a list of values), discriminator
// and namespace. It goes through JSON, as Argo's does, so that lists are
// []any and numbers float64 whatever their source.
func eventEnv(ctx context.Context, req *event.EventRequest) (map[string]any, error) {
	md := map[string][]string{}
	in, _ := metadata.FromIncomingContext(ctx)
	for k, v := range in {
		if k = strings.ToLower(k); strings.HasPrefix(k, "x-") {
			md[k] = append(md[k], v...)
		}
	}
	var payload json.RawMessage = []byte("null")
	if p := req.GetPayload(); p != nil && len(p.Value) > 0 {
		payload = p.Value
	}
	data, err := json.Marshal(map[string]any{
		"payload": payload, "metadata": md,
		"discriminator": req.GetDiscriminator(), "namespace": req.GetNamespace(),
	})
	if err != nil {
		return nil, err
	}
	var env map[string]any
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, err
	}
	return env, nil
}

// dispatch submits the workflow of one binding if its selector matches
// env; it returns nil and no error when it does not.
func (s *eventServer) dispatch(ctx context.Context, b *v1alpha1.WorkflowEventBinding, env map[string]any) (*v1alpha1.Workflow, error) {
	matched, err := expr.EvalBool(b.Spec.Event.Selector, env)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errSelector, err)
	}
	if !matched || b.Spec.Submit == nil {
		return nil, nil
	}
	sub := b.Spec.Submit
	kind := store.KindWorkflowTemplate
	if sub.WorkflowTemplateRef.ClusterScope {
		kind = store.KindClusterWorkflowTemplate
	}
	wf, err := s.wfs.workflowFrom(ctx, kind, b.Namespace, sub.WorkflowTemplateRef.Name)
	if err != nil {
		return nil, fmt.Errorf("workflowTemplateRef: %w", err)
	}
	if err := eventMeta(wf, &sub.Metadata, env); err != nil {
		return nil, err
	}
	setLabel(wf, labelWorkflowEventBinding, b.Name)
	if err := eventArguments(wf, sub.Arguments, env); err != nil {
		return nil, err
	}
	// As SubmitWorkflow: validate, expand the template, create.
	if wf, err = s.wfs.admit(ctx, b.Namespace, wf); err != nil {
		return nil, err
	}
	if err := s.wfs.expand(ctx, wf); err != nil {
		return nil, err
	}
	if err := s.wfs.createNamed(ctx, wf, nil); err != nil {
		return nil, err
	}
	return wf, nil
}

// eventMeta applies spec.submit.metadata: as in Argo, its name,
// generateName, label values and annotation values are expressions over
// the event that must give strings.
func eventMeta(wf *v1alpha1.Workflow, m *metav1.ObjectMeta, env map[string]any) error {
	if m.Name != "" {
		v, err := evalString(m.Name, env, "metadata.name")
		if err != nil {
			return err
		}
		wf.Name = v
	}
	if m.GenerateName != "" {
		v, err := evalString(m.GenerateName, env, "metadata.generateName")
		if err != nil {
			return err
		}
		wf.GenerateName = v
	}
	for k, e := range m.Labels {
		v, err := evalString(e, env, "label "+k)
		if err != nil {
			return err
		}
		setLabel(wf, k, v)
	}
	for k, e := range m.Annotations {
		v, err := evalString(e, env, "annotation "+k)
		if err != nil {
			return err
		}
		addMeta(wf, nil, map[string]string{k: v})
	}
	return nil
}

func evalString(e string, env map[string]any, what string) (string, error) {
	v, err := expr.Eval(e, env)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: expression %q gives %T, not a string", what, e, v)
	}
	return s, nil
}

// eventArguments sets the workflow's parameters from the binding's: a
// literal value as it is, a valueFrom.event expression's result as text
// (a string as it is, anything else as JSON).
func eventArguments(wf *v1alpha1.Workflow, args *v1alpha1.Arguments, env map[string]any) error {
	if args == nil {
		return nil
	}
	for _, p := range args.Parameters {
		out := v1alpha1.Parameter{Name: p.Name}
		switch {
		case p.ValueFrom != nil && p.ValueFrom.Event != "":
			v, err := expr.Eval(p.ValueFrom.Event, env)
			if err != nil {
				return fmt.Errorf("parameter %s: %w", p.Name, err)
			}
			text, err := eventText(v)
			if err != nil {
				return fmt.Errorf("parameter %s: %w", p.Name, err)
			}
			out.Value = v1alpha1.AnyStringPtr(text)
		case p.Value != nil:
			out.Value = v1alpha1.AnyStringPtr(p.Value.String())
		default:
			return fmt.Errorf("parameter %s: neither value nor valueFrom.event is set", p.Name)
		}
		wf.Spec.Arguments.Parameters = append(wf.Spec.Arguments.Parameters, out)
	}
	return nil
}

func eventText(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode result: %w", err)
	}
	return string(b), nil
}

// eventMetadata is a gateway metadata annotator: it passes the x- headers
// of a REST event (POST /api/v1/events/...) to ReceiveEvent as gRPC
// metadata, lower-case, which the gateway's default header matcher would
// drop. Other routes get nothing from it.
func eventMetadata(_ context.Context, r *http.Request) metadata.MD {
	if !strings.HasPrefix(r.URL.Path, "/api/v1/events/") {
		return nil
	}
	md := metadata.MD{}
	for k, v := range r.Header {
		if k = strings.ToLower(k); strings.HasPrefix(k, "x-") {
			md[k] = append(md[k], v...)
		}
	}
	return md
}
