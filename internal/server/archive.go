package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"

	"github.com/braidwf/braid/internal/server/auth"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/wfops"
	"github.com/braidwf/braid/pkg/apiclient/workflowarchive"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Archive is what ArchivedWorkflowService needs from a store on top of
// Store (Capabilities.Archive). Without it the server serves no archive:
// every archive RPC answers Unimplemented.
type Archive interface {
	GetArchived(ctx context.Context, uid string) (*v1alpha1.Workflow, error)
	ListArchived(ctx context.Context, opts store.ArchiveListOptions) ([]v1alpha1.Workflow, bool, error)
	CountArchived(ctx context.Context, opts store.ArchiveListOptions) (int64, error)
	DeleteArchived(ctx context.Context, uid string) error
	ArchivedLabelKeys(ctx context.Context, namespace string) ([]string, error)
	ArchivedLabelValues(ctx context.Context, namespace, key string) ([]string, error)
}

var _ workflowarchive.ArchivedWorkflowServiceServer = (*archiveServer)(nil)

// archiveServer is ArchivedWorkflowService: the archive (list, get,
// delete, label keys and values) and retry and resubmit of an archived
// workflow, which create a workflow in the store.
type archiveServer struct {
	workflowarchive.UnimplementedArchivedWorkflowServiceServer
	archive Archive // nil: the store keeps no archive
	wfs     *workflowServer
	log     *slog.Logger
	forget  func(namespace, name string) error // nil: step logs stay
}

// newArchiveServer serves archive a (nil: none) beside the live store st.
func newArchiveServer(st Store, a Archive, log *slog.Logger) *archiveServer {
	return &archiveServer{archive: a, wfs: &workflowServer{store: st, caps: Capabilities{Archive: a}, log: log}, log: log}
}

func (s *archiveServer) ready() error {
	if s.archive == nil {
		return status.Error(codes.Unimplemented, "this server's store keeps no workflow archive")
	}
	return nil
}

// ListArchivedWorkflows answers a gRPC list (REST lists are streamed by
// serveList): see listArchived.
func (s *archiveServer) ListArchivedWorkflows(ctx context.Context, req *workflowarchive.ListArchivedWorkflowsRequest) (*v1alpha1.WorkflowList, error) {
	sink := itemSink{shape: parseListShape("")}
	meta, err := s.listArchived(ctx, req, &sink)
	if err != nil {
		return nil, err
	}
	return sink.shape.list(sink.items, meta)
}

// listArchived hands the archived workflows req asks for to sink, newest
// started first, and returns the list's metadata: continue (an offset)
// when a client page (listOptions.limit) has more after it, and
// remainingItemCount when asked. Without a limit the archive is read
// listPageSize at a time; a workflow archived meanwhile shifts the later
// pages, and one seen on an earlier page is not handed over again.
func (s *archiveServer) listArchived(ctx context.Context, req *workflowarchive.ListArchivedWorkflowsRequest, sink listSink) (metav1.ListMeta, error) {
	var meta metav1.ListMeta
	if err := s.ready(); err != nil {
		return meta, err
	}
	opts, showRemaining, err := archiveListOptions(req)
	if err != nil {
		return meta, err
	}
	page, seen, count := opts, map[types.UID]struct{}{}, 0
	if opts.Limit == 0 {
		page.Limit = listPageSize
	}
	for {
		items, more, err := s.archive.ListArchived(ctx, page)
		if err != nil {
			return meta, archiveError(err, "")
		}
		for i := range items {
			if _, dup := seen[items[i].UID]; dup {
				continue
			}
			seen[items[i].UID] = struct{}{}
			if err := sink.item(&items[i]); err != nil {
				return meta, err
			}
			count++
		}
		if opts.Limit > 0 {
			if more {
				meta.Continue = strconv.Itoa(opts.Offset + len(items))
			}
			break
		}
		if !more {
			break
		}
		page.Offset += len(items)
	}
	if showRemaining {
		total, err := s.archive.CountArchived(ctx, opts)
		if err != nil {
			return meta, archiveError(err, "")
		}
		rest := max(total-int64(opts.Offset+count), 0)
		meta.RemainingItemCount = &rest
	}
	return meta, nil
}

