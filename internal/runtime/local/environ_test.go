package local

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// TestStepEnvNotInherited runs `env` as a step, with markers in this
// process's environment (one a BRAID_SECRET_*, one not): the step sees its
// spec's env, the run's ARGO_* variables, PATH and HOME, and nothing of
// braid's environment.
func TestStepEnvNotInherited(t *testing.T) {
	checkStepEnv(t, func() *harness { return newRuntime(t) })
}

// TestViewStepEnvNotInherited is TestStepEnvNotInherited with a root view:
// as root, and as nobody (TestUsernsViews), where braid-nsinit execs the
// step.
func TestViewStepEnvNotInherited(t *testing.T) {
	checkStepEnv(t, func() *harness { return newViewRuntime(t) })
}

// checkStepEnv sets the markers, then makes the Runtime (which reads
// braid's environment in New) and runs the step.
func checkStepEnv(t *testing.T, newRT func() *harness) {
	t.Setenv("BRAID_SECRET_MARKER_X_KEY", "secret-marker-3f9a")
	t.Setenv("STEPENV_OTHER_MARKER", "other-marker-7c21")
	rt := newRT()
	run := newRun(tmpl(t, `{name: a, container: {image: busybox, command: [env],
		env: [{name: SPEC_VAR, value: from-spec}, {name: SPEC_REF, value: "x-$(SPEC_VAR)"}]}}`))
	run.Env = map[string]string{"ARGO_NODE_ID": run.NodeID, "ARGO_POD_NAME": run.PodName}
	if ev := final(runToEnd(t, rt, run)); ev.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("the step ended %s: %s", ev.Phase, ev.Message)
	}
	log := readLog(t, rt, run.ID)
	for _, marker := range []string{"secret-marker-3f9a", "other-marker-7c21", "MARKER"} {
		if strings.Contains(log, marker) {
			t.Errorf("the step saw braid's environment (%s)", marker)
		}
	}
	inUserns := rt.sandbox != nil && rt.sandbox.userns != nil
	want := map[string]string{
		"SPEC_VAR": "from-spec", "SPEC_REF": "x-from-spec",
		"ARGO_NODE_ID": run.NodeID, "ARGO_POD_NAME": run.PodName,
		"PATH": os.Getenv("PATH"), "HOME": stepHome(os.Geteuid(), inUserns),
	}
	got := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(log), "\n") {
		k, v, _ := strings.Cut(line, "=")
		if _, ok := want[k]; !ok {
			v = "(not shown)" // a failure must not print this machine's environment
		}
		got[k] = v
	}
	// env is exec'd directly, with no shell to add PWD or SHLVL.
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the step's environment (-want +got):\n%s", diff)
	}
}

// TestBaseEnviron checks the environment a step starts from.
func TestBaseEnviron(t *testing.T) {
	cases := []struct {
		path     string
		euid     int
		inUserns bool
		want     []string
	}{
		{"/a:/b", 0, false, []string{"PATH=/a:/b", "HOME=/root"}},
		{"", 0, false, []string{"PATH=" + defaultPath, "HOME=/root"}},
		{"/a", 65534, true, []string{"PATH=/a", "HOME=/root"}},
		{"/a", 2147483000, false, []string{"PATH=/a", "HOME=/"}}, // no such user
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, baseEnviron(c.path, c.euid, c.inUserns)); diff != "" {
			t.Errorf("baseEnviron(%q, %d, %v) (-want +got):\n%s", c.path, c.euid, c.inUserns, diff)
		}
	}
}
