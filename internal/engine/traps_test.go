package engine

import (
	"testing"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// TestTraps walks the 15 traps of ARGO-SEMANTICS.md §13. Most are also the
// subject of a test of their own, which this one runs under the trap's name
// so that the list stays complete.
func TestTraps(t *testing.T) {
	t.Run("1 a failing child fails a Steps node but can error a DAG", func(t *testing.T) {
		TestSkippedOutputRefError(t)
		TestDAGPhase(t)
	})
	t.Run("2 only target branches decide the DAG phase", func(t *testing.T) {
		TestDAGEnhancedDependsConformance(t)
		TestDAGTreeRule19(t)
	})
	t.Run("3 dag.failFast cancels nothing", TestDAGFailFastDoesNotCancel)
	t.Run("4 map items are named by sorted key:value pairs", func(t *testing.T) {
		TestLoopsMapsConformance(t)
		TestLoopItemForms(t)
	})
	t.Run("5 steps loops have no parent node", TestLoopsMapsConformance)
	t.Run("6 results are captured only when the parent mentions them", func(t *testing.T) {
		TestIncludeResult(t)
		TestAggregationResultNotJSON(t)
	})
	t.Run("7 aggregates count Succeeded iterations by index", func(t *testing.T) {
		TestAggregation(t)
		TestAggregationMissingWaits(t)
		TestParameterAggregationConformance(t)
	})
	t.Run("8 when is govaluate over substituted text", TestWhen)
	t.Run("9 workflow.failures is a quoted JSON string", TestExitHandlersConformance)
	t.Run("9 no failures is the text \"null\"", trapNoFailures)
	t.Run("10 spec.retryStrategy wraps every template", TestRetryWorkflowLevel)
	t.Run("11 retry limits and policies", func(t *testing.T) {
		TestRetryPolicies(t)
		TestRetryVariables(t)
	})
	t.Run("11 lastRetry.exitCode is -1 in the expression", trapExitCodeInExpression)
	t.Run("12 the shutdown message depends on where the pod was", func(t *testing.T) {
		TestShutdown(t)
		TestShutdownBeforeCreation(t)
	})
	t.Run("13 skipped outputs are absent, not empty", TestSkippedOutputs)
	t.Run("14 exit handlers and the workflow phase", func(t *testing.T) {
		TestWorkflowExitHandlerPhase(t)
		TestStepExitHandlerFailureIgnored(t)
		TestExitHandlerStepLevelConformance(t)
	})
	t.Run("15 unresolved tags depend on where they are", func(t *testing.T) {
		TestGlobalVariables(t)
		TestLoopEdges(t)
		TestExpressionTagTemplateConformance(t)
	})
}

func trapNoFailures(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: nf}
spec:
  entrypoint: main
  onExit: exit
  templates:
  - name: main
    container: {image: busybox, command: [echo, ok]}
  - name: exit
    container: {image: busybox, command: [echo, "{{workflow.failures}}|{{workflow.status}}"]}
`).run()
	eq(t, "failures", argsOf(d.launchOf("nf.onExit")), `echo "null"|Succeeded`)
}

func trapExitCodeInExpression(t *testing.T) {
	d := load(t, retryYAML("      limit: 3\n      expression: lastRetry.exitCode == '-1'", "{{lastRetry.exitCode}}"))
	n := 0
	d.respond = func(*driver, Launch) *stepEnd {
		n++
		if n == 3 {
			return &stepEnd{phase: v1alpha1.NodeError, message: "x", exitCode: 7}
		}
		return &stepEnd{phase: v1alpha1.NodeError, message: "x", noExit: true}
	}
	d.run()
	d.expect(v1alpha1.WorkflowFailed, rpFailed, map[string]string{"rp[0].r": "Retry Error retryStrategy.expression evaluated to false"})
	eq(t, "attempts", len(d.launches), 3)
	// in the template the missing exit code is "0" on the first attempt only
	eq(t, "first", argsOf(d.launchOf("rp[0].r(0)")), "sh -c 0")
}
