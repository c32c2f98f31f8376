package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/server/gateway"
	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apiclient/clusterworkflowtemplate"
	"github.com/braidwf/braid/pkg/apiclient/cronworkflow"
	"github.com/braidwf/braid/pkg/apiclient/event"
	"github.com/braidwf/braid/pkg/apiclient/rest"
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

// conflictRetries bounds read-modify-write retries (suspend, resume): a
// first try, then this many more.
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
func (c *crud) admit(ctx context.Context, namespace string, in store.Object) (store.Object, error) {
	if in == nil || reflect.ValueOf(in).IsNil() {
		return nil, status.Errorf(codes.InvalidArgument, "%s is required", lowerFirst(string(c.kind)))
	}
	gvk := in.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		gvk.Kind = string(c.kind)
	}
	if gvk.Kind != string(c.kind) {
		return nil, status.Errorf(codes.InvalidArgument, "kind must be %s, not %q", c.kind, gvk.Kind)
	}
	if gvk.Group == "" && gvk.Version == "" {
		gvk.Group, gvk.Version = v1alpha1.Group, v1alpha1.VersionName
	}
	if gv := gvk.GroupVersion().String(); gv != v1alpha1.APIVersion {
		return nil, status.Errorf(codes.InvalidArgument, "apiVersion must be %s, not %q", v1alpha1.APIVersion, gv)
	}
	in.GetObjectKind().SetGroupVersionKind(gvk)
	obj, doc := in, spec.ObjectDocument(in)
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
func (c *crud) create(ctx context.Context, namespace string, in store.Object, opts *metav1.CreateOptions) (store.Object, error) {
	obj, err := c.admit(ctx, namespace, in)
	if err != nil {
		return nil, err
	}
	if obj.GetName() == "" && obj.GetGenerateName() == "" {
		return nil, status.Error(codes.InvalidArgument, "metadata.name or metadata.generateName is required")
	}
	if opts != nil && len(opts.DryRun) > 0 {
		return obj, nil
	}
	if obj.GetName() != "" {
		if err := c.store.Create(ctx, obj); err != nil {
			return nil, c.errorf(err, obj.GetName())
		}
	} else if err := c.createGenerated(ctx, obj); err != nil {
		return nil, err
	}
	c.log.Info("created", "kind", c.kind, "namespace", obj.GetNamespace(), "name", obj.GetName())
	return obj, nil
}

