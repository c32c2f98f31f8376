package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/controller"
	"github.com/braidwf/braid/internal/runtime/local"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// runningServer is a server with the controller behind it, as `braid
// server` wires them: a real SQLite store, the local runtime and a Manager
// that runs whatever is stored.
type runningServer struct {
	base  string // http://127.0.0.1:port
	store *sqlite.Store
	clock *aheadClock // the controller's
}

// aheadClock is the machine's clock moved ahead by what the test adds: the
// controller's clock, so that a test reaches a later second without
// waiting for it. Its timers are real ones for the time it shows.
type aheadClock struct{ ahead atomic.Int64 }

func (c *aheadClock) Now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

// Step moves the clock ahead by d.
func (c *aheadClock) Step(d time.Duration) { c.ahead.Add(int64(d)) }

func (c *aheadClock) wakeAt(t time.Time) <-chan time.Time { return time.After(t.Sub(c.Now())) }

// startRunningServer serves on 127.0.0.1:0 with a Manager running stored
// workflows; everything stops when the test ends.
func startRunningServer(t *testing.T) *runningServer {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := sqlite.Open(ctx, filepath.Join(dir, "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := local.New(local.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	clock := &aheadClock{}
	ctl, err := controller.New(controller.Options{Store: st, Runtime: rt, Archive: st, Clock: clock.Now, WakeAt: clock.wakeAt})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctl.NewManager(st, controller.StoreTemplates(st))
	if err != nil {
		t.Fatal(err)
	}
	mdone := make(chan error, 1)
	go func() { mdone <- mgr.Run(ctx) }()
	srv, err := New(Options{Store: st, Capabilities: sqliteCaps(st), Version: testVersion,
		StepLogs: local.NewLogFiles(dir)})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		for _, c := range []chan error{done, mdone} {
			select {
			case err := <-c:
				if err != nil {
					t.Errorf("stop: %v", err)
				}
			case <-time.After(15 * time.Second):
				t.Error("server or manager did not stop")
			}
		}
		if err := rt.Close(); err != nil {
			t.Errorf("close runtime: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return &runningServer{base: "http://" + l.Addr().String(), store: st, clock: clock}
}

// stepsWF is ARGO-API §6's example: main runs hello1 and then hello2, each
// with print-message, and a workflow parameter.
const stepsWF = `{"metadata":{%META%},
 "spec":{"entrypoint":"main","arguments":{"parameters":[{"name":"greeting","value":"hello"}]},
  "templates":[
   {"name":"main","steps":[
     [{"name":"hello1","template":"print-message","arguments":{"parameters":[{"name":"message","value":"hello 1"}]}}],
     [{"name":"hello2","template":"print-message","arguments":{"parameters":[{"name":"message","value":"hello 2"}]}}]]},
   {"name":"print-message","inputs":{"parameters":[{"name":"message"}]},
    "container":{"image":"busybox","command":["echo","{{inputs.parameters.message}}"]}}]}}`

func stepsJSON(meta string) string { return strings.Replace(stepsWF, "%META%", meta, 1) }

// placeholder is what replaces the value of a volatile key (when it is
// not null): these change from run to run.
func placeholder(key string) (string, bool) {
	switch key {
	case "uid", "resourceVersion", "resourcesDuration", "estimatedDuration":
		return "<" + key + ">", true
	case "creationTimestamp", "startedAt", "finishedAt", "time":
		return "<time>", true
	case "hostNodeName", "podIP":
		return "<host>", true
	}
	return "", false
}

// normalize replaces volatile values in a decoded JSON document, and
// generated names (with names, when not nil) in every string and map key.
func normalize(v any, names *strings.Replacer) any {
	rename := func(s string) string {
		if names == nil {
			return s
		}
		return names.Replace(s)
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if p, ok := placeholder(k); ok && val != nil {
				out[k] = p
				continue
			}
			out[rename(k)] = normalize(val, names)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e, names)
		}
		return out
	case string:
		return rename(x)
	default:
		return v
	}
}

// renamer replaces a generated workflow name by a fixed one, and its node
// ids (<wf>-<fnv32a(node name)>) by the ids the fixed name gives.
func renamer(wf *v1alpha1.Workflow, fixed string) *strings.Replacer {
	var pairs []string
	for id, n := range wf.Status.Nodes {
		if id != wf.Name {
			pairs = append(pairs, id, nodeID(fixed, strings.ReplaceAll(n.Name, wf.Name, fixed)))
		}
	}
	return strings.NewReplacer(append(pairs, wf.Name, fixed)...) // node ids first: they start with the name
}

// generatedSuffix matches the random suffix of a generated name.
var generatedSuffix = regexp.MustCompile(`^(.*-)[a-z0-9]{5}$`)

// goldenJSON normalizes body and compares it with testdata/golden/name;
// BRAID_UPDATE_GOLDEN=1 rewrites the file instead.
func goldenJSON(t *testing.T, name string, body []byte, names *strings.Replacer) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: response is not JSON: %v\n%s", name, err, body)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(normalize(v, names)); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	path := filepath.Join("testdata", "golden", name)
	if os.Getenv("BRAID_UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (BRAID_UPDATE_GOLDEN=1 writes it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the golden file (BRAID_UPDATE_GOLDEN=1 rewrites it):\n%s", name, lineDiff(string(want), string(got)))
	}
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	count := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			m[l]++
		}
		return m
	}
	w, g := count(want), count(got)
	var out []string
	for l, n := range w {
		if g[l] < n {
			out = append(out, "- "+l)
		}
	}
	for l, n := range g {
		if w[l] < n {
			out = append(out, "+ "+l)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// suspendWF waits at a suspend step until it is resumed.
const suspendWF = `{"metadata":{"name":"%NAME%"},"spec":{"entrypoint":"main","templates":[{"name":"main","suspend":{}}]}}`

func suspendJSON(name string) string { return strings.Replace(suspendWF, "%NAME%", name, 1) }

// waitStore polls the store until ok holds for the workflow.
func waitStore(t *testing.T, st *sqlite.Store, ns, name, what string, ok func(*v1alpha1.Workflow) bool) *v1alpha1.Workflow {
	t.Helper()
	var wf *v1alpha1.Workflow
	testutil.Eventually(t, 60*time.Second, name+": "+what, func() error {
		obj, err := st.Get(context.Background(), store.KindWorkflow, ns, name)
		if err != nil {
			t.Fatalf("get %s: %v", name, err)
		}
		wf = obj.(*v1alpha1.Workflow)
		if ok(wf) {
			return nil
		}
		return fmt.Errorf("phase %q, %s", wf.Status.Phase, wf.Status.Message)
	})
	return wf
}

func finished(wf *v1alpha1.Workflow) bool {
	return !wf.Status.FinishedAt.IsZero() && wf.Labels["workflows.argoproj.io/completed"] == "true"
}

func suspended(wf *v1alpha1.Workflow) bool {
	for _, n := range wf.Status.Nodes {
		if n.Type == v1alpha1.NodeTypeSuspend && n.Phase == v1alpha1.NodeRunning {
			return true
		}
	}
	return false
}

func mustDo(t *testing.T, method, url, body string) response {
	t.Helper()
	res := do(t, method, url, body)
	if res.status != 200 {
		t.Fatalf("%s %s: %d %s", method, url, res.status, res.body)
	}
	return res
}

// TestGoldenWorkflowREST records the JSON of create, get (after a run),
// list and list with `fields` through a real server running workflows.
//
// Four workflows, created in this order: "waiting" (suspended, never
// resumed), "approve" (suspended, resumed last), steps-xxxxx (generated
// name) and steps-golden. The store lists them newest created first; Argo
// lists unfinished ones first, then the latest finished: waiting, approve,
// steps-golden, steps-xxxxx.
func TestGoldenWorkflowREST(t *testing.T) {
	srv := startRunningServer(t)
	api := srv.base + "/api/v1/workflows/argo"

	for _, name := range []string{"waiting", "approve"} {
		mustDo(t, "POST", api, `{"workflow":`+suspendJSON(name)+`}`)
		waitStore(t, srv.store, "argo", name, "suspended", suspended)
	}

	// Create with generateName: the response is the stored object, before
	// the controller has touched it.
	res := mustDo(t, "POST", api, `{"namespace":"argo","workflow":`+stepsJSON(`"generateName":"steps-"`)+`}`)
	created := decodeInto[v1alpha1.Workflow](t, res.body)
	if m := generatedSuffix.FindStringSubmatch(created.Name); m == nil || m[1] != "steps-" {
		t.Fatalf("generated name %q is not steps-<5 chars>", created.Name)
	}
	goldenJSON(t, "create.json", res.body, strings.NewReplacer(created.Name, "steps-xxxxx"))
	generated := renamer(waitStore(t, srv.store, "argo", created.Name, "finished", finished), "steps-xxxxx")

	// A named workflow, so that node ids (<wf>-<fnv32a(node name)>) are
	// stable and recorded as they are.
	mustDo(t, "POST", api, `{"workflow":`+stepsJSON(`"name":"steps-golden"`)+`}`)
	waitStore(t, srv.store, "argo", "steps-golden", "finished", finished)

	res = mustDo(t, "GET", api+"/steps-golden", "")
	goldenJSON(t, "get-succeeded.json", res.body, nil)
	checkArgoShape(t, res.body)

	// Resume "approve" in a later second than steps-golden finished (the
	// JSON times have whole seconds), so that it is the latest finished:
	// the controller's clock moves on by a second.
	srv.clock.Step(time.Second)
	mustDo(t, "PUT", api+"/approve/resume", `{}`)
	waitStore(t, srv.store, "argo", "approve", "finished", finished)

	res = mustDo(t, "GET", api+"/waiting", "")
	goldenJSON(t, "get-running.json", res.body, nil)

	res = mustDo(t, "GET", api, "")
	goldenJSON(t, "list.json", res.body, generated)
	var names []string
	for _, wf := range decodeInto[v1alpha1.WorkflowList](t, res.body).Items {
		names = append(names, wf.Name)
		if len(wf.Status.Nodes) == 0 {
			t.Errorf("list: %s has no status.nodes (Argo lists whole workflows)", wf.Name)
		}
	}
	if want := []string{"waiting", "approve", "steps-golden", created.Name}; !slices.Equal(names, want) {
		t.Errorf("list order = %v, want %v (unfinished first, then the latest finished)", names, want)
	}

	// The fields `argo list` sends by default, and with -o name (ARGO-API
	// §5.1); GET with fields to drop.
	for file, fields := range map[string]string{
		"list-fields.json": "metadata,items.metadata,items.spec,items.status.phase,items.status.message,items.status.finishedAt," +
			"items.status.startedAt,items.status.estimatedDuration,items.status.progress",
		"list-fields-name.json": "metadata,items.metadata.name,items.metadata.creationTimestamp,items.status.finishedAt",
	} {
		res = mustDo(t, "GET", api+"?fields="+fields, "")
		goldenJSON(t, file, res.body, generated)
	}
	res = mustDo(t, "GET", api+"/steps-golden?fields=-status.nodes,spec", "")
	goldenJSON(t, "get-drop-fields.json", res.body, nil)
}

// rfc3339Seconds is how Argo writes a time: UTC, whole seconds.
var rfc3339Seconds = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)

// checkArgoShape checks a succeeded steps workflow (stepsWF) against
// ARGO-API §6: keys, JSON types, and how nodes refer to each other.
func checkArgoShape(t *testing.T, body []byte) {
	t.Helper()
	var wf map[string]any
	if err := json.Unmarshal(body, &wf); err != nil {
		t.Fatal(err)
	}
	meta, _ := wf["metadata"].(map[string]any)
	st, _ := wf["status"].(map[string]any)
	if meta == nil || st == nil || wf["spec"] == nil {
		t.Fatalf("want metadata, spec and status objects: %s", body)
	}
	name, _ := meta["name"].(string)
	for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp"} {
		if s, ok := meta[k].(string); !ok || s == "" {
			t.Errorf("metadata.%s = %#v, want a non-empty string", k, meta[k])
		}
	}
	labels, _ := meta["labels"].(map[string]any)
	if labels["workflows.argoproj.io/phase"] != "Succeeded" || labels["workflows.argoproj.io/completed"] != "true" {
		t.Errorf("metadata.labels = %v, want phase Succeeded and completed true", labels)
	}
	checkTime := func(where string, v any) {
		if s, ok := v.(string); !ok || !rfc3339Seconds.MatchString(s) {
			t.Errorf("%s = %#v, want RFC 3339 UTC with whole seconds", where, v)
		}
	}
	checkTime("metadata.creationTimestamp", meta["creationTimestamp"])
	checkTime("status.startedAt", st["startedAt"])
	checkTime("status.finishedAt", st["finishedAt"])
	if st["phase"] != "Succeeded" || st["progress"] != "2/2" {
		t.Errorf("status phase %v, progress %v; want Succeeded, 2/2", st["phase"], st["progress"])
	}
	if v, ok := st["estimatedDuration"]; ok {
		if _, num := v.(float64); !num {
			t.Errorf("status.estimatedDuration = %#v, want a number of seconds", v)
		}
	}
	checkConditions(t, st["conditions"])
	nodes, _ := st["nodes"].(map[string]any)
	byName := map[string]map[string]any{}
	for id, v := range nodes {
		n, _ := v.(map[string]any)
		checkNode(t, name, id, n, nodes)
		if s, ok := n["name"].(string); ok {
			byName[s] = n
		}
	}
	// The tree of §6: root -> [0] -> hello1 -> [1] -> hello2.
	chain := []string{name, name + "[0]", name + "[0].hello1", name + "[1]", name + "[1].hello2"}
	wantType := []string{"Steps", "StepGroup", "Pod", "StepGroup", "Pod"}
	for i, nn := range chain {
		n := byName[nn]
		if n == nil {
			t.Errorf("no node named %s", nn)
			continue
		}
		if n["type"] != wantType[i] {
			t.Errorf("%s: type %v, want %s", nn, n["type"], wantType[i])
		}
		var want []any
		if i+1 < len(chain) {
			want = []any{nodeID(name, chain[i+1])}
		}
		if got, _ := n["children"].([]any); !slices.Equal(got, want) {
			t.Errorf("%s: children %v, want %v", nn, got, want)
		}
	}
	if root := byName[name]; root != nil {
		if got, _ := root["outboundNodes"].([]any); !slices.Equal(got, []any{nodeID(name, name+"[1].hello2")}) {
			t.Errorf("root outboundNodes = %v, want [hello2's id]", got)
		}
	}
	if n := byName[name+"[1].hello2"]; n != nil {
		in := fmt.Sprint(n["inputs"])
		if !strings.Contains(in, "hello 2") {
			t.Errorf("hello2 inputs = %s, want message hello 2", in)
		}
		if out, _ := n["outputs"].(map[string]any); out["exitCode"] != "0" {
			t.Errorf("hello2 outputs = %v, want exitCode \"0\" (a string)", n["outputs"])
		}
	}
}

