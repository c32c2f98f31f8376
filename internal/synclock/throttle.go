package synclock

import (
	"sort"
	"sync"
	"time"
)

// Throttler bounds how many workflows run at once: Argo's controller
// parallelism (all namespaces) and namespaceParallelism (each namespace).
// A workflow is admitted once and counts until it is removed. It is safe
// for concurrent use.
type Throttler struct {
	limit, nsLimit int
	notify         func(workflowKey string)

	mu      sync.Mutex
	running map[string]string // workflow key -> namespace
	perNS   map[string]int
	pending map[string]waitingWorkflow
	seq     uint64
}

type waitingWorkflow struct {
	waiter
	namespace string
}

// NewThrottler returns a Throttler; a limit of 0 bounds nothing. notify
// (optional) is told of the workflows whose turn may have come.
func NewThrottler(parallelism, namespaceParallelism int, notify func(workflowKey string)) *Throttler {
	return &Throttler{limit: max(parallelism, 0), nsLimit: max(namespaceParallelism, 0), notify: notify,
		running: map[string]string{}, perNS: map[string]int{}, pending: map[string]waitingWorkflow{}}
}

// Enabled reports whether the Throttler bounds anything.
func (t *Throttler) Enabled() bool { return t != nil && (t.limit > 0 || t.nsLimit > 0) }

// Admit reports whether a workflow may run now. A workflow already admitted
// may; another waits its turn, by priority then creation time, and is
// admitted when it fits within both limits after those before it.
func (t *Throttler) Admit(key, namespace string, priority int32, created time.Time) bool {
	if !t.Enabled() {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.running[key]; ok {
		return true
	}
	if _, ok := t.pending[key]; !ok {
		t.seq++
		t.pending[key] = waitingWorkflow{waiter: waiter{holder: key, priority: priority, created: created, seq: t.seq}, namespace: namespace}
	}
	for _, k := range t.admissible() {
		if k == key {
			delete(t.pending, key)
			t.start(key, namespace)
			return true
		}
	}
	return false
}

// Started counts a workflow that is already running (after a restart),
// whatever the limits.
func (t *Throttler) Started(key, namespace string) {
	if !t.Enabled() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.pending, key)
	if _, ok := t.running[key]; !ok {
		t.start(key, namespace)
	}
}

func (t *Throttler) start(key, namespace string) {
	t.running[key] = namespace
	t.perNS[namespace]++
}

// Remove forgets a workflow (completed or deleted) and notifies the
// workflows that may now run.
func (t *Throttler) Remove(key string) {
	if !t.Enabled() {
		return
	}
	t.mu.Lock()
	delete(t.pending, key)
	ns, ok := t.running[key]
	if ok {
		delete(t.running, key)
		if t.perNS[ns]--; t.perNS[ns] <= 0 {
			delete(t.perNS, ns)
		}
	}
	var next []string
	if ok {
		next = t.admissible()
	}
	t.mu.Unlock()
	if t.notify != nil {
		for _, k := range next {
			t.notify(k)
		}
	}
}

// admissible lists the waiting workflows that fit, in their order, each
// taking its place before the next is considered.
func (t *Throttler) admissible() []string {
	ws := make([]waitingWorkflow, 0, len(t.pending))
	for _, w := range t.pending {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].before(ws[j].waiter) })
	total := len(t.running)
	perNS := map[string]int{}
	var out []string
	for _, w := range ws {
		if t.limit > 0 && total >= t.limit {
			break
		}
		n, ok := perNS[w.namespace]
		if !ok {
			n = t.perNS[w.namespace]
		}
		if t.nsLimit > 0 && n >= t.nsLimit {
			continue
		}
		perNS[w.namespace] = n + 1
		total++
		out = append(out, w.holder)
	}
	return out
}