// archiveListOptions reads a list request: listOptions.continue is an
// offset; the field selector may name metadata.name and
// metadata.namespace, and ext.showRemainingItemCount asks for a count.
func archiveListOptions(req *workflowarchive.ListArchivedWorkflowsRequest) (store.ArchiveListOptions, bool, error) {
	lo := listOptions(req.GetListOptions())
	opts := store.ArchiveListOptions{
		Namespace:     req.GetNamespace(),
		NamePrefix:    req.GetNamePrefix(),
		NameFilter:    store.NameFilter(req.GetNameFilter()),
		LabelSelector: lo.LabelSelector,
	}
	if lo.Limit < 0 {
		return opts, false, status.Error(codes.InvalidArgument, "listOptions.limit must not be negative")
	}
	opts.Limit = int(lo.Limit)
	if c := lo.Continue; c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 {
			return opts, false, status.Error(codes.InvalidArgument, "listOptions.continue must be int")
		}
		opts.Offset = n
	}
	showRemaining := false
	for _, r := range strings.Split(lo.FieldSelector, ",") {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		if isStartedAtBound(r) {
			if err := setStartedAtBound(r, &opts.CreatedAfter, &opts.CreatedBefore); err != nil {
				return opts, false, err
			}
			continue
		}
		k, v, ok := strings.Cut(r, "=")
		not := strings.HasSuffix(k, "!")
		k, v = strings.TrimSuffix(strings.TrimSpace(k), "!"), strings.TrimPrefix(strings.TrimSpace(v), "=")
		switch {
		case ok && k == "metadata.name" && not:
			opts.Name, opts.NameFilter = v, store.NameNotEquals
		case ok && k == "metadata.name":
			opts.Name = v
		case ok && k == "metadata.namespace" && !not:
			opts.Namespace = v
		case ok && k == "ext.showRemainingItemCount":
			showRemaining = v == "true"
		default:
			return opts, false, status.Errorf(codes.InvalidArgument,
				"listOptions.fieldSelector %q: supported are metadata.name=, metadata.name!=, metadata.namespace=, spec.startedAt>, spec.startedAt< and ext.showRemainingItemCount=", r)
		}
	}
	return opts, showRemaining, nil
}

// get reads an archived workflow; namespace and name, when given, must be
// the workflow's.
func (s *archiveServer) get(ctx context.Context, verb, uid, namespace, name string) (*v1alpha1.Workflow, error) {
	if err := s.ready(); err != nil {
		return nil, err
	}
	if uid == "" {
		return nil, status.Error(codes.InvalidArgument, "uid is required")
	}
	wf, err := s.archive.GetArchived(ctx, uid)
	if err != nil {
		return nil, archiveError(err, uid)
	}
	if (namespace != "" && wf.Namespace != namespace) || (name != "" && wf.Name != name) {
		return nil, archiveError(store.ErrNotFound, uid)
	}
	// Named by uid: authorized once the workflow's namespace is known.
	if err := auth.Check(ctx, auth.Attributes{Verb: verb, Resource: "archivedworkflows", Namespace: wf.Namespace, Name: wf.Name}); err != nil {
		return nil, err
	}
	return wf, nil
}

func (s *archiveServer) GetArchivedWorkflow(ctx context.Context, req *workflowarchive.GetArchivedWorkflowRequest) (*v1alpha1.Workflow, error) {
	wf, err := s.get(ctx, "get", req.GetUid(), req.GetNamespace(), req.GetName())
	if err != nil {
		return nil, err
	}
	return wf, nil
}

func (s *archiveServer) DeleteArchivedWorkflow(ctx context.Context, req *workflowarchive.DeleteArchivedWorkflowRequest) (*workflowarchive.ArchivedWorkflowDeletedResponse, error) {
	wf, err := s.get(ctx, "delete", req.GetUid(), req.GetNamespace(), req.GetName())
	if err != nil {
		return nil, err
	}
	if err := s.archive.DeleteArchived(ctx, string(wf.UID)); err != nil {
		return nil, archiveError(err, req.GetUid())
	}
	s.log.Info("archived workflow deleted", "namespace", wf.Namespace, "name", wf.Name, "uid", wf.UID)
	if s.forget != nil {
		gone, err := store.WorkflowGone(ctx, s.wfs.store, s.archive, wf.Namespace, wf.Name)
		if err == nil && gone {
			err = s.forget(wf.Namespace, wf.Name)
		}
		if err != nil {
			s.log.Warn("cannot remove the step logs of a deleted workflow", "namespace", wf.Namespace, "name", wf.Name, "err", err)
		}
	}
	return &workflowarchive.ArchivedWorkflowDeletedResponse{}, nil
}

func (s *archiveServer) ListArchivedWorkflowLabelKeys(ctx context.Context, req *workflowarchive.ListArchivedWorkflowLabelKeysRequest) (*v1alpha1.LabelKeys, error) {
	if err := s.ready(); err != nil {
		return nil, err
	}
	keys, err := s.archive.ArchivedLabelKeys(ctx, req.GetNamespace())
	if err != nil {
		return nil, archiveError(err, "")
	}
	return &v1alpha1.LabelKeys{Items: keys}, nil
}

