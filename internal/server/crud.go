package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apiclient/clusterworkflowtemplate"
	"github.com/braidwf/braid/pkg/apiclient/cronworkflow"
	"github.com/braidwf/braid/pkg/apiclient/event"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apiclient/workflowarchive"
	"github.com/braidwf/braid/pkg/apiclient/workflowtemplate"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// crud holds what the WorkflowTemplate, ClusterWorkflowTemplate and
// CronWorkflow services share: decode and validate (as workflow.go's admit
// does), and create, get, list, update and delete on the store, with
// Kubernetes' semantics and Argo's error codes and messages.
type crud struct {
	store Store
	log   *slog.Logger
	kind  store.Kind
	// resource names the kind in messages, as the Kubernetes API server
	// does: "workflowtemplates.argoproj.io".
	resource   string
	namespaced bool
	// list builds the kind's List object (its JSON is {"metadata","items"}).
	list func(items []store.Object, continueToken string) (any, error)
}

// conflictRetries bounds read-modify-write retries (suspend, resume).
const conflictRetries = 5

// errorf is the status error for this kind and name of err, with
// Kubernetes' messages: `workflowtemplates.argoproj.io "x" not found`.
func (c *crud) errorf(err error, name string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return status.Errorf(codes.NotFound, "%s %q not found", c.resource, name)
	case errors.Is(err, store.ErrAlreadyExists):
		return status.Errorf(codes.AlreadyExists, "%s %q already exists", c.resource, name)
	case errors.Is(err, store.ErrConflict):
		// Kubernetes answers 409 Conflict, which argo-server maps to 6.
		return status.Errorf(codes.AlreadyExists,
			"Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again", c.resource, name)
	default:
		return storeError(err, name)
	}
}

// namespace is the store namespace of a request: "" for a cluster kind.
func (c *crud) namespace(ns string) string {
	if !c.namespaced {
		return ""
	}
	return ns
}

// admit decodes and validates a submitted object of this kind. The path's
// namespace is the default of the object's, and must match it when both
// are set. The object need not have a name yet (create may use
// generateName); callers check.
func (c *crud) admit(ctx context.Context, namespace string, in *structpb.Struct) (store.Object, error) {
	if in == nil || len(in.GetFields()) == 0 {
		return nil, status.Errorf(codes.InvalidArgument, "%s is required", lowerFirst(string(c.kind)))
	}
	m := in.AsMap()
	if _, ok := m["apiVersion"]; !ok {
		m["apiVersion"] = v1alpha1.APIVersion
	}
	if _, ok := m["kind"]; !ok {
		m["kind"] = string(c.kind)
	}
	if k, _ := m["kind"].(string); k != string(c.kind) {
		return nil, status.Errorf(codes.InvalidArgument, "kind must be %s, not %q", c.kind, k)
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", c.kind, err)
	}
	docs, err := spec.Load("", data, spec.Lenient)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if len(docs) != 1 || docs[0].Object == nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: not a %s", c.kind, c.kind)
	}
	doc := docs[0]
	obj, ok := doc.Object.(store.Object)
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "%s: %T is not a stored kind", c.kind, doc.Object)
	}
	if err := c.defaultNamespace(obj, namespace); err != nil {
		return nil, err
	}
	if err := validateObjectMeta(c.kind, obj, c.namespaced); err != nil {
		return nil, err
	}
	cat, err := c.catalog(ctx, obj, doc)
	if err != nil {
		return nil, err
	}
	errs, _ := spec.Validate(doc, cat).Split()
	if len(errs) > 0 {
		for i := range errs {
			errs[i].Line = 0 // the request was re-encoded: its lines mean nothing to the client
		}
		return nil, status.Error(codes.InvalidArgument, errs.Error())
	}
	return obj, nil
}

func (c *crud) defaultNamespace(obj store.Object, namespace string) error {
	if !c.namespaced {
		obj.SetNamespace("")
		return nil
	}
	switch ns := obj.GetNamespace(); {
	case ns == "" && namespace == "":
		obj.SetNamespace(defaultNamespace)
	case ns == "":
		obj.SetNamespace(namespace)
	case namespace != "" && ns != namespace:
		return status.Errorf(codes.InvalidArgument,
			"the namespace of the %s (%q) does not match the namespace of the request (%q)", c.kind, ns, namespace)
	}
	return nil
}

