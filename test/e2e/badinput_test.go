package e2e

import (
	"strings"
	"testing"
)

func TestRunInvalidSpecExits2(t *testing.T) {
	_, stderr, code, _ := braidRun(t, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: bad-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: whalesay2}
`)
	if code != 2 || !strings.Contains(stderr, `spec.templates[0].steps[0][0].template: "whalesay2" not found`) {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}

func TestRunMissingCommandIsError(t *testing.T) {
	stdout, _, code, _ := braidRun(t, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: nocmd-}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [braid-no-such-command-xyz]}
`, "-o", "json")
	wf := parseFinal(t, stdout)
	if code != 1 || wf.Status.Phase != "Error" {
		t.Fatalf("exit %d phase %s: %s", code, wf.Status.Phase, wf.Status.Message)
	}
	for _, n := range wf.Status.Nodes {
		if n.Type == "Pod" && !strings.Contains(n.Message, "braid-no-such-command-xyz") {
			t.Fatalf("the step's message does not name the command: %q", n.Message)
		}
	}
}

func TestRunLoudStepKeepsMemoryBounded(t *testing.T) {
	stdout, stderr, code, rss := braidRun(t, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: loud-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: loud, template: loud}
    - - name: after
        template: echo
        arguments: {parameters: [{name: n, value: "{{=len(steps.loud.outputs.result)}}"}]}
  - name: loud
    script:
      image: python
      command: [python3]
      source: |
        import sys
        line = "x" * 1023 + "\n"
        for _ in range(200 * 1024):
            sys.stdout.write(line)
  - name: echo
    inputs: {parameters: [{name: n}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.n}}"]}
`, "-o", "json")
	wf := parseFinal(t, stdout)
	if code != 0 || wf.Status.Phase != "Succeeded" {
		t.Fatalf("exit %d phase %s: %s\n%s", code, wf.Status.Phase, wf.Status.Message, stderr)
	}
	if rss > 100*1024 {
		t.Fatalf("peak RSS %d KiB with a 200 MB step; want under 100 MiB", rss)
	}
	t.Logf("peak RSS %.1f MiB", float64(rss)/1024)
}

func TestRunInfiniteRecursionStops(t *testing.T) {
	stdout, stderr, code, _ := braidRun(t, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: forever-}
spec:
  entrypoint: loop
  templates:
  - name: loop
    steps:
    - - {name: again, template: loop}
`, "-o", "json")
	wf := parseFinal(t, stdout)
	if code != 1 || (wf.Status.Phase != "Error" && wf.Status.Phase != "Failed") {
		t.Fatalf("exit %d phase %s\n%s", code, wf.Status.Phase, stderr)
	}
	found := false
	for _, n := range wf.Status.Nodes {
		found = found || strings.Contains(n.Message, "recursion")
	}
	if !found && !strings.Contains(wf.Status.Message, "recursion") {
		t.Fatalf("no node names the recursion limit; message %q", wf.Status.Message)
	}
}
