package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConformanceServer runs, through a real `braid server`, every example
// of Argo's corpus about reuse and triggers (WorkflowTemplate,
// ClusterWorkflowTemplate, CronWorkflow, WorkflowEventBinding,
// synchronization, memoize) that a host can run with nothing but the
// config file's ConfigMaps and limits. The template, cron and binding files
// are applied first (apply-only, submit-event); then each Workflow is
// submitted and must reach its expected phase, each CronWorkflow and
// submittable template is submitted with --from and must succeed, and each
// binding must submit a workflow for an event its selector accepts (and
// none for one it rejects). A few examples also have their feature checked:
// a mutex or semaphore must make its steps take turns, a memoized step
// must record its cache entry and hit it.
func TestConformanceServer(t *testing.T) {
	dir := conformanceDir(t)
	cases, err := serverCases(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{"none", "apply-only", "submit-event"} {
		if !slices.ContainsFunc(cases, func(c serverCase) bool { return c.action == action }) {
			t.Fatalf("no example with action %s was selected from %s: is the corpus complete?", action, dir)
		}
	}
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, "config.yaml"), serverConfig(cases))

	// Applied in direct mode, before the server starts on the same store;
	// each file is applied again through the server later, and must then
	// change nothing.
	h := &serverHarness{dir: dir, applied: map[string]cliResult{}}
	for _, c := range applyOrder(cases) {
		h.applied[c.path] = runCLI(context.Background(), time.Minute, nil, "apply", "--data-dir", home, "-f", filepath.Join(dir, c.path))
	}
	srv := startBraidServer(t, home)
	h.env = srv.env()
	h.srv = srv

	results := h.runAll(cases)
	passed, failed, known := 0, 0, 0
	for _, r := range results {
		reason, isKnown := knownServerFailures[r.path]
		switch {
		case r.err == nil && isKnown:
			passed++
			t.Logf("pass %-75s %s", r.path, r.detail)
			t.Errorf("%s passes now: remove it from knownServerFailures (%s)", r.path, reason)
		case r.err == nil:
			passed++
			t.Logf("pass %-75s %s", r.path, r.detail)
		case isKnown:
			failed++
			known++
			t.Logf("FAIL %-75s (known: %s) %v", r.path, reason, r.err)
		default:
			failed++
			t.Logf("FAIL %-75s %v", r.path, r.err)
			t.Errorf("%s: %v", r.path, r.err)
		}
	}
	t.Logf("%d passed, %d failed (%d of them known)", passed, failed, known)
	fmt.Printf("conformance-server: %d passed, %d failed\n", passed, failed)
}

// knownServerFailures are the examples expected to fail today, each with
// why. Keep it empty: an entry that passes fails the test.
var knownServerFailures = map[string]string{}

// serverCase is one example file of TestConformanceServer.
type serverCase struct {
	path   string
	kinds  string
	phase  string // expected_phase of a Workflow
	action string // none, apply-only or submit-event
	// ns is the namespace its workflows run in. Each example that uses
	// synchronization gets its own, so that the mutexes and semaphores of
	// different examples (several are named "test") do not make them wait
	// for each other.
	ns string
}

// reuseKinds and reuseFields pick the examples of the corpus that
// TestConformanceServer covers.
var (
	reuseKinds  = regexp.MustCompile(`\b(WorkflowTemplate|ClusterWorkflowTemplate|CronWorkflow|WorkflowEventBinding)\b`)
	reuseFields = regexp.MustCompile(`(?m)^[ \t-]*(templateRef|workflowTemplateRef|synchronization|memoize):`)
	syncField   = regexp.MustCompile(`(?m)^[ \t-]*synchronization:`)
)

// serverCases lists the host-runnable examples of expected.tsv that use
// templates, crons, event bindings, synchronization or memoization, and
// need nothing but what the config provides.
func serverCases(dir string) ([]serverCase, error) {
	f, err := os.Open(filepath.Join(dir, "expected.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []serverCase
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) < 9 {
			continue
		}
		sel, err := selectCase(dir, c)
		if err != nil {
			return nil, err
		}
		if sel != nil {
			out = append(out, *sel)
		}
	}
	return out, sc.Err()
}

