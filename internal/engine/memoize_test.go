package engine

import (
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/synclock"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// fakeCache is a map-backed memoization cache that loads what a pass asks
// for (Result.Need) and carries out Plan.Memoize the way the controller
// does. It exists only in this test: the real cache is the SQLite store
// (internal/store/sqlite/memo.go).
type fakeCache struct {
	entries map[string]MemoEntry // by namespace/cache/key
	loads   []string             // keys looked up, in order
	hits    []string             // keys whose hit was recorded
	saves   []string             // keys saved
	planned []string             // keys of every save planned, repeats included
	err     error                // returned by every Load when set
	need    []MemoKey            // what the last pass asked for
	locks   *lockGate            // the lock manager, when set
}

func newFakeCache() *fakeCache { return &fakeCache{entries: map[string]MemoEntry{}} }

// memos loads the entries the last pass asked for, as the controller does
// before the next pass.
func (c *fakeCache) memos(namespace string) map[MemoKey]MemoLookup {
	out := make(map[MemoKey]MemoLookup, len(c.need))
	for _, k := range c.need {
		c.loads = append(c.loads, k.Key)
		if c.err != nil {
			out[k] = MemoLookup{Err: c.err.Error()}
			continue
		}
		e, ok := c.entries[namespace+"/"+k.Cache+"/"+k.Key]
		out[k] = MemoLookup{Found: ok, Entry: e}
	}
	c.need = nil
	return out
}

func (c *fakeCache) put(cache, key string, created time.Time, params map[string]string) {
	out := &v1alpha1.Outputs{}
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out.Parameters = append(out.Parameters, v1alpha1.Parameter{Name: k, Value: v1alpha1.AnyStringPtr(params[k])})
	}
	c.entries["default/"+cache+"/"+key] = MemoEntry{NodeID: "old-node", Outputs: out, CreatedAt: created}
}

func (c *fakeCache) apply(ns string, saves []MemoSave, now time.Time) {
	for _, s := range saves {
		if s.Hit {
			c.hits = append(c.hits, s.Key)
			continue
		}
		c.planned = append(c.planned, s.Key)
		k := ns + "/" + s.Cache + "/" + s.Key
		if e, ok := c.entries[k]; ok && e.NodeID == s.NodeID {
			continue // the same node saved again: nothing changes
		}
		c.saves = append(c.saves, s.Key)
		c.entries[k] = MemoEntry{NodeID: s.NodeID, Outputs: s.Outputs, CreatedAt: now}
	}
}

// drive runs d to completion as d.run does, with c as the Snapshot's Cache.
func (c *fakeCache) drive(d *driver) *driver {
	d.t.Helper()
	for i := 0; i < d.maxPasses; i++ {
		res := c.reconcile(d)
		if d.wf.Status.Phase.Completed() {
			return d
		}
		d.collect()
		if len(d.pending) > 0 {
			continue
		}
		next := d.nextEvent(res.RequeueAfter)
		if next.IsZero() && c.locks != nil {
			continue // the controller reconciles again when a lock frees
		}
		if next.IsZero() {
			d.t.Fatalf("stuck at %v\n%s", d.now.Sub(t0), d.dump())
		}
		d.now = next
		d.collect()
	}
	d.t.Fatalf("not completed after %d passes\n%s", d.maxPasses, d.dump())
	return d
}

func (c *fakeCache) reconcile(d *driver) Result {
	d.t.Helper()
	before := sumsOf(d.wf.Status.Nodes)
	snap := Snapshot{Workflow: d.wf, Templates: d.templates, Results: d.pending, Limits: d.limits,
		Prepared: d.prepared, Memos: c.memos(d.wf.Namespace)}
	res, err := c.locks.reconcile(d.t, snap, d.now)
	if err != nil {
		d.t.Fatalf("Reconcile: %v", err)
	}
	c.need = res.Need.Memos
	d.passes++
	d.pending = map[string]StepResult{}
	applyResult(d.wf, res)
	d.last = res
	checkSums(d.t, d.wf, before, res.Changed)
	for _, l := range res.Plan.Launch {
		d.launches = append(d.launches, l)
		d.start(l)
	}
	c.apply(d.wf.Namespace, res.Plan.Memoize, d.now)
	if len(c.planned) != len(c.saves) {
		d.t.Errorf("saves planned %v, carried out %v: a node's save was planned twice", c.planned, c.saves)
	}
	return res
}