// ListArchivedWorkflowLabelValues lists the values of the one label key
// that listOptions.labelSelector names, as argo-server does.
func (s *archiveServer) ListArchivedWorkflowLabelValues(ctx context.Context, req *workflowarchive.ListArchivedWorkflowLabelValuesRequest) (*v1alpha1.LabelValues, error) {
	if err := s.ready(); err != nil {
		return nil, err
	}
	sel := listOptions(req.GetListOptions()).LabelSelector
	reqs, err := labels.ParseToRequirements(sel)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "listOptions.labelSelector %q: %v", sel, err)
	}
	if len(reqs) != 1 || reqs[0].Operator() != selection.Exists {
		return nil, status.Errorf(codes.InvalidArgument, "listOptions.labelSelector must name exactly one label key, not %q", sel)
	}
	vals, err := s.archive.ArchivedLabelValues(ctx, req.GetNamespace(), reqs[0].Key())
	if err != nil {
		return nil, archiveError(err, "")
	}
	return &v1alpha1.LabelValues{Items: vals}, nil
}

// RetryArchivedWorkflow creates the archived workflow again in the store,
// set to run its failed part again (wfops.Retry), unless a workflow of
// that name exists there: then `argo retry` is the way (409).
func (s *archiveServer) RetryArchivedWorkflow(ctx context.Context, req *workflowarchive.RetryArchivedWorkflowRequest) (*v1alpha1.Workflow, error) {
	old, err := s.get(ctx, "retry", req.GetUid(), req.GetNamespace(), req.GetName())
	if err != nil {
		return nil, err
	}
	_, err = s.wfs.store.Get(ctx, store.KindWorkflow, old.Namespace, old.Name)
	switch {
	case err == nil:
		return nil, status.Errorf(codes.AlreadyExists, "workflow %q already exists in namespace %q: use argo retry %s instead", old.Name, old.Namespace, old.Name)
	case !errors.Is(err, store.ErrNotFound):
		return nil, storeError(err, old.Name)
	}
	wf, _, err := wfops.Retry(old, wfops.RetryOptions{
		RestartSuccessful: req.GetRestartSuccessful(),
		NodeFieldSelector: req.GetNodeFieldSelector(),
		Parameters:        req.GetParameters(),
	}, s.wfs.now())
	if err != nil {
		return nil, opError(err)
	}
	// A new object: the store gives it a new uid and resourceVersion.
	wf.UID, wf.ResourceVersion, wf.Generation = "", "", 0
	wf.ManagedFields = nil
	if err := s.wfs.createNamed(ctx, wf, nil); err != nil {
		return nil, err
	}
	s.log.Info("archived workflow retried", "namespace", wf.Namespace, "name", wf.Name, "from", old.UID)
	return wf, nil
}

// ResubmitArchivedWorkflow creates a new workflow from an archived one
// (wfops.Resubmit), as argo resubmit does from a live one.
func (s *archiveServer) ResubmitArchivedWorkflow(ctx context.Context, req *workflowarchive.ResubmitArchivedWorkflowRequest) (*v1alpha1.Workflow, error) {
	old, err := s.get(ctx, "resubmit", req.GetUid(), req.GetNamespace(), req.GetName())
	if err != nil {
		return nil, err
	}
	wf, err := s.wfs.resubmitFrom(ctx, old, wfops.ResubmitOptions{Memoized: req.GetMemoized(), Parameters: req.GetParameters()})
	if err != nil {
		return nil, err
	}
	s.log.Info("archived workflow resubmitted", "namespace", wf.Namespace, "name", wf.Name, "from", old.UID)
	return wf, nil
}

// resubmitFrom creates the workflow wfops.Resubmit makes of old, renaming
// a memoized copy's nodes once the store has chosen its name.
// ResubmitWorkflow (actions.go) does the same for a live workflow.
func (s *workflowServer) resubmitFrom(ctx context.Context, old *v1alpha1.Workflow, opts wfops.ResubmitOptions) (*v1alpha1.Workflow, error) {
	wf, err := wfops.Resubmit(old, opts)
	if err != nil {
		return nil, opError(err)
	}
	var renameErr error
	if err := s.createNamed(ctx, wf, func(wf *v1alpha1.Workflow) {
		if opts.Memoized {
			renameErr = wfops.RenameNodes(wf, old.Name)
		}
	}); err != nil {
		return nil, err
	}
	if renameErr != nil {
		return nil, opError(renameErr)
	}
	return wf, nil
}

// archiveError maps an archive store error to a status; uid names the
// archived workflow in a NotFound.
func archiveError(err error, uid string) error {
	if errors.Is(err, store.ErrNotFound) {
		return status.Error(codes.NotFound, fmt.Sprintf("archived workflow %q not found", uid))
	}
	return storeError(err, "")
}
