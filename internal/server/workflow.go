package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// latest is the name that resolves to a namespace's newest workflow.
const latest = "@latest"

// defaultNamespace is used when neither the path nor the object names one.
const defaultNamespace = "default"

// generateNameAttempts bounds retries of a generated name that was taken.
const generateNameAttempts = 8

type workflowServer struct {
	workflow.UnimplementedWorkflowServiceServer
	store     Store
	caps      Capabilities // the store's optional extras
	log       *slog.Logger
	logSource StepLogs          // nil: no logs
	clock     func() time.Time  // nil: time.Now
	artifacts *artifact.Drivers // nil: no artifact GC on delete
}

func (s *workflowServer) CreateWorkflow(ctx context.Context, req *workflow.WorkflowCreateRequest) (*v1alpha1.Workflow, error) {
	wf, err := s.admit(ctx, req.GetNamespace(), req.GetWorkflow())
	if err != nil {
		return nil, err
	}
	if o := req.GetCreateOptions(); o != nil && len(o.DryRun) > 0 {
		return wf, nil
	}
	if req.GetServerDryRun() {
		if wf.Name == "" {
			wf.Name = store.GenerateName(wf.GenerateName)
		}
		return wf, nil
	}
	if err := s.expand(ctx, wf); err != nil {
		return nil, err
	}
	if err := s.createNamed(ctx, wf, nil); err != nil {
		return nil, err
	}
	s.log.Info("workflow created", "namespace", wf.Namespace, "name", wf.Name)
	return wf, nil
}

func (s *workflowServer) LintWorkflow(ctx context.Context, req *workflow.WorkflowLintRequest) (*v1alpha1.Workflow, error) {
	return s.admit(ctx, req.GetNamespace(), req.GetWorkflow())
}

// GetWorkflow answers a gRPC get (a REST get is streamed by serveGet).
func (s *workflowServer) GetWorkflow(ctx context.Context, req *workflow.WorkflowGetRequest) (*v1alpha1.Workflow, error) {
	wf, err := s.getRequested(ctx, req)
	if err != nil {
		return nil, err
	}
	return withFields(wf, req.GetFields())
}

// ListWorkflows answers a gRPC list (REST lists are streamed by
// serveWorkflowList): see listWorkflows. The message holds every item, but
// the server holds no more than the items, shaped, and a store page.
func (s *workflowServer) ListWorkflows(ctx context.Context, req *workflow.WorkflowListRequest) (*v1alpha1.WorkflowList, error) {
	sh := parseListShape(req.GetFields())
	sink := itemSink{shape: sh}
	meta, err := s.listWorkflows(ctx, req, sh, &sink)
	if err != nil {
		return nil, err
	}
	return sh.list(sink.items, meta)
}

func (s *workflowServer) DeleteWorkflow(ctx context.Context, req *workflow.WorkflowDeleteRequest) (*workflow.WorkflowDeleteResponse, error) {
	wf, err := s.get(ctx, req.GetNamespace(), req.GetName())
	if err != nil {
		return nil, err
	}
	if err := checkPreconditions("workflows.argoproj.io", wf.Name, req.GetDeleteOptions(), wf); err != nil {
		return nil, err
	}
	if o := req.GetDeleteOptions(); o != nil && len(o.DryRun) > 0 {
		return &workflow.WorkflowDeleteResponse{}, nil
	}
	if s.artifacts != nil {
		if _, err := artifact.Collect(ctx, wf, s.artifacts, v1alpha1.ArtifactGCOnWorkflowDeletion); err != nil {
			s.log.Warn("artifact garbage collection", "workflow", wf.Namespace+"/"+wf.Name, "err", err)
		}
	}
	if err := s.store.Delete(ctx, store.KindWorkflow, wf.Namespace, wf.Name); err != nil {
		return nil, storeError(err, wf.Name)
	}
	s.log.Info("workflow deleted", "namespace", wf.Namespace, "name", wf.Name)
	return &workflow.WorkflowDeleteResponse{}, nil
}

// get reads one workflow; the name @latest is the namespace's newest.
func (s *workflowServer) get(ctx context.Context, namespace, name string) (*v1alpha1.Workflow, error) {
	if name == latest {
		objs, _, err := s.store.List(ctx, store.KindWorkflow, namespace, store.ListOptions{Limit: 1})
		if err != nil {
			return nil, storeError(err, "")
		}
		if len(objs) == 0 {
			return nil, status.Error(codes.NotFound, "no workflows found")
		}
		namespace, name = objs[0].GetNamespace(), objs[0].GetName()
	}
	o, err := s.store.Get(ctx, store.KindWorkflow, namespace, name)
	if err != nil {
		return nil, storeError(err, name)
	}
	wf, ok := o.(*v1alpha1.Workflow)
	if !ok {
		return nil, status.Errorf(codes.Internal, "store returned %T for a workflow", o)
	}
	return wf, nil
}