// launched lists the node names launched, in order.
func (d *driver) launched() []string {
	var out []string
	for _, l := range d.launches {
		out = append(out, l.NodeName)
	}
	return out
}

const memoStepsYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: mz
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: gen
        template: gen
        arguments: {parameters: [{name: who, value: world}]}
    - - name: use
        template: print
        arguments: {parameters: [{name: msg, value: "{{steps.gen.outputs.parameters.hello}}"}]}
  - name: gen
    inputs: {parameters: [{name: who}]}
    memoize:
      key: "gen-{{inputs.parameters.who}}"
      maxAge: "10s"
      cache: {configMap: {name: cache-config}}
    container: {image: busybox, command: [sh, -c, "echo made > /tmp/hello"]}
    outputs:
      parameters:
      - name: hello
        valueFrom: {path: /tmp/hello}
  - name: print
    inputs: {parameters: [{name: msg}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.msg}}"]}
`

func TestMemoizeLeaf(t *testing.T) {
	genFresh := fixed(map[string]*stepEnd{"gen": {params: map[string]string{"hello": "fresh"}}})
	tests := []struct {
		name    string
		yaml    string
		seed    func(c *fakeCache)
		hit     bool
		use     string   // the command line of the step that reads gen's output
		runs    []string // the nodes launched
		saves   []string // the keys saved
		created time.Time
	}{
		{name: "miss runs the step and saves its outputs", yaml: memoStepsYAML,
			use: "echo fresh", runs: []string{"mz[0].gen", "mz[1].use"}, saves: []string{"gen-world"}},
		{name: "hit skips the step; its outputs feed the next step", yaml: memoStepsYAML,
			seed: func(c *fakeCache) {
				c.put("cache-config", "gen-world", t0.Add(-5*time.Second), map[string]string{"hello": "cached"})
			},
			hit: true, use: "echo cached", runs: []string{"mz[1].use"}},
		{name: "entry older than maxAge misses", yaml: memoStepsYAML,
			seed: func(c *fakeCache) {
				c.put("cache-config", "gen-world", t0.Add(-11*time.Second), map[string]string{"hello": "stale"})
			},
			use: "echo fresh", runs: []string{"mz[0].gen", "mz[1].use"}, saves: []string{"gen-world"}},
		{name: "no maxAge: any age hits", yaml: strings.Replace(memoStepsYAML, `maxAge: "10s"`, `maxAge: ""`, 1),
			seed: func(c *fakeCache) {
				c.put("cache-config", "gen-world", t0.Add(-1000*time.Hour), map[string]string{"hello": "old"})
			},
			hit: true, use: "echo old", runs: []string{"mz[1].use"}},
		{name: "a negative maxAge always misses", yaml: strings.Replace(memoStepsYAML, `maxAge: "10s"`, `maxAge: "-1s"`, 1),
			seed: func(c *fakeCache) { c.put("cache-config", "gen-world", t0, map[string]string{"hello": "now"}) },
			use:  "echo fresh", runs: []string{"mz[0].gen", "mz[1].use"}, saves: []string{"gen-world"}},
		{name: "another key misses", yaml: memoStepsYAML,
			seed: func(c *fakeCache) { c.put("cache-config", "gen-other", t0, map[string]string{"hello": "other"}) },
			use:  "echo fresh", runs: []string{"mz[0].gen", "mz[1].use"}, saves: []string{"gen-world"}},
		{name: "another cache misses", yaml: memoStepsYAML,
			seed: func(c *fakeCache) { c.put("other-cache", "gen-world", t0, map[string]string{"hello": "other"}) },
			use:  "echo fresh", runs: []string{"mz[0].gen", "mz[1].use"}, saves: []string{"gen-world"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newFakeCache()
			if tt.seed != nil {
				tt.seed(c)
			}
			d := load(t, tt.yaml)
			d.respond = genFresh
			c.drive(d)
			d.expectExactly(v1alpha1.WorkflowSucceeded, "", map[string]string{
				"mz": "Steps Succeeded", "mz[0]": "StepGroup Succeeded", "mz[0].gen": "Pod Succeeded",
				"mz[1]": "StepGroup Succeeded", "mz[1].use": "Pod Succeeded",
			})
			gen := d.node("mz[0].gen")
			eq(t, "memoizationStatus", gen.MemoizationStatus, &v1alpha1.MemoizationStatus{Hit: tt.hit, Key: "gen-world", CacheName: "cache-config"})
			eq(t, "use", argsOf(d.launchOf("mz[1].use")), tt.use)
			eq(t, "launched", d.launched(), tt.runs)
			eq(t, "saves", c.saves, tt.saves)
			eq(t, "loads", c.loads, []string{"gen-world"})
			eq(t, "gen children", d.children("mz[0].gen"), []string{"mz[1]"})
			eq(t, "gen inputs", gen.Inputs.Parameters[0].Value.String(), "world")
			if tt.hit {
				eq(t, "hits", c.hits, []string{"gen-world"})
				eq(t, "hit progress", gen.Progress, v1alpha1.Progress("1/1"))
				eq(t, "hit times", gen.FinishedAt, gen.StartedAt)
			} else {
				saved := c.entries["default/cache-config/gen-world"]
				eq(t, "saved node", saved.NodeID, gen.ID)
				eq(t, "saved output", saved.Outputs.Parameters[0].Value.String(), "fresh")
				if !saved.CreatedAt.After(t0) {
					t.Errorf("saved at %v, want after the step ran", saved.CreatedAt)
				}
				eq(t, "hits", c.hits, []string(nil))
			}
		})
	}
}

// The second run of the same workflow with the same cache takes the
// outputs the first run saved and launches nothing for the memoized step.
func TestMemoizeSecondRunHits(t *testing.T) {
	c := newFakeCache()
	d1 := load(t, memoStepsYAML)
	d1.respond = fixed(map[string]*stepEnd{"gen": {params: map[string]string{"hello": "first"}}})
	c.drive(d1)
	d2 := load(t, memoStepsYAML)
	d2.now = d1.now.Add(2 * time.Second)
	c.drive(d2)
	eq(t, "second run launched", d2.launched(), []string{"mz[1].use"})
	eq(t, "second run use", argsOf(d2.launchOf("mz[1].use")), "echo first")
	eq(t, "hit", d2.node("mz[0].gen").MemoizationStatus.Hit, true)
	eq(t, "saves", c.saves, []string{"gen-world"})
}

func TestMemoizeKeyFromInputs(t *testing.T) {
	const y = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: mk}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: a
        template: gen
        arguments: {parameters: [{name: who, value: alpha}]}
      - name: b
        template: gen
        arguments: {parameters: [{name: who, value: beta}]}
  - name: gen
    inputs: {parameters: [{name: who}]}
    memoize:
      key: "{{workflow.namespace}}.{{inputs.parameters.who}}"
      maxAge: 1h
      cache: {configMap: {name: c}}
    container: {image: busybox, command: [echo, "{{inputs.parameters.who}}"]}
`
	c := newFakeCache()
	c.put("c", "default.alpha", t0, map[string]string{"x": "1"})
	d := load(t, y)
	c.drive(d)
	d.expect(v1alpha1.WorkflowSucceeded, "", nil)
	eq(t, "loads", c.loads, []string{"default.alpha", "default.beta"})
	eq(t, "launched", d.launched(), []string{"mk[0].b"})
	eq(t, "a", d.node("mk[0].a").MemoizationStatus, &v1alpha1.MemoizationStatus{Hit: true, Key: "default.alpha", CacheName: "c"})
	eq(t, "b", d.node("mk[0].b").MemoizationStatus, &v1alpha1.MemoizationStatus{Key: "default.beta", CacheName: "c"})
	eq(t, "saves", c.saves, []string{"default.beta"})
}

const memoInnerStepsYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: ms}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: inner
        template: inner
        arguments: {parameters: [{name: who, value: world}]}
    - - name: use
        template: print
        arguments: {parameters: [{name: msg, value: "{{steps.inner.outputs.parameters.out}}"}]}
  - name: inner
    inputs: {parameters: [{name: who}]}
    memoize:
      key: "inner-{{inputs.parameters.who}}"
      maxAge: 1h
      cache: {configMap: {name: c}}
    steps:
    - - name: work
        template: work
    outputs:
      parameters:
      - name: out
        valueFrom: {parameter: "{{steps.work.outputs.parameters.p}}"}
  - name: work
    container: {image: busybox, command: [sh, -c, "echo v > /tmp/p"]}
    outputs:
      parameters:
      - name: p
        valueFrom: {path: /tmp/p}
  - name: print
    inputs: {parameters: [{name: msg}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.msg}}"]}
`

// A steps template is memoized as a whole: a miss runs its steps and saves
// its outputs; a hit creates the Steps node Succeeded without children,
// and the next group hangs from it (it is its own outbound node).
func TestMemoizeStepsTemplate(t *testing.T) {
	c := newFakeCache()
	d1 := load(t, memoInnerStepsYAML)
	d1.respond = fixed(map[string]*stepEnd{"work": {params: map[string]string{"p": "v1"}}})
	c.drive(d1)
	d1.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{"ms[0].inner": "Steps Succeeded", "ms[0].inner[0].work": "Pod Succeeded"})
	eq(t, "miss status", d1.node("ms[0].inner").MemoizationStatus, &v1alpha1.MemoizationStatus{Key: "inner-world", CacheName: "c"})
	eq(t, "saved", param(v1alpha1.NodeStatus{Outputs: c.entries["default/c/inner-world"].Outputs}, "out"), "v1")
	eq(t, "saved node", c.entries["default/c/inner-world"].NodeID, d1.node("ms[0].inner").ID)
	eq(t, "first use", argsOf(d1.launchOf("ms[1].use")), "echo v1")

	d2 := load(t, memoInnerStepsYAML)
	d2.now = d1.now.Add(time.Minute)
	c.drive(d2)
	d2.expectExactly(v1alpha1.WorkflowSucceeded, "", map[string]string{
		"ms": "Steps Succeeded", "ms[0]": "StepGroup Succeeded", "ms[0].inner": "Steps Succeeded",
		"ms[1]": "StepGroup Succeeded", "ms[1].use": "Pod Succeeded",
	})
	inner := d2.node("ms[0].inner")
	eq(t, "hit status", inner.MemoizationStatus, &v1alpha1.MemoizationStatus{Hit: true, Key: "inner-world", CacheName: "c"})
	eq(t, "launched", d2.launched(), []string{"ms[1].use"})
	eq(t, "second use", argsOf(d2.launchOf("ms[1].use")), "echo v1")
	eq(t, "inner children", d2.children("ms[0].inner"), []string{"ms[1]"})
	eq(t, "root outbound", d2.outbound("ms"), []string{"ms[1].use"})
	eq(t, "saves", c.saves, []string{"inner-world"})
}

func TestMemoizeDAGTask(t *testing.T) {
	const y = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: md}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - name: a
        template: gen
      - name: b
        depends: a
        template: print
        arguments: {parameters: [{name: msg, value: "{{tasks.a.outputs.parameters.hello}}"}]}
  - name: gen
    memoize: {key: k, maxAge: 1m, cache: {configMap: {name: c}}}
    container: {image: busybox, command: [sh, -c, "echo x > /tmp/h"]}
    outputs:
      parameters:
      - name: hello
        valueFrom: {path: /tmp/h}
  - name: print
    inputs: {parameters: [{name: msg}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.msg}}"]}
`
	c := newFakeCache()
	c.put("c", "k", t0.Add(-30*time.Second), map[string]string{"hello": "from-cache"})
	d := load(t, y)
	c.drive(d)
	d.expectExactly(v1alpha1.WorkflowSucceeded, "", map[string]string{
		"md": "DAG Succeeded", "md.a": "Pod Succeeded", "md.b": "Pod Succeeded",
	})
	eq(t, "launched", d.launched(), []string{"md.b"})
	eq(t, "b", argsOf(d.launchOf("md.b")), "echo from-cache")
	eq(t, "a children", d.children("md.a"), []string{"md.b"})
}