// selectCase is the case of one row of expected.tsv, or nil.
func selectCase(dir string, col []string) (*serverCase, error) {
	c := serverCase{path: col[0], kinds: col[1], phase: col[2], action: col[8], ns: "default"}
	needs, hostRunnable := col[4], col[6]
	if hostRunnable != "yes" || (needs != "none" && needs != "secrets/configmaps") {
		return nil, nil
	}
	switch c.action {
	case "apply-only", "submit-event":
	case "none":
		if c.kinds != "Workflow" || len(phases(c.phase)) == 0 {
			return nil, nil
		}
	default:
		return nil, nil
	}
	data, err := os.ReadFile(filepath.Join(dir, c.path))
	if err != nil {
		return nil, err
	}
	if !reuseKinds.MatchString(c.kinds) && !reuseFields.Match(data) {
		return nil, nil
	}
	if syncField.Match(data) {
		c.ns = strings.TrimSuffix(filepath.Base(c.path), ".yaml")
	}
	return &c, nil
}

// phases are the final phases an expected_phase accepts; none for one
// that never ends.
func phases(expected string) []string {
	var out []string
	for _, p := range strings.Split(strings.ReplaceAll(expected, "(random)", ""), "|") {
		switch p {
		case "Succeeded", "Failed", "Error":
			out = append(out, p)
		}
	}
	return out
}

// serverConfig is the config file: the ConfigMap the examples' semaphores
// read (my-config) and the database semaphores' limits of each namespace.
func serverConfig(cases []serverCase) string {
	limits := map[string]int{}
	for _, c := range cases {
		limits[c.ns+"/workflow"] = 1
		limits[c.ns+"/template"] = 2
	}
	cfg := map[string]any{
		"configMaps":      map[string]map[string]string{"my-config": {"workflow": "1", "template": "2"}},
		"synchronization": map[string]any{"limits": limits},
	}
	data, _ := json.Marshal(cfg) // JSON is YAML; a map of strings cannot fail
	return string(data)
}

