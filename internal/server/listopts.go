package server

import (
	"context"
	"errors"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// listQuery is a WorkflowListRequest in store terms, and whether it asks
// for metadata.remainingItemCount.
type listQuery struct {
	opts          store.ListOptions
	showRemaining bool
}

// Counter is what a store needs on top of Store for a list page's
// metadata.remainingItemCount: Count is how many objects List with opts
// would return from opts.Continue on (Capabilities.Counter; sqlite and kube
// stores have it). Without it remainingItemCount is left out.
type Counter interface {
	Count(ctx context.Context, kind store.Kind, namespace string, opts store.ListOptions) (int64, error)
}

// parseListRequest reads argo list's filters: listOptions (label and field
// selectors, limit, continue), nameFilter (applied to the metadata.name of
// the field selector), createdAfter and finishedBefore (RFC 3339), the
// field selectors spec.startedAt>T and spec.startedAt<T, which braid
// answers from the creation time (a workflow starts when it is created),
// and ext.showRemainingItemCount=true, which asks for
// metadata.remainingItemCount.
func parseListRequest(req *workflow.WorkflowListRequest) (listQuery, error) {
	lo := listOptions(req.GetListOptions())
	q := listQuery{opts: store.ListOptions{
		LabelSelector: lo.LabelSelector, Limit: lo.Limit, Continue: lo.Continue,
	}}
	if lo.Limit < 0 {
		return q, status.Error(codes.InvalidArgument, "listOptions.limit must not be negative")
	}
	var keep []string
	for _, r := range strings.Split(lo.FieldSelector, ",") {
		r = strings.TrimSpace(r)
		switch {
		case r == "ext.showRemainingItemCount=true":
			q.showRemaining = true
		case r == "" || strings.HasPrefix(r, "ext."):
		case isStartedAtBound(r):
			if err := setStartedAtBound(r, &q.opts.CreatedAfter, &q.opts.CreatedBefore); err != nil {
				return q, err
			}
		case req.GetNameFilter() != "" && isNameEquals(r):
			_, name, _ := strings.Cut(r, "=")
			q.opts.Name, q.opts.NameFilter = strings.TrimPrefix(name, "="), req.GetNameFilter()
		default:
			keep = append(keep, r)
		}
	}
	q.opts.FieldSelector = strings.Join(keep, ",")
	var err error
	if q.opts.CreatedAfter, err = parseTimeParam("createdAfter", req.GetCreatedAfter(), q.opts.CreatedAfter); err != nil {
		return q, err
	}
	if q.opts.FinishedBefore, err = parseTimeParam("finishedBefore", req.GetFinishedBefore(), time.Time{}); err != nil {
		return q, err
	}
	return q, nil
}

func isNameEquals(r string) bool {
	return strings.HasPrefix(r, "metadata.name=") && !strings.HasPrefix(r, "metadata.name!=")
}

func parseTimeParam(name, value string, def time.Time) (time.Time, error) {
	if value == "" {
		return def, nil
	}
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return def, status.Errorf(codes.InvalidArgument, "%s must be an RFC 3339 time: %v", name, err)
	}
	return t, nil
}

// fromArchive finds the newest archived workflow of that namespace and
// name (and uid, when given): GetWorkflow answers from the archive when the
// live workflow is gone, as argo-server does.
func (s *workflowServer) fromArchive(ctx context.Context, namespace, name, uid string) (*v1alpha1.Workflow, bool) {
	a := s.caps.Archive
	if a == nil || name == latest {
		return nil, false
	}
	if uid != "" {
		wf, err := a.GetArchived(ctx, uid)
		if err != nil || wf.Namespace != namespace || wf.Name != name {
			return nil, false
		}
		return wf, true
	}
	list, _, err := a.ListArchived(ctx, store.ArchiveListOptions{Namespace: namespace, Name: name, NameFilter: store.NameExact, Limit: 1})
	if err != nil || len(list) == 0 {
		return nil, false
	}
	wf, err := a.GetArchived(ctx, string(list[0].UID))
	if err != nil {
		return nil, false
	}
	return wf, true
}

// isNotFound reports whether err is a NotFound status.
func isNotFound(err error) bool {
	var st interface{ GRPCStatus() *status.Status }
	return errors.As(err, &st) && st.GRPCStatus().Code() == codes.NotFound
}

// isStartedAtBound reports whether a field selector requirement is one of
// Argo's date bounds, spec.startedAt>T or spec.startedAt<T.
func isStartedAtBound(r string) bool {
	return strings.HasPrefix(r, "spec.startedAt>") || strings.HasPrefix(r, "spec.startedAt<")
}

// setStartedAtBound reads a date bound (RFC 3339) into after or before.
// braid bounds the creation time, which is when a workflow starts.
func setStartedAtBound(r string, after, before *time.Time) error {
	t, err := time.Parse(time.RFC3339, r[len("spec.startedAt>"):])
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "unsupported requirement %s: %v", r, err)
	}
	if r[len("spec.startedAt")] == '>' {
		*after = t
	} else {
		*before = t
	}
	return nil
}

// listOptions is lo, or the zero options when the request has none.
func listOptions(lo *metav1.ListOptions) metav1.ListOptions {
	if lo == nil {
		return metav1.ListOptions{}
	}
	return *lo
}

// ptrValue is *p, or the zero value for nil.
func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