// A memoized template with a retryStrategy: the Retry node carries the
// status, and its outputs (those of the attempt that succeeded) are saved.
func TestMemoizeRetry(t *testing.T) {
	y := strings.Replace(memoStepsYAML, "    memoize:\n", "    retryStrategy: {limit: 2}\n    memoize:\n", 1)
	c := newFakeCache()
	d := load(t, y)
	d.respond = fixed(map[string]*stepEnd{"gen": {params: map[string]string{"hello": "retried"}}})
	c.drive(d)
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{"mz[0].gen": "Retry Succeeded", "mz[0].gen(0)": "Pod Succeeded"})
	gen := d.node("mz[0].gen")
	eq(t, "status", gen.MemoizationStatus, &v1alpha1.MemoizationStatus{Key: "gen-world", CacheName: "cache-config"})
	eq(t, "attempt status", d.node("mz[0].gen(0)").MemoizationStatus, (*v1alpha1.MemoizationStatus)(nil))
	saved := c.entries["default/cache-config/gen-world"]
	eq(t, "saved node", saved.NodeID, gen.ID)
	eq(t, "saved", param(v1alpha1.NodeStatus{Outputs: saved.Outputs}, "hello"), "retried")
	eq(t, "saves", c.saves, []string{"gen-world"})
}