// validateObjectMeta checks names as the Kubernetes API server would.
func validateObjectMeta(kind store.Kind, o metav1.Object, namespaced bool) error {
	var bad []string
	check := func(field, value string, msgs []string) {
		for _, m := range msgs {
			bad = append(bad, fmt.Sprintf("%s: Invalid value: %q: %s", field, value, m))
		}
	}
	if namespaced {
		check("metadata.namespace", o.GetNamespace(), apivalidation.ValidateNamespaceName(o.GetNamespace(), false))
	}
	if o.GetName() != "" {
		check("metadata.name", o.GetName(), apivalidation.NameIsDNSSubdomain(o.GetName(), false))
	}
	if o.GetGenerateName() != "" {
		check("metadata.generateName", o.GetGenerateName(), apivalidation.NameIsDNSSubdomain(o.GetGenerateName(), true))
	}
	if len(bad) == 0 {
		return nil
	}
	name := o.GetName()
	if name == "" {
		name = o.GetGenerateName()
	}
	return status.Errorf(codes.InvalidArgument, "%s.argoproj.io %q is invalid: %s", kind, name, strings.Join(bad, "; "))
}

// catalog is the templates obj may refer to: its namespace's
// WorkflowTemplates and every ClusterWorkflowTemplate, with doc itself
// standing in for the stored version of the same object.
func (c *crud) catalog(ctx context.Context, obj store.Object, doc *spec.Document) (*spec.Catalog, error) {
	if b, ok := obj.(*v1alpha1.WorkflowEventBinding); ok {
		return submittedTemplate(b), nil
	}
	var docs []*spec.Document
	for _, q := range []struct {
		kind store.Kind
		ns   string
	}{{store.KindWorkflowTemplate, obj.GetNamespace()}, {store.KindClusterWorkflowTemplate, ""}} {
		if q.kind == store.KindWorkflowTemplate && q.ns == "" {
			continue // a cluster template cannot refer to namespaced ones
		}
		objs, _, err := c.store.List(ctx, q.kind, q.ns, store.ListOptions{})
		if err != nil {
			return nil, storeError(err, "")
		}
		for _, o := range objs {
			docs = append(docs, &spec.Document{Kind: string(q.kind), Name: o.GetName(), Object: o})
		}
	}
	return spec.NewCatalog(append(docs, doc)), nil // later documents win
}

// create admits and stores an object; a dry run stores nothing.
func (c *crud) create(ctx context.Context, namespace string, in *structpb.Struct, opts *workflow.CreateOptions) (*structpb.Struct, error) {
	obj, err := c.admit(ctx, namespace, in)
	if err != nil {
		return nil, err
	}
	if obj.GetName() == "" && obj.GetGenerateName() == "" {
		return nil, status.Error(codes.InvalidArgument, "metadata.name or metadata.generateName is required")
	}
	if len(opts.GetDryRun()) > 0 {
		return toStruct(obj)
	}
	if obj.GetName() != "" {
		if err := c.store.Create(ctx, obj); err != nil {
			return nil, c.errorf(err, obj.GetName())
		}
	} else if err := c.createGenerated(ctx, obj); err != nil {
		return nil, err
	}
	c.log.Info("created", "kind", c.kind, "namespace", obj.GetNamespace(), "name", obj.GetName())
	return toStruct(obj)
}

func (c *crud) createGenerated(ctx context.Context, obj store.Object) error {
	var err error
	for range generateNameAttempts {
		obj.SetName(sqlite.GenerateName(obj.GetGenerateName()))
		if err = c.store.Create(ctx, obj); !errors.Is(err, store.ErrAlreadyExists) {
			break
		}
	}
	if err != nil {
		return c.errorf(err, obj.GetName())
	}
	return nil
}