func checkConditions(t *testing.T, v any) {
	t.Helper()
	conds, ok := v.([]any)
	if !ok {
		t.Errorf("status.conditions = %#v, want a list", v)
		return
	}
	completed := false
	for _, c := range conds {
		m, _ := c.(map[string]any)
		typ, _ := m["type"].(string)
		st, _ := m["status"].(string)
		if typ == "" || (st != "True" && st != "False") {
			t.Errorf("condition %v: want type and status True|False", c)
		}
		completed = completed || (typ == "Completed" && st == "True")
	}
	if !completed {
		t.Errorf("status.conditions = %v, want Completed True", conds)
	}
}

// nodeID is Argo's node id: the workflow name for the root, else
// <wf>-<fnv32a(node name)>.
func nodeID(wf, nodeName string) string {
	if nodeName == wf {
		return wf
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(nodeName))
	return fmt.Sprintf("%s-%d", wf, h.Sum32())
}

func checkNode(t *testing.T, wf, id string, n map[string]any, nodes map[string]any) {
	t.Helper()
	nodeTypes := []string{"Pod", "Container", "Steps", "StepGroup", "DAG", "TaskGroup", "Retry", "Skipped", "Suspend", "HTTP", "Plugin"}
	nodePhases := []string{"Pending", "Running", "Succeeded", "Skipped", "Failed", "Error", "Omitted"}
	name, _ := n["name"].(string)
	if n["id"] != id || name == "" || id != nodeID(wf, name) {
		t.Errorf("node %s: id %v, name %q; want the key as id and id = <wf>-fnv32a(name)", id, n["id"], name)
	}
	if typ, _ := n["type"].(string); !slices.Contains(nodeTypes, typ) {
		t.Errorf("node %s: type %#v", name, n["type"])
	}
	if ph, _ := n["phase"].(string); !slices.Contains(nodePhases, ph) {
		t.Errorf("node %s: phase %#v", name, n["phase"])
	}
	if s, _ := n["displayName"].(string); s == "" {
		t.Errorf("node %s: no displayName", name)
	}
	if n["templateScope"] != "local/"+wf {
		t.Errorf("node %s: templateScope %#v, want local/%s", name, n["templateScope"], wf)
	}
	if b, ok := n["boundaryID"]; ok && nodes[fmt.Sprint(b)] == nil {
		t.Errorf("node %s: boundaryID %v is not a node", name, b)
	}
	for _, k := range []string{"children", "outboundNodes"} {
		ids, ok := n[k]
		if !ok {
			continue
		}
		list, isList := ids.([]any)
		if !isList {
			t.Errorf("node %s: %s = %#v, want a list", name, k, ids)
		}
		for _, c := range list {
			if nodes[fmt.Sprint(c)] == nil {
				t.Errorf("node %s: %s has %v, which is not a node", name, k, c)
			}
		}
	}
	checkTime := func(k string) {
		if v, ok := n[k]; ok && v != nil {
			if s, _ := v.(string); !rfc3339Seconds.MatchString(s) {
				t.Errorf("node %s: %s = %#v", name, k, v)
			}
		}
	}
	checkTime("startedAt")
	checkTime("finishedAt")
	if rd, ok := n["resourcesDuration"]; ok {
		m, _ := rd.(map[string]any)
		for k, v := range m {
			if _, num := v.(float64); !num {
				t.Errorf("node %s: resourcesDuration.%s = %#v, want seconds", name, k, v)
			}
		}
	}
}

func TestFieldsKeep(t *testing.T) {
	const nodes = "items.status.nodes"
	for fields, want := range map[string]bool{
		"":                                   true,
		"items":                              true,
		"metadata,items.status":              true,
		"items.status.nodes.x.phase":         true,
		"metadata,items.metadata.name":       false,
		"items.status.phase,items.spec":      false,
		"-items.status.nodes":                false,
		"-items.status":                      false,
		"-items.metadata,items.status.phase": true,
		"-items.status.nodes.x.outputs":      true,
	} {
		if got := fieldsKeep(fields, nodes); got != want {
			t.Errorf("fieldsKeep(%q) = %v, want %v", fields, got, want)
		}
	}
}