// A node that fails saves nothing (Argo saves only on success).
func TestMemoizeFailureSavesNothing(t *testing.T) {
	c := newFakeCache()
	d := load(t, memoStepsYAML)
	d.respond = fixed(map[string]*stepEnd{"gen": {phase: v1alpha1.NodeFailed, exitCode: 1}})
	c.drive(d)
	d.expect(v1alpha1.WorkflowFailed, "child '"+v1alpha1.NodeID("mz", "mz[0].gen")+"' failed", map[string]string{"mz[0].gen": "Pod Failed"})
	eq(t, "saves", c.saves, []string(nil))
	eq(t, "entries", len(c.entries), 0)
}

func TestMemoizeErrors(t *testing.T) {
	tests := []struct {
		name, from, to string
		loadErr        error
		want           string // the gen node's message
	}{
		{name: "key with a space", from: `key: "gen-{{inputs.parameters.who}}"`, to: `key: "gen {{inputs.parameters.who}}"`,
			want: `invalid memoization key "gen world": a key must be 1 to 253 characters, each a letter, a digit, '-', '_' or '.'`},
		{name: "key too long", from: `key: "gen-{{inputs.parameters.who}}"`, to: `key: "` + strings.Repeat("k", 254) + `"`,
			want: `invalid memoization key "` + strings.Repeat("k", 254) + `": a key must be 1 to 253 characters, each a letter, a digit, '-', '_' or '.'`},
		{name: "empty key", from: `key: "gen-{{inputs.parameters.who}}"`, to: `key: ""`,
			want: `invalid memoization key "": a key must be 1 to 253 characters, each a letter, a digit, '-', '_' or '.'`},
		{name: "unresolved key", from: `key: "gen-{{inputs.parameters.who}}"`, to: `key: "gen-{{inputs.parameters.nope}}"`,
			want: `memoization key: failed to resolve {{inputs.parameters.nope}}`},
		{name: "bad maxAge", from: `maxAge: "10s"`, to: `maxAge: "2d"`,
			want: `invalid maxAge: time: unknown unit "d" in duration "2d"`},
		{name: "no cache name", from: `cache: {configMap: {name: cache-config}}`, to: `cache: {configMap: {name: ""}}`,
			want: `memoization cache: memoize.cache.configMap.name is required`},
		{name: "load fails", loadErr: errors.New("disk on fire"),
			want: `memoization cache cache-config: load key gen-world: disk on fire`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := memoStepsYAML
			if tt.from != "" {
				if !strings.Contains(y, tt.from) {
					t.Fatalf("%q not in the YAML", tt.from)
				}
				y = strings.Replace(y, tt.from, tt.to, 1)
			}
			c := newFakeCache()
			c.err = tt.loadErr
			d := load(t, y)
			c.drive(d)
			if d.wf.Status.Phase == v1alpha1.WorkflowSucceeded {
				t.Fatalf("workflow Succeeded\n%s", d.dump())
			}
			eq(t, "gen", describe(d.node("mz[0].gen"), "Error x"), "Error "+tt.want)
			eq(t, "group", d.node("mz[0]").Message, "step group deemed errored due to child mz[0].gen error: "+tt.want)
			eq(t, "launched", d.launched(), []string(nil))
			eq(t, "saves", c.saves, []string(nil))
		})
	}
}

