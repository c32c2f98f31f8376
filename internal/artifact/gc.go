package artifact

import (
	"context"
	"errors"
	"fmt"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Collect deletes the output artifacts of wf whose garbage-collection
// strategy is when (the artifact's own artifactGC, else the workflow's
// spec.artifactGC), marks each deleted one `deleted: true`, records the
// strategy as processed in status.artifactGCStatus, and returns the IDs of
// the nodes it changed. Locations a driver cannot delete (raw, git, http)
// are left alone. It tries every artifact and returns the errors joined.
func Collect(ctx context.Context, wf *v1alpha1.Workflow, d *Drivers, when v1alpha1.ArtifactGCStrategy) ([]string, error) {
	ctx = WithNamespace(ctx, wf.Namespace)
	var (
		changed []string
		errs    []error
		found   bool
	)
	for id, n := range wf.Status.Nodes {
		if n.Outputs == nil {
			continue
		}
		touched := false
		for i := range n.Outputs.Artifacts {
			a := &n.Outputs.Artifacts[i]
			if a.Deleted || !a.HasLocation() || strategyOf(wf, a) != when {
				continue
			}
			found = true
			deleted, err := deleteOne(ctx, d, a)
			if err != nil {
				errs = append(errs, fmt.Errorf("node %s: %w", n.Name, err))
			}
			if deleted {
				a.Deleted, touched = true, true
			}
		}
		if touched {
			wf.Status.Nodes[id] = n
			changed = append(changed, id)
		}
	}
	if found {
		gc := wf.Status.ArtifactGCStatus
		if gc == nil {
			gc = &v1alpha1.ArtGCStatus{}
			wf.Status.ArtifactGCStatus = gc
		}
		if gc.StrategiesProcessed == nil {
			gc.StrategiesProcessed = map[v1alpha1.ArtifactGCStrategy]bool{}
		}
		gc.StrategiesProcessed[when] = true
	}
	return changed, errors.Join(errs...)
}

func strategyOf(wf *v1alpha1.Workflow, a *v1alpha1.Artifact) v1alpha1.ArtifactGCStrategy {
	if a.ArtifactGC != nil && a.ArtifactGC.Strategy != v1alpha1.ArtifactGCStrategyUndefined {
		return a.ArtifactGC.Strategy
	}
	if gc := wf.ExecSpec().ArtifactGC; gc != nil {
		return gc.Strategy
	}
	return v1alpha1.ArtifactGCNever
}

// deleteOne deletes one artifact; deleted is false for a location that
// cannot be deleted.
func deleteOne(ctx context.Context, d *Drivers, a *v1alpha1.Artifact) (deleted bool, err error) {
	drv, err := d.For(&a.ArtifactLocation)
	if err != nil {
		return false, fmt.Errorf("artifact %q: %w", a.Name, err)
	}
	err = drv.Delete(ctx, a)
	switch {
	case errors.Is(err, ErrUnsupported):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("delete artifact %q: %w", a.Name, err)
	}
	return true, nil
}