// lint admits an object and returns it; it stores nothing.
func (c *crud) lint(ctx context.Context, namespace string, in *structpb.Struct) (*structpb.Struct, error) {
	obj, err := c.admit(ctx, namespace, in)
	if err != nil {
		return nil, err
	}
	return toStruct(obj)
}

// get reads one object. getOptions.resourceVersion is accepted and
// ignored: the store always answers with the latest version.
func (c *crud) get(ctx context.Context, namespace, name string) (store.Object, error) {
	if name == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	o, err := c.store.Get(ctx, c.kind, c.namespace(namespace), name)
	if err != nil {
		return nil, c.errorf(err, name)
	}
	return o, nil
}

func (c *crud) getStruct(ctx context.Context, namespace, name string) (*structpb.Struct, error) {
	o, err := c.get(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return toStruct(o)
}

// listPage reads one page of objects matching lo and, when namePattern is
// set, whose name contains it. A page is full (listOptions.limit items)
// whenever more remain: filtered pages are topped up from the store.
func (c *crud) listPage(ctx context.Context, namespace string, lo *workflow.ListOptions, namePattern string) (*structpb.Struct, error) {
	if lo.GetLimit() < 0 {
		return nil, status.Error(codes.InvalidArgument, "listOptions.limit must not be negative")
	}
	opts := store.ListOptions{
		LabelSelector: lo.GetLabelSelector(),
		FieldSelector: storeFieldSelector(lo.GetFieldSelector()),
		Limit:         lo.GetLimit(),
		Continue:      lo.GetContinue(),
	}
	var items []store.Object
	for {
		objs, next, err := c.store.List(ctx, c.kind, c.namespace(namespace), opts)
		if err != nil {
			return nil, c.errorf(err, "")
		}
		for _, o := range objs {
			if namePattern == "" || strings.Contains(o.GetName(), namePattern) {
				items = append(items, o)
			}
		}
		opts.Continue = next
		if next == "" || opts.Limit == 0 || int64(len(items)) >= lo.GetLimit() {
			break
		}
		// Ask for no more than the page still needs, so that the token
		// after it continues right after the last item returned.
		opts.Limit = lo.GetLimit() - int64(len(items))
	}
	list, err := c.list(items, opts.Continue)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "list %s: %v", c.kind, err)
	}
	return toStruct(list)
}

// update replaces a stored object with a submitted one. An empty
// metadata.resourceVersion updates whatever is stored; a stale one is a
// conflict (409, code 6). name (from the path) must agree with the
// object's name, which defaults to it.
func (c *crud) update(ctx context.Context, namespace, name string, in *structpb.Struct) (*structpb.Struct, error) {
	obj, err := c.admit(ctx, namespace, in)
	if err != nil {
		return nil, err
	}
	switch {
	case obj.GetName() == "" && name == "":
		return nil, status.Error(codes.InvalidArgument, "metadata.name is required")
	case obj.GetName() == "":
		obj.SetName(name)
	case name != "" && obj.GetName() != name:
		return nil, status.Errorf(codes.InvalidArgument,
			"the name of the %s (%q) does not match the name of the request (%q)", c.kind, obj.GetName(), name)
	}
	cur, err := c.get(ctx, obj.GetNamespace(), obj.GetName())
	if err != nil {
		return nil, err
	}
	if obj.GetResourceVersion() == "" {
		obj.SetResourceVersion(cur.GetResourceVersion())
	}
	keepStatus(cur, obj)
	if err := c.store.Update(ctx, obj); err != nil {
		return nil, c.errorf(err, obj.GetName())
	}
	c.log.Info("updated", "kind", c.kind, "namespace", obj.GetNamespace(), "name", obj.GetName())
	return toStruct(obj)
}

// keepStatus carries a CronWorkflow's status over an update: the scheduler
// owns it, and an update of the spec must not reset its history.
func keepStatus(cur, obj store.Object) {
	if c, ok := cur.(*v1alpha1.CronWorkflow); ok {
		if o, ok := obj.(*v1alpha1.CronWorkflow); ok {
			o.Status = *c.Status.DeepCopy()
		}
	}
}

