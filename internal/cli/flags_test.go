package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"10m", 10 * time.Minute, true},
		{"1d", 24 * time.Hour, true},
		{"2d12h", 60 * time.Hour, true},
		{"3h", 3 * time.Hour, true},
		{"xd", 0, false},
		{"1dx", 0, false},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		got, err := parseDuration(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseDuration(%q) = %v, %v", tt.in, got, err)
		}
	}
}

func TestLabelSelector(t *testing.T) {
	tests := []struct {
		f    filterFlags
		want string
		ok   bool
	}{
		{filterFlags{}, "", true},
		{filterFlags{status: []string{"Failed", "Running"}}, "workflows.argoproj.io/phase in (Failed,Running)", true},
		{filterFlags{completed: true, selector: "app=x"}, "app=x,workflows.argoproj.io/completed=true", true},
		{filterFlags{running: true}, "workflows.argoproj.io/completed!=true", true},
		{filterFlags{resubmitted: true}, "workflows.argoproj.io/resubmitted-from-workflow", true},
		{filterFlags{running: true, completed: true}, "", false},
		{filterFlags{selector: "a in (b"}, "", false},
	}
	for _, tt := range tests {
		got, err := tt.f.labelSelector()
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("%+v: got %q, %v; want %q", tt.f, got, err, tt.want)
		}
	}
}

func TestKeepListed(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	wf := func(name string, created, finished time.Duration) *v1alpha1.Workflow {
		w := &v1alpha1.Workflow{}
		w.Name = name
		w.CreationTimestamp = metav1.NewTime(now.Add(-created))
		if finished > 0 {
			w.Status.FinishedAt = metav1.NewTime(now.Add(-finished))
		}
		return w
	}
	tests := []struct {
		wf           *v1alpha1.Workflow
		prefix       string
		since, older time.Duration
		want         bool
	}{
		{wf("a-1", time.Hour, 0), "a-", 0, 0, true},
		{wf("b-1", time.Hour, 0), "a-", 0, 0, false},
		{wf("a-1", time.Hour, 0), "", 2 * time.Hour, 0, true},
		{wf("a-1", 3*time.Hour, 0), "", 2 * time.Hour, 0, false},
		{wf("a-1", 3*time.Hour, 2*time.Hour), "", 0, time.Hour, true},
		{wf("a-1", 3*time.Hour, 30*time.Minute), "", 0, time.Hour, false},
		{wf("a-1", 3*time.Hour, 0), "", 0, time.Hour, false}, // unfinished is never older
	}
	for i, tt := range tests {
		var since, older time.Time
		if tt.since > 0 {
			since = now.Add(-tt.since)
		}
		if tt.older > 0 {
			older = now.Add(-tt.older)
		}
		if got := keepListed(tt.wf, tt.prefix, since, older); got != tt.want {
			t.Errorf("case %d: got %v", i, got)
		}
	}
}

