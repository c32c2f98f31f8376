package cron

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/types"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// cronOwner is the UID of the CronWorkflow that controls wf, or "" when
// no CronWorkflow does.
func cronOwner(wf *v1alpha1.Workflow) types.UID {
	for _, o := range wf.OwnerReferences {
		if o.Kind == "CronWorkflow" && o.Controller != nil && *o.Controller {
			return o.UID
		}
	}
	return ""
}

// deleteOwned deletes the workflows whose controlling owner is one of the
// CronWorkflows in gone (by UID), running ones included, as Kubernetes'
// garbage collector does when a CronWorkflow is deleted. namespace ""
// looks in every namespace.
func (s *Scheduler) deleteOwned(ctx context.Context, namespace string, gone func(types.UID) bool) {
	objs, _, err := s.st.List(ctx, store.KindWorkflow, namespace, store.ListOptions{LabelSelector: spec.LabelCronWorkflow})
	if err != nil {
		s.log.Warn("cannot list the workflows of cron workflows", "err", err)
		return
	}
	for _, o := range objs {
		wf, ok := o.(*v1alpha1.Workflow)
		if !ok {
			continue
		}
		if uid := cronOwner(wf); uid == "" || !gone(uid) {
			continue
		}
		err := s.st.Delete(ctx, store.KindWorkflow, wf.Namespace, wf.Name)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			s.log.Warn("cannot delete a workflow of a deleted cron workflow", "workflow", wf.Namespace+"/"+wf.Name, "err", err)
			continue
		}
		s.log.Info("deleted a workflow of a deleted cron workflow", "workflow", wf.Namespace+"/"+wf.Name,
			"cron", wf.Labels[spec.LabelCronWorkflow])
	}
}