func (c *crud) createGenerated(ctx context.Context, obj store.Object) error {
	var err error
	for range generateNameAttempts {
		obj.SetName(store.GenerateName(obj.GetGenerateName()))
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
func (c *crud) lint(ctx context.Context, namespace string, in store.Object) (store.Object, error) {
	return c.admit(ctx, namespace, in)
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

// listPage reads one page of objects matching lo and, when namePattern is
// set, whose name contains it. A page is full (listOptions.limit items)
// whenever more remain: filtered pages are topped up from the store.
func (c *crud) listPage(ctx context.Context, namespace string, lo *metav1.ListOptions, namePattern string) (any, error) {
	if lo == nil {
		lo = &metav1.ListOptions{}
	}
	if lo.Limit < 0 {
		return nil, status.Error(codes.InvalidArgument, "listOptions.limit must not be negative")
	}
	opts := store.ListOptions{
		LabelSelector: lo.LabelSelector,
		FieldSelector: storeFieldSelector(lo.FieldSelector),
		Limit:         lo.Limit,
		Continue:      lo.Continue,
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
		if next == "" || opts.Limit == 0 || int64(len(items)) >= lo.Limit {
			break
		}
		// Ask for no more than the page still needs, so that the token
		// after it continues right after the last item returned.
		opts.Limit = lo.Limit - int64(len(items))
	}
	list, err := c.list(items, opts.Continue)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "list %s: %v", c.kind, err)
	}
	return list, nil
}

// update replaces a stored object with a submitted one. An empty
// metadata.resourceVersion updates whatever is stored; a stale one is a
// conflict (409, code 6). name (from the path) must agree with the
// object's name, which defaults to it.
func (c *crud) update(ctx context.Context, namespace, name string, in store.Object) (store.Object, error) {
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
	return obj, nil
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
func (c *crud) modify(ctx context.Context, namespace, name string, fn func(store.Object) error) (store.Object, error) {
	o, err := store.Modify(ctx, conflictRetries+1,
		func(ctx context.Context) (store.Object, error) { return c.get(ctx, namespace, name) },
		func(o store.Object) (store.Object, bool, error) { return o, true, fn(o) },
		func(ctx context.Context, o store.Object) error {
			err := c.store.Update(ctx, o)
			if err != nil && !errors.Is(err, store.ErrConflict) {
				return c.errorf(err, name)
			}
			return err
		})
	if errors.Is(err, store.ErrConflict) {
		return nil, c.errorf(err, name)
	}
	return o, err
}

// delete removes an object after checking deleteOptions.preconditions;
// a dry run removes nothing.
func (c *crud) delete(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions) error {
	o, err := c.get(ctx, namespace, name)
	if err != nil {
		return err
	}
	if err := checkPreconditions(c.resource, name, opts, o); err != nil {
		return err
	}
	if opts != nil && len(opts.DryRun) > 0 {
		return nil
	}
	if err := c.store.Delete(ctx, c.kind, o.GetNamespace(), name); err != nil {
		return c.errorf(err, name)
	}
	c.log.Info("deleted", "kind", c.kind, "namespace", o.GetNamespace(), "name", name)
	return nil
}

// checkPreconditions answers Kubernetes' error when deleteOptions.preconditions
// do not hold for o.
func checkPreconditions(resource, name string, opts *metav1.DeleteOptions, o metav1.Object) error {
	if opts == nil || opts.Preconditions == nil {
		return nil
	}
	p := opts.Preconditions
	if p.UID != nil && *p.UID != "" && *p.UID != o.GetUID() {
		return status.Errorf(codes.AlreadyExists, "%s %q: precondition failed: uid %s does not match %s", resource, name, *p.UID, o.GetUID())
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != o.GetResourceVersion() {
		return status.Errorf(codes.AlreadyExists, "%s %q: precondition failed: resourceVersion %s does not match %s", resource, name, *p.ResourceVersion, o.GetResourceVersion())
	}
	return nil
}

// as is o (with err) as the concrete type the service returns.
func as[T any](o any, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	t, ok := o.(*T)
	if !ok {
		return nil, status.Errorf(codes.Internal, "%T where a %T was expected", o, t)
	}
	return t, nil
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

func newKindServers(st Store, archive Archive, log *slog.Logger) *kindServers {
	return &kindServers{
		templates:        newTemplateServer(st, log),
		clusterTemplates: newClusterTemplateServer(st, log),
		crons:            newCronServer(st, log),
		archive:          newArchiveServer(st, archive, log),
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

func (k *kindServers) registerGateway(gw *runtime.ServeMux, opts gateway.Options) error {
	for _, svc := range []struct {
		desc   *grpc.ServiceDesc
		impl   any
		routes []rest.Route
	}{
		{&workflowtemplate.WorkflowTemplateService_ServiceDesc, k.templates, workflowtemplate.Routes},
		{&clusterworkflowtemplate.ClusterWorkflowTemplateService_ServiceDesc, k.clusterTemplates, clusterworkflowtemplate.Routes},
		{&cronworkflow.CronWorkflowService_ServiceDesc, k.crons, cronworkflow.Routes},
		{&workflowarchive.ArchivedWorkflowService_ServiceDesc, k.archive, workflowarchive.Routes},
		{&event.EventService_ServiceDesc, k.events, event.Routes},
	} {
		if err := gateway.Register(gw, svc.desc, svc.impl, svc.routes, opts); err != nil {
			return fmt.Errorf("register %s: %w", svc.desc.ServiceName, err)
		}
	}
	return nil
}
