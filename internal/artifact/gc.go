package artifact

import (
	"context"
	"errors"
	"fmt"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Collected is what Collect did, as values for the caller to write: the
// nodes whose artifacts it marked `deleted: true` (copies; the workflow
// passed to Collect is not changed), and whether the strategy is to be
// recorded as processed in status.artifactGCStatus.
type Collected struct {
	Nodes     map[string]v1alpha1.NodeStatus
	Processed v1alpha1.ArtifactGCStrategy // "" when no artifact had the strategy
}

// Apply writes c into st: the changed nodes and the processed strategy.
func (c Collected) Apply(st *v1alpha1.WorkflowStatus) {
	if st.Nodes == nil && len(c.Nodes) > 0 {
		st.Nodes = v1alpha1.Nodes{}
	}
	for id, n := range c.Nodes {
		st.Nodes[id] = n
	}
	c.MarkProcessed(st)
}

// MarkProcessed records c's strategy as processed in st's
// artifactGCStatus (a new value; the old one is not changed).
func (c Collected) MarkProcessed(st *v1alpha1.WorkflowStatus) {
	if c.Processed == "" {
		return
	}
	gc := st.ArtifactGCStatus.DeepCopy()
	if gc == nil {
		gc = &v1alpha1.ArtGCStatus{}
	}
	if gc.StrategiesProcessed == nil {
		gc.StrategiesProcessed = map[v1alpha1.ArtifactGCStrategy]bool{}
	}
	gc.StrategiesProcessed[c.Processed] = true
	st.ArtifactGCStatus = gc
}

// Collect deletes the output artifacts of wf whose garbage-collection
// strategy is when (the artifact's own artifactGC, else the workflow's
// spec.artifactGC) and returns, as values, the nodes with each deleted
// one marked `deleted: true` and the strategy to record as processed.
// Locations a driver cannot delete (raw, git, http) are left alone. It
// tries every artifact and returns the errors joined.
func Collect(ctx context.Context, wf *v1alpha1.Workflow, d *Drivers, when v1alpha1.ArtifactGCStrategy) (Collected, error) {
	ctx = WithNamespace(ctx, wf.Namespace)
	var (
		out  Collected
		errs []error
	)
	for id, n := range wf.Status.Nodes {
		if n.Outputs == nil {
			continue
		}
		var outs *v1alpha1.Outputs // n's outputs, copied at the first deletion
		for i := range n.Outputs.Artifacts {
			a := &n.Outputs.Artifacts[i]
			if a.Deleted || !a.HasLocation() || strategyOf(wf, a) != when {
				continue
			}
			out.Processed = when
			deleted, err := deleteOne(ctx, d, a)
			if err != nil {
				errs = append(errs, fmt.Errorf("node %s: %w", n.Name, err))
			}
			if !deleted {
				continue
			}
			if outs == nil {
				outs = n.Outputs.DeepCopy()
			}
			outs.Artifacts[i].Deleted = true
		}
		if outs != nil {
			if out.Nodes == nil {
				out.Nodes = map[string]v1alpha1.NodeStatus{}
			}
			n.Outputs = outs
			out.Nodes[id] = n
		}
	}
	return out, errors.Join(errs...)
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