// modify applies fn to the stored object and writes it, reading again and
// retrying when another writer got there first.
func (c *crud) modify(ctx context.Context, namespace, name string, fn func(store.Object) error) (*structpb.Struct, error) {
	for attempt := 0; ; attempt++ {
		o, err := c.get(ctx, namespace, name)
		if err != nil {
			return nil, err
		}
		if err := fn(o); err != nil {
			return nil, err
		}
		err = c.store.Update(ctx, o)
		if errors.Is(err, store.ErrConflict) && attempt < conflictRetries {
			continue
		}
		if err != nil {
			return nil, c.errorf(err, name)
		}
		return toStruct(o)
	}
}

// delete removes an object after checking deleteOptions.preconditions;
// a dry run removes nothing.
func (c *crud) delete(ctx context.Context, namespace, name string, opts *workflow.DeleteOptions) error {
	o, err := c.get(ctx, namespace, name)
	if err != nil {
		return err
	}
	if p := opts.GetPreconditions(); p != nil {
		if p.GetUid() != "" && p.GetUid() != string(o.GetUID()) {
			return status.Errorf(codes.AlreadyExists, "%s %q: precondition failed: uid %s does not match %s", c.resource, name, p.GetUid(), o.GetUID())
		}
		if p.GetResourceVersion() != "" && p.GetResourceVersion() != o.GetResourceVersion() {
			return status.Errorf(codes.AlreadyExists, "%s %q: precondition failed: resourceVersion %s does not match %s", c.resource, name, p.GetResourceVersion(), o.GetResourceVersion())
		}
	}
	if len(opts.GetDryRun()) > 0 {
		return nil
	}
	if err := c.store.Delete(ctx, c.kind, o.GetNamespace(), name); err != nil {
		return c.errorf(err, name)
	}
	c.log.Info("deleted", "kind", c.kind, "namespace", o.GetNamespace(), "name", name)
	return nil
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// typedItems converts store objects to the element type of a List.
func typedItems[T any](objs []store.Object) ([]T, error) {
	var out []T
	for _, o := range objs {
		t, ok := any(o).(*T)
		if !ok {
			return nil, fmt.Errorf("store returned %T", o)
		}
		out = append(out, *t)
	}
	return out, nil
}

// kindServers are the services of the kinds other than Workflow.
type kindServers struct {
	templates        *templateServer
	clusterTemplates *clusterTemplateServer
	crons            *cronServer
	archive          *archiveServer
	events           *eventServer
}

func newKindServers(st Store, log *slog.Logger) *kindServers {
	return &kindServers{
		templates:        newTemplateServer(st, log),
		clusterTemplates: newClusterTemplateServer(st, log),
		crons:            newCronServer(st, log),
		archive:          newArchiveServer(st, log),
		events:           newEventServer(st, log),
	}
}

func (k *kindServers) registerGRPC(g *grpc.Server) {
	workflowtemplate.RegisterWorkflowTemplateServiceServer(g, k.templates)
	clusterworkflowtemplate.RegisterClusterWorkflowTemplateServiceServer(g, k.clusterTemplates)
	cronworkflow.RegisterCronWorkflowServiceServer(g, k.crons)
	workflowarchive.RegisterArchivedWorkflowServiceServer(g, k.archive)
	event.RegisterEventServiceServer(g, k.events)
}

func (k *kindServers) registerGateway(ctx context.Context, gw *runtime.ServeMux) error {
	for name, err := range map[string]error{
		"workflowtemplate":        workflowtemplate.RegisterWorkflowTemplateServiceHandlerServer(ctx, gw, k.templates),
		"clusterworkflowtemplate": clusterworkflowtemplate.RegisterClusterWorkflowTemplateServiceHandlerServer(ctx, gw, k.clusterTemplates),
		"cronworkflow":            cronworkflow.RegisterCronWorkflowServiceHandlerServer(ctx, gw, k.crons),
		"workflowarchive":         workflowarchive.RegisterArchivedWorkflowServiceHandlerServer(ctx, gw, k.archive),
		"event":                   event.RegisterEventServiceHandlerServer(ctx, gw, k.events),
	} {
		if err != nil {
			return fmt.Errorf("register %s gateway: %w", name, err)
		}
	}
	return nil
}