// admit decodes and validates a submitted workflow, as Create and Lint do.
// The namespace of the path is the default of the object's. The Workflow
// returned is in itself, completed.
func (s *workflowServer) admit(ctx context.Context, namespace string, in *v1alpha1.Workflow) (*v1alpha1.Workflow, error) {
	if in == nil {
		return nil, status.Error(codes.InvalidArgument, "workflow is required")
	}
	if err := setTypeMeta(in); err != nil {
		return nil, err
	}
	wf := in
	doc := spec.ObjectDocument(wf)
	switch {
	case wf.Namespace == "" && namespace == "":
		wf.Namespace = defaultNamespace
	case wf.Namespace == "":
		wf.Namespace = namespace
	case namespace != "" && wf.Namespace != namespace:
		return nil, status.Errorf(codes.InvalidArgument,
			"the namespace of the workflow (%q) does not match the namespace of the request (%q)", wf.Namespace, namespace)
	}
	if err := validateMeta(wf); err != nil {
		return nil, err
	}
	cat, err := s.catalog(ctx, wf.Namespace)
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
	if wf.Name == "" && wf.GenerateName == "" {
		return nil, status.Error(codes.InvalidArgument, "metadata.name or metadata.generateName is required")
	}
	return wf, nil
}

// validateMeta checks names as the Kubernetes API server would: a
// namespace is a DNS-1123 label, a name (or generateName prefix) a DNS-1123
// subdomain.
func validateMeta(wf *v1alpha1.Workflow) error {
	var bad []string
	check := func(field, value string, msgs []string) {
		for _, m := range msgs {
			bad = append(bad, fmt.Sprintf("%s: Invalid value: %q: %s", field, value, m))
		}
	}
	check("metadata.namespace", wf.Namespace, apivalidation.ValidateNamespaceName(wf.Namespace, false))
	if wf.Name != "" {
		check("metadata.name", wf.Name, apivalidation.NameIsDNSSubdomain(wf.Name, false))
	}
	if wf.GenerateName != "" {
		check("metadata.generateName", wf.GenerateName, apivalidation.NameIsDNSSubdomain(wf.GenerateName, true))
	}
	if len(bad) == 0 {
		return nil
	}
	name := wf.Name
	if name == "" {
		name = wf.GenerateName
	}
	return status.Errorf(codes.InvalidArgument, "Workflow.argoproj.io %q is invalid: %s", name, strings.Join(bad, "; "))
}

// catalog holds the namespace's WorkflowTemplates and every
// ClusterWorkflowTemplate, for templateRef and workflowTemplateRef.
func (s *workflowServer) catalog(ctx context.Context, namespace string) (*spec.Catalog, error) {
	var docs []*spec.Document
	for _, q := range []struct {
		kind store.Kind
		ns   string
	}{{store.KindWorkflowTemplate, namespace}, {store.KindClusterWorkflowTemplate, ""}} {
		objs, _, err := s.store.List(ctx, q.kind, q.ns, store.ListOptions{})
		if err != nil {
			return nil, storeError(err, "")
		}
		for _, o := range objs {
			docs = append(docs, &spec.Document{Kind: string(q.kind), Name: o.GetName(), Object: o})
		}
	}
	return spec.NewCatalog(docs), nil
}

// storeFieldSelector drops the requirements that are not filters
// (ext.showRemainingItemCount) from an Argo field selector.
func storeFieldSelector(s string) string {
	var keep []string
	for _, r := range strings.Split(s, ",") {
		r = strings.TrimSpace(r)
		if r == "" || strings.HasPrefix(r, "ext.") {
			continue
		}
		keep = append(keep, r)
	}
	return strings.Join(keep, ",")
}

// storeError turns a store error into a gRPC status with Argo's messages.
func storeError(err error, name string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return status.Errorf(codes.NotFound, "workflows.argoproj.io %q not found", name)
	case errors.Is(err, store.ErrAlreadyExists):
		return status.Errorf(codes.AlreadyExists, "workflows.argoproj.io %q already exists", name)
	case errors.Is(err, store.ErrConflict):
		return status.Errorf(codes.AlreadyExists, "workflows.argoproj.io %q: %v", name, err)
	case errors.Is(err, store.ErrInvalid):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, store.ErrForbidden):
		return status.Error(codes.PermissionDenied, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	default:
		return status.Error(codes.Internal, fmt.Sprintf("store: %v", err))
	}
}
