package kube

import (
	"context"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/executor"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// execData runs a data template in the controller, as Argo's agent does,
// with no pod: it lists the source's artifact paths (executor.RunData,
// through the runtime's artifact drivers, secrets read in the workflow's
// namespace) and applies the transformations; the JSON of the result is
// outputs.result. A source that cannot be listed or a bad expression ends
// the node Error with its message. It runs under the resource runs'
// machinery (resource.go): Running at once, Kill and deadlines cancel it.
func (rt *Runtime) execData(ctx context.Context, run runtime.Run) (v1alpha1.NodePhase, string, *v1alpha1.Outputs) {
	if rt.cfg.Artifacts == nil {
		return v1alpha1.NodeError, "data template: the Kubernetes runtime has no artifact drivers", nil
	}
	result, err := executor.RunData(artifact.WithNamespace(ctx, run.Namespace), run.Template, run.Artifacts, rt.cfg.Artifacts)
	if err != nil {
		if ctx.Err() != nil {
			return v1alpha1.NodeFailed, causeMessage(context.Cause(ctx)), nil
		}
		return v1alpha1.NodeError, err.Error(), nil
	}
	code := "0"
	return v1alpha1.NodeSucceeded, "", &v1alpha1.Outputs{Result: &result, ExitCode: &code}
}
