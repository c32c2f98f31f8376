package store

import (
	"context"
	"errors"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// WorkflowGone reports whether neither the live store nor the archive
// holds a workflow of that namespace and name any more, so that what is
// kept of it beside them (its step logs) can go too. archive may be nil.
func WorkflowGone(ctx context.Context, live interface {
	Get(ctx context.Context, kind Kind, namespace, name string) (Object, error)
}, archive interface {
	ListArchived(ctx context.Context, opts ArchiveListOptions) ([]v1alpha1.Workflow, bool, error)
}, namespace, name string) (bool, error) {
	_, err := live.Get(ctx, KindWorkflow, namespace, name)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return false, err
	}
	if archive == nil {
		return true, nil
	}
	left, _, err := archive.ListArchived(ctx, ArchiveListOptions{Namespace: namespace, Name: name, NameFilter: NameExact, Limit: 1})
	return err == nil && len(left) == 0, err
}