// applyOrder is the files to apply: templates, then crons (which may
// refer to templates), then bindings (which must).
func applyOrder(cases []serverCase) []serverCase {
	rank := func(c serverCase) int {
		switch {
		case strings.Contains(c.kinds, "WorkflowEventBinding"):
			return 2
		case strings.Contains(c.kinds, "CronWorkflow"):
			return 1
		}
		return 0
	}
	var out []serverCase
	for _, c := range cases {
		if c.action != "none" {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

// serverHarness runs the cases against one server.
type serverHarness struct {
	dir     string
	srv     *braidServer
	env     []string
	applied map[string]cliResult // by path: braid apply of the file
}

// serverResult is the outcome of one case.
type serverResult struct {
	path   string
	detail string
	err    error
}

// runAll runs every case at once (the synchronization examples take
// minutes, mostly asleep) and returns the outcomes in path order.
func (h *serverHarness) runAll(cases []serverCase) []serverResult {
	out := make([]serverResult, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*exampleTimeout())
			defer cancel()
			start := time.Now()
			detail, err := h.run(ctx, c)
			out[i] = serverResult{path: c.path, detail: fmt.Sprintf("%s %s", detail, time.Since(start).Round(time.Millisecond)), err: err}
		})
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

func (h *serverHarness) run(ctx context.Context, c serverCase) (string, error) {
	switch c.action {
	case "none":
		wf, err := h.submitWait(ctx, c.ns, phases(c.phase), filepath.Join(h.dir, c.path))
		if err != nil {
			return "", err
		}
		if check := serverChecks[c.path]; check != nil {
			if err := check(ctx, h, c, wf); err != nil {
				return "", fmt.Errorf("%s: %w", wf.Metadata.Name, err)
			}
		}
		return wf.Status.Phase, nil
	case "apply-only":
		return h.runApplied(ctx, c)
	case "submit-event":
		return h.runBindings(ctx, c)
	}
	return "", fmt.Errorf("action %s is not handled", c.action)
}

// appliedObjects are the kind.argoproj.io/name lines braid apply printed
// for the file, or an error when the apply failed.
func (h *serverHarness) appliedObjects(c serverCase) ([]string, error) {
	r, ok := h.applied[c.path]
	if !ok {
		return nil, fmt.Errorf("%s was not applied", c.path)
	}
	if r.code != 0 {
		return nil, fmt.Errorf("braid apply: exit %d: %s", r.code, lastLines(r.err, 3))
	}
	var objs []string
	for _, line := range strings.Split(strings.TrimSpace(r.out), "\n") {
		if obj, verb, ok := strings.Cut(line, " "); ok && verb == "created" {
			objs = append(objs, obj)
		}
	}
	if want := len(strings.Split(c.kinds, ",")); len(objs) != want {
		return nil, fmt.Errorf("braid apply created %d objects, want %d:\n%s", len(objs), want, r.out)
	}
	return objs, nil
}

// submittable are the applied templates that run with no arguments given.
var submittable = map[string]bool{
	"workflowtemplate.argoproj.io/workflow-template-submittable":                true,
	"clusterworkflowtemplate.argoproj.io/cluster-workflow-template-submittable": true,
	"workflowtemplate.argoproj.io/dag-inline":                                   true,
	"clusterworkflowtemplate.argoproj.io/dag-inline":                            true,
}

// runApplied checks an apply-only file: applied, unchanged when applied
// again through the server, and each CronWorkflow and submittable template
// in it runs to Succeeded when submitted with --from.
func (h *serverHarness) runApplied(ctx context.Context, c serverCase) (string, error) {
	objs, err := h.appliedObjects(c)
	if err != nil {
		return "", err
	}
	if err := h.reapply(ctx, c, len(objs)); err != nil {
		return "", err
	}
	var ran []string
	for _, obj := range objs {
		kind, name, _ := strings.Cut(obj, "/")
		from := ""
		switch {
		case kind == "cronworkflow.argoproj.io":
			from = "cronwf/" + name
		case submittable[obj]:
			from = strings.TrimSuffix(kind, ".argoproj.io") + "/" + name
		default:
			continue
		}
		wf, err := h.submitWait(ctx, c.ns, []string{"Succeeded"}, "--from", from)
		if err != nil {
			return "", fmt.Errorf("submit --from %s: %w", from, err)
		}
		ran = append(ran, wf.Metadata.Name)
	}
	return fmt.Sprintf("applied %d, ran %v", len(objs), ran), nil
}

// reapply applies the file again, through the server: each of its n
// objects must be unchanged.
func (h *serverHarness) reapply(ctx context.Context, c serverCase, n int) error {
	r := runCLI(ctx, time.Minute, h.env, "apply", "-f", filepath.Join(h.dir, c.path))
	if r.code != 0 || strings.Count(r.out, " unchanged\n") != n {
		return fmt.Errorf("applied again through the server: exit %d, want every object unchanged:\n%s%s", r.code, r.out, lastLines(r.err, 3))
	}
	return nil
}

// wfView is what the test reads of a Workflow.
type wfView struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Arguments struct {
			Parameters []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"parameters"`
		} `json:"arguments"`
	} `json:"spec"`
	Status struct {
		Phase      string              `json:"phase"`
		Message    string              `json:"message"`
		StartedAt  time.Time           `json:"startedAt"`
		FinishedAt time.Time           `json:"finishedAt"`
		Nodes      map[string]nodeView `json:"nodes"`
	} `json:"status"`
}

type nodeView struct {
	DisplayName       string `json:"displayName"`
	TemplateName      string `json:"templateName"`
	Type              string `json:"type"`
	Phase             string `json:"phase"`
	MemoizationStatus *struct {
		Hit       bool   `json:"hit"`
		Key       string `json:"key"`
		CacheName string `json:"cacheName"`
	} `json:"memoizationStatus"`
	Outputs *struct {
		Parameters []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"parameters"`
	} `json:"outputs"`
}

// param is the value of the workflow's argument name.
func (w *wfView) param(name string) (string, bool) {
	for _, p := range w.Spec.Arguments.Parameters {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// submitWait submits (files, or --from), waits for the workflow to end and
// checks that its phase is one of want.
func (h *serverHarness) submitWait(ctx context.Context, ns string, want []string, args ...string) (*wfView, error) {
	args = append([]string{"submit", "-n", ns, "--wait", "-o", "name"}, args...)
	r := runCLI(ctx, 0, h.env, args...)
	name, _, _ := strings.Cut(strings.TrimSpace(r.out), "\n")
	if name == "" {
		return nil, fmt.Errorf("braid submit: exit %d, no workflow: %s", r.code, lastLines(r.err, 3))
	}
	return h.finished(ctx, ns, name, want)
}

// finished waits for the workflow to end and checks its phase.
func (h *serverHarness) finished(ctx context.Context, ns, name string, want []string) (*wfView, error) {
	if r := runCLI(ctx, 0, h.env, "wait", "-n", ns, name); r.code != 0 && ctx.Err() != nil {
		return nil, fmt.Errorf("%s did not end in time: %w", name, ctx.Err())
	}
	r := runCLI(ctx, time.Minute, h.env, "get", "-n", ns, name, "-o", "json")
	var wf wfView
	if err := json.Unmarshal([]byte(r.out), &wf); err != nil {
		return nil, fmt.Errorf("braid get %s: exit %d, %v: %s", name, r.code, err, lastLines(r.err, 3))
	}
	if !slices.Contains(want, wf.Status.Phase) {
		return &wf, fmt.Errorf("%s ended %q, want %s: %s", name, wf.Status.Phase, strings.Join(want, " or "), wf.Status.Message)
	}
	return &wf, nil
}

// listLabelled lists the names of the namespace's workflows with the label.
func (h *serverHarness) listLabelled(ctx context.Context, ns, label string) ([]string, error) {
	r := runCLI(ctx, time.Minute, h.env, "list", "-n", ns, "-l", label, "-o", "name")
	if r.code != 0 {
		return nil, fmt.Errorf("braid list -l %s: exit %d: %s", label, r.code, lastLines(r.err, 3))
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(r.out), "\n") {
		if line != "" && line != "No workflows found" {
			names = append(names, line)
		}
	}
	return names, nil
}

// runCLI runs the CLI with env within d (0: until ctx ends). Unlike
// braidCLI it may be called from any goroutine.
func runCLI(ctx context.Context, d time.Duration, env []string, args ...string) cliResult {
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, braidBin, args...)
	cmd.Env = cleanEnv(env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
		errOut.WriteString(err.Error())
	}
	return cliResult{out.String(), errOut.String(), code}
}

// postEvent posts an event to the server's webhook endpoint.
func (h *serverHarness) postEvent(ctx context.Context, ns, discriminator string, header http.Header, payload string) error {
	url := h.srv.url(fmt.Sprintf("/api/v1/events/%s/%s", ns, discriminator))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(payload))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := h.srv.do(req)
	if err != nil {
		return fmt.Errorf("post event: %w", err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("post event to %s: %s: %s", url, resp.Status, body.String())
	}
	return nil
}

// serverCheck checks what an example's feature promises, beyond its phase.
type serverCheck func(ctx context.Context, h *serverHarness, c serverCase, wf *wfView) error

// serverChecks are the checks of the examples whose feature shows.
var serverChecks = map[string]serverCheck{
	// Five 50 s steps under one mutex take turns.
	"examples/synchronization-mutex-tmpl-level.yaml":    lastedAtLeast(245 * time.Second),
	"examples/synchronization-db-mutex-tmpl-level.yaml": lastedAtLeast(245 * time.Second),
	// Five 10 s steps under a semaphore of 2 run in three waves.
	"examples/synchronization-tmpl-level.yaml":    lastedAtLeast(28 * time.Second),
	"examples/synchronization-db-tmpl-level.yaml": lastedAtLeast(28 * time.Second),
	"examples/memoize-simple.yaml":                memoizedThenHit,
	// fibonacci(5) needs fibonacci(3) twice: the second is a cache hit.
	"examples/fibonacci-seq-conditional-param.yaml": someMemoHit,
}

func lastedAtLeast(d time.Duration) serverCheck {
	return func(_ context.Context, _ *serverHarness, _ serverCase, wf *wfView) error {
		took := wf.Status.FinishedAt.Sub(wf.Status.StartedAt)
		if took < d {
			return fmt.Errorf("ran %s (from %s to %s), want at least %s: its steps did not wait for the lock",
				took, wf.Status.StartedAt.Format(time.RFC3339), wf.Status.FinishedAt.Format(time.RFC3339), d)
		}
		return nil
	}
}

// memoizedThenHit checks memoize-simple: the first run records its cache
// entry (a miss), and the same workflow submitted again within maxAge
// (10 s) hits it and gets the stored output.
func memoizedThenHit(ctx context.Context, h *serverHarness, c serverCase, wf *wfView) error {
	n, err := memoNode(wf, "world-to-file")
	if err != nil {
		return err
	}
	if m := n.MemoizationStatus; m.Hit || m.Key != "cache-key" || m.CacheName != "cache-config" {
		return fmt.Errorf("first run: memoizationStatus %+v, want a miss of cache-key in cache-config", *m)
	}
	again, err := h.submitWait(ctx, c.ns, []string{"Succeeded"}, filepath.Join(h.dir, c.path))
	if err != nil {
		return fmt.Errorf("second run: %w", err)
	}
	if n, err = memoNode(again, "world-to-file"); err != nil {
		return fmt.Errorf("second run %s: %w", again.Metadata.Name, err)
	}
	if gap := again.Status.StartedAt.Sub(wf.Status.FinishedAt); !n.MemoizationStatus.Hit {
		if gap >= 9*time.Second {
			// The example's maxAge is 10s: on a loaded machine the entry may
			// have expired before the second run looked; a miss is then right.
			return nil
		}
		return fmt.Errorf("second run %s, %s after the first ended: memoizationStatus %+v, want a hit",
			again.Metadata.Name, gap, *n.MemoizationStatus)
	}
	if n.Outputs == nil || len(n.Outputs.Parameters) != 1 || strings.TrimSpace(n.Outputs.Parameters[0].Value) != "world" {
		return fmt.Errorf("second run %s: the hit's outputs are %+v, want hello=world", again.Metadata.Name, n.Outputs)
	}
	return nil
}

// memoNode is the workflow's one node of the template, with its
// memoization status.
func memoNode(wf *wfView, template string) (nodeView, error) {
	var found []nodeView
	for _, n := range wf.Status.Nodes {
		if n.TemplateName == template {
			found = append(found, n)
		}
	}
	if len(found) != 1 {
		return nodeView{}, fmt.Errorf("%d nodes of template %s, want 1", len(found), template)
	}
	if found[0].MemoizationStatus == nil {
		return nodeView{}, fmt.Errorf("node %s has no memoizationStatus", found[0].DisplayName)
	}
	return found[0], nil
}

func someMemoHit(_ context.Context, _ *serverHarness, _ serverCase, wf *wfView) error {
	for _, n := range wf.Status.Nodes {
		if n.MemoizationStatus != nil && n.MemoizationStatus.Hit {
			return nil
		}
	}
	return fmt.Errorf("no node of %d is a memoization hit", len(wf.Status.Nodes))
}

// eventCase is how TestConformanceServer triggers one binding: an event
// its selector rejects, then one it accepts, and the argument the accepted
// one must set. Every payload holds an empty appellation so that the
// event-consumer binding (payload.appellation != "") ignores the others'.
type eventCase struct {
	discriminator string
	header        http.Header
	miss, hit     string
	param, want   string
}

var eventCases = map[string]eventCase{
	"event-consumer": {
		discriminator: "conformance",
		miss:          `{"appellation": ""}`,
		hit:           `{"appellation": "braid"}`,
		param:         "appellation", want: "braid",
	},
	"github-path-filter": {
		discriminator: "github-path-filter",
		header:        http.Header{"X-Github-Event": {"push"}},
		miss:          `{"appellation": "", "commits": [{"added": ["docs/a.md"], "removed": [], "modified": ["subpath/C/x"]}]}`,
		hit:           `{"appellation": "", "commits": [{"added": [], "removed": [], "modified": ["README.md"]}, {"added": ["subpath/B/new.go"], "removed": [], "modified": []}]}`,
		param:         "files", want: `"subpath/B/new.go"`,
	},
}

// runBindings checks a submit-event file: each binding submits nothing
// for an event it rejects and one workflow, which succeeds with the
// event's argument, for one it accepts.
func (h *serverHarness) runBindings(ctx context.Context, c serverCase) (string, error) {
	objs, err := h.appliedObjects(c)
	if err != nil {
		return "", err
	}
	if err := h.reapply(ctx, c, len(objs)); err != nil {
		return "", err
	}
	var ran []string
	for _, obj := range objs {
		_, name, _ := strings.Cut(obj, "/")
		ec, ok := eventCases[name]
		if !ok {
			return "", fmt.Errorf("binding %s: the test has no event for it", name)
		}
		wf, err := h.trigger(ctx, c.ns, name, ec)
		if err != nil {
			return "", fmt.Errorf("binding %s: %w", name, err)
		}
		ran = append(ran, wf)
	}
	return fmt.Sprintf("events ran %v", ran), nil
}

func (h *serverHarness) trigger(ctx context.Context, ns, binding string, ec eventCase) (string, error) {
	label := "workflows.argoproj.io/workflow-event-binding=" + binding
	if err := h.postEvent(ctx, ns, ec.discriminator, ec.header, ec.miss); err != nil {
		return "", err
	}
	// Events are dispatched before the call returns.
	if names, err := h.listLabelled(ctx, ns, label); err != nil || len(names) > 0 {
		return "", fmt.Errorf("an event the selector rejects submitted %v (%v)", names, err)
	}
	if err := h.postEvent(ctx, ns, ec.discriminator, ec.header, ec.hit); err != nil {
		return "", err
	}
	names, err := h.listLabelled(ctx, ns, label)
	if err != nil || len(names) != 1 {
		return "", fmt.Errorf("an event the selector accepts submitted %v, want one workflow (%v)", names, err)
	}
	wf, err := h.finished(ctx, ns, names[0], []string{"Succeeded"})
	if err != nil {
		return "", err
	}
	if v, _ := wf.param(ec.param); !strings.Contains(v, ec.want) {
		return "", fmt.Errorf("%s: argument %s is %q, want it to hold %s", wf.Metadata.Name, ec.param, v, ec.want)
	}
	return wf.Metadata.Name, nil
}