// lockGate is a real lock manager whose mutex "m" another workflow holds
// for a number of passes, then gives back.
type lockGate struct {
	m      *synclock.Locks
	needs  []*v1alpha1.Synchronization
	refuse int // passes left before the other holder releases
	asked  int // decisions about the workflow's own locks
}

func newLockGate(refuse int) *lockGate {
	g := &lockGate{m: lockManager(), refuse: refuse}
	if refuse > 0 {
		g.m.TryAcquire("default/other", "default", &v1alpha1.Synchronization{Mutexes: []*v1alpha1.Mutex{{Name: "m"}}}, 0, t0)
	}
	return g
}

// reconcile makes one pass as the controller does: on a view of the
// manager's table, whose decisions it then commits. A nil gate passes no
// table.
func (g *lockGate) reconcile(t testing.TB, s Snapshot, now time.Time) (Result, error) {
	t.Helper()
	if g == nil {
		return checkedReconcile(t, s, now)
	}
	sess, view := g.m.View(s.Workflow.Namespace+"/"+s.Workflow.Name, s.Workflow.Namespace, g.needs)
	s.Locks = view
	res, err := checkedReconcile(t, s, now)
	if err != nil {
		sess.Abort()
		return res, err
	}
	sess.Commit(res.Locks)
	g.needs = append(g.needs, res.Need.Locks...)
	g.asked += len(res.Locks)
	if g.refuse > 0 {
		if g.refuse--; g.refuse == 0 {
			g.m.Release("default/other")
		}
	}
	return res, nil
}

// Memoization comes before locks: a node created waiting for its lock runs
// when it gets it, records its miss and saves its outputs; a later run hits
// without taking the lock at all.
func TestMemoizeBeforeLocks(t *testing.T) {
	y := strings.Replace(memoStepsYAML, "    memoize:\n", "    synchronization: {mutexes: [{name: m}]}\n    memoize:\n", 1)
	c := newFakeCache()
	gate := newLockGate(2)
	c.locks = gate
	d := load(t, y)
	d.respond = fixed(map[string]*stepEnd{"gen": {params: map[string]string{"hello": "locked"}}})
	c.drive(d)
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{"mz[0].gen": "Pod Succeeded"})
	eq(t, "lock refusals left", gate.refuse, 0)
	eq(t, "status", d.node("mz[0].gen").MemoizationStatus, &v1alpha1.MemoizationStatus{Key: "gen-world", CacheName: "cache-config"})
	eq(t, "loads", c.loads, []string{"gen-world"})
	eq(t, "saves", c.saves, []string{"gen-world"})

	gate.asked = 0
	d2 := load(t, y)
	d2.now = d.now.Add(time.Second)
	c.drive(d2)
	eq(t, "second run's lock decisions", gate.asked, 0)
	eq(t, "second run launched", d2.launched(), []string{"mz[1].use"})
	eq(t, "second run use", argsOf(d2.launchOf("mz[1].use")), "echo locked")
}