func TestNodeSetRequest(t *testing.T) {
	req, err := nodeSetFlags{nodeFieldSelector: "displayName=approve", phase: "Succeeded", outputParameters: []string{"a=1", "b=x=y"}}.request("wf")
	if err != nil {
		t.Fatal(err)
	}
	if req.GetOutputParameters() != `{"a":"1","b":"x=y"}` || req.GetNodeFieldSelector() != "displayName=approve" || req.GetName() != "wf" {
		t.Fatalf("request: %v", req)
	}
	for _, bad := range []nodeSetFlags{
		{},
		{nodeFieldSelector: "displayName=a", phase: "Running"},
		{nodeFieldSelector: "displayName=a", outputParameters: []string{"novalue"}},
		{nodeFieldSelector: "no operator"},
	} {
		if _, err := bad.request("wf"); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func TestLogsRequest(t *testing.T) {
	f := logsFlags{container: "main", tail: -1}
	req, err := f.request([]string{"wf"})
	if err != nil || req.GetLogOptions().TailLines != nil || req.GetLogOptions().SinceSeconds != nil || req.GetPodName() != "" {
		t.Fatalf("defaults: %v %v", req, err)
	}
	f = logsFlags{container: "c", tail: 3, since: 90 * time.Second, sinceTime: "2026-11-30T09:00:00Z", grep: "x"}
	req, err = f.request([]string{"wf", "pod"})
	if err != nil {
		t.Fatal(err)
	}
	o := req.GetLogOptions()
	if o.TailLines == nil || *o.TailLines != 3 || o.SinceSeconds == nil || *o.SinceSeconds != 90 || o.SinceTime == nil ||
		o.SinceTime.UTC().Hour() != 9 || req.GetPodName() != "pod" || o.Container != "c" {
		t.Fatalf("request: %v", req)
	}
	if _, err := (logsFlags{sinceTime: "yesterday"}).request([]string{"wf"}); err == nil {
		t.Fatal("bad --since-time accepted")
	}
}

// The connection settings come from flags first, then ARGO_*/BRAID_*.
func TestConnectionSettings(t *testing.T) {
	env := map[string]string{"ARGO_SERVER": "", "BRAID_SERVER": "b:1", "ARGO_HTTP1": "true", "ARGO_NAMESPACE": "team", "ARGO_TOKEN": "Bearer x", "ARGO_SECURE": "yes"}
	g := &globalFlags{getenv: func(k string) string { return env[k] }}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	g.register(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	o, err := g.clientOptions(g.remoteAddress())
	if err != nil {
		t.Fatal(err)
	}
	if o.Address != "b:1" || !o.HTTP1 || o.Token != "Bearer x" || !o.Secure || g.ns() != "team" {
		t.Fatalf("from env: %+v ns %s", o, g.ns())
	}
	env["ARGO_SERVER"] = "a:1"
	if err := fs.Parse([]string{"-n", "mine", "--argo-http1=false", "-H", "X-A: 1", "-s", "c:1"}); err != nil {
		t.Fatal(err)
	}
	o, err = g.clientOptions(g.remoteAddress())
	if err != nil {
		t.Fatal(err)
	}
	if o.Address != "c:1" || o.HTTP1 || g.ns() != "mine" || o.Headers.Get("X-A") != "1" {
		t.Fatalf("flags: %+v ns %s", o, g.ns())
	}
	g.headers = []string{"nocolon"}
	if _, err := g.clientOptions("x"); err == nil {
		t.Fatal("bad header accepted")
	}
}

// In direct mode the commands work on the data directory's store through
// an in-process server, over gRPC and over HTTP/1.
func TestDirectMode(t *testing.T) {
	home := t.TempDir()
	t.Setenv("BRAID_HOME", home)
	for _, k := range []string{"ARGO_SERVER", "BRAID_SERVER", "ARGO_HTTP1", "ARGO_NAMESPACE"} {
		t.Setenv(k, "")
	}
	file := writeFile(t, "wf.yaml", strings.Replace(good, "generateName: good-", "name: stored", 1))
	out, errOut, code := run(t, "submit", file, "-o", "name")
	if code != 0 || out != "stored\n" || !strings.Contains(errOut, "braid server") {
		t.Fatalf("submit: %d %q %q", code, out, errOut)
	}
	for _, args := range [][]string{{"list", "-o", "name"}, {"--argo-http1", "list", "-o", "name"}, {"get", "stored", "-o", "name"}} {
		if out, errOut, code := run(t, args...); code != 0 || out != "stored\n" {
			t.Fatalf("%v: %d %q %q", args, code, out, errOut)
		}
	}
	if _, errOut, code := run(t, "wait", "stored"); code != 1 || !strings.Contains(errOut, "no server runs workflows") {
		t.Fatalf("wait in direct mode: %d %q", code, errOut)
	}
	if _, errOut, code := run(t, "submit", file); code != 1 || !strings.Contains(errOut, "AlreadyExists") {
		t.Fatalf("second submit: %d %q", code, errOut)
	}
	if out, _, code := run(t, "delete", "stored", "nope"); code != 0 || out != "Workflow 'stored' deleted\nWorkflow 'nope' not found\n" {
		t.Fatalf("delete: %d %q", code, out)
	}
	if _, _, code := run(t, "delete"); code != 1 {
		t.Fatalf("delete with nothing selected: %d", code)
	}
}
