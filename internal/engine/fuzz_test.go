package engine

import (
	"testing"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// FuzzReconcile feeds arbitrary manifests to Reconcile and drives a few
// passes: no input may panic or return an error.
func FuzzReconcile(f *testing.F) {
	for _, y := range []string{stepsYAML, stTreeYAML, dgTreeYAML, rtYAML, wrYAML, loopsYAML, loopsMapsYAML,
		loopsSequenceYAML, parameterAggregationYAML, exitHandlersYAML, exitHandlerStepLevelYAML, suspendTemplateYAML,
		dagTaskTimeoutYAML, parallelismLimitYAML, continueOnFailYAML, expressionTagYAML, coinflipYAML, shutdownYAML} {
		f.Add(y)
	}
	f.Fuzz(func(t *testing.T, y string) {
		docs, _ := spec.Load("fuzz.yaml", []byte(y), spec.Lenient)
		var wf *v1alpha1.Workflow
		for _, d := range docs {
			if w, ok := d.Object.(*v1alpha1.Workflow); ok {
				wf = w
				break
			}
		}
		if wf == nil {
			return
		}
		if wf.Name == "" {
			wf.Name = "fz"
		}
		d := &driver{t: t, now: t0, wf: wf, running: map[string]*fakePod{}, pending: map[string]StepResult{},
			maxPasses: 60, prepared: NewPrepared(), limits: Limits{MaxDepth: 30, MaxNodes: 500}}
		d.idle = func(*driver) bool { return false }
		d.runQuietly()
	})
}
