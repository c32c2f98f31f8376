package engine

import (
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Memoization (template memoize, ARGO-FEATURES "Memoization"): before a
// memoized template creates its node, its key is looked up in the named
// cache. A hit younger than maxAge creates the node Succeeded at once with
// the cached outputs; a miss runs the template as usual, and when its node
// Succeeds the caller saves the node's outputs under the key. Look-ups read
// Snapshot.Memos, which the caller loads with the keys the previous pass
// asked for (Result.Need); saves are returned in Plan.Memoize. So the
// engine stays pure. Steps, DAG and suspend templates are memoized like
// leaves.

// MemoEntry is one cached result.
type MemoEntry struct {
	// NodeID is the node whose outputs were saved.
	NodeID string
	// Outputs are the saved outputs; nil for a template without any.
	Outputs *v1alpha1.Outputs
	// CreatedAt is when the entry was saved; maxAge counts from it.
	CreatedAt time.Time
}

// MemoSave is a memoization cache write for the caller to carry out after
// it has persisted Status: store a Succeeded node's outputs under Key in
// Cache, or, with Hit, record that the entry under Key was used.
type MemoSave struct {
	// Hit is true for a cache hit: the caller records the entry's last hit
	// time and stores nothing.
	Hit bool
	// NodeID is the memoized node.
	NodeID string
	// Cache and Key name the entry (memoizationStatus.cacheName and key);
	// the namespace is the workflow's.
	Cache, Key string
	// Outputs are the node's outputs (nil when it has none); unset for a Hit.
	Outputs *v1alpha1.Outputs
}

// memoKeyPattern is what a ConfigMap key may hold, as Argo requires of a
// memoization key: letters, digits, '-', '_' and '.'.
var memoKeyPattern = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// maxMemoKey is the longest key a ConfigMap accepts.
const maxMemoKey = 253

// memoLookup is the outcome of a look-up: the Succeeded node of a hit, or
// the status to record on the node of a miss. Both are empty for a template
// without memoize or a node that already exists, and when the look-up is
// held: the entry is not loaded yet, or the hit's node would pass the node
// limit.
type memoLookup struct {
	hit  v1alpha1.NodeStatus
	miss *v1alpha1.MemoizationStatus
	hold hold
}

// memoize looks a memoized invocation up when its node is about to be
// created: Argo checks memoization before locks and parallelism. A node
// created earlier is not looked up again, but one that was created waiting
// for a lock, and so has no memoizationStatus yet, runs as a miss when it
// gets the lock. An invalid key, cache name or maxAge, or a failing
// look-up, is an error for the node.
func (r *pass) memoize(in invocation, existing *v1alpha1.NodeStatus, opts execOpts) (memoLookup, error) {
	m := in.tmpl.Memoize
	if m == nil || (existing != nil && (existing.MemoizationStatus != nil || fulfilled(*existing))) {
		return memoLookup{}, nil
	}
	p, err := memoParams(m, in.v)
	if err != nil {
		return memoLookup{}, err
	}
	status := &v1alpha1.MemoizationStatus{Key: p.key, CacheName: p.cache}
	if existing != nil {
		return memoLookup{miss: status}, nil
	}
	l, loaded := r.loadMemo(p.cache, p.key)
	if !loaded {
		return memoLookup{hold: holdNotLoaded}, nil
	}
	if l.Err != "" {
		return memoLookup{}, fmt.Errorf("memoization cache %s: load key %s: %s", p.cache, p.key, l.Err)
	}
	if !l.Found || (p.limited && r.now.Sub(l.Entry.CreatedAt) > p.maxAge) {
		return memoLookup{miss: status}, nil
	}
	status.Hit = true
	return r.memoHitNode(in, opts, l.Entry, status)
}

// memoSpec is a template's memoize with its tags substituted.
type memoSpec struct {
	key, cache string
	maxAge     time.Duration // how old an entry may be when limited
	limited    bool          // maxAge is set; else any age hits
}

// memoParams substitutes the key and the cache name with the template's
// variables (its inputs above all) and checks them. maxAge is a Go
// duration, parsed as Argo parses it (no "d" unit); empty means no limit.
func memoParams(m *v1alpha1.Memoize, v *vars) (memoSpec, error) {
	key, err := v.replace(m.Key, expr.Strict)
	if err != nil {
		return memoSpec{}, fmt.Errorf("memoization key: %w", err)
	}
	if key == "" || len(key) > maxMemoKey || !memoKeyPattern.MatchString(key) {
		return memoSpec{}, fmt.Errorf("invalid memoization key %q: a key must be 1 to %d characters, each a letter, a digit, '-', '_' or '.'",
			key, maxMemoKey)
	}
	if m.Cache == nil || m.Cache.ConfigMap == nil || m.Cache.ConfigMap.Name == "" {
		return memoSpec{}, fmt.Errorf("memoization cache: memoize.cache.configMap.name is required")
	}
	cache, err := v.replace(m.Cache.ConfigMap.Name, expr.Strict)
	if err != nil {
		return memoSpec{}, fmt.Errorf("memoization cache name: %w", err)
	}
	p := memoSpec{key: key, cache: cache}
	if m.MaxAge != "" {
		if p.maxAge, err = time.ParseDuration(m.MaxAge); err != nil {
			return memoSpec{}, fmt.Errorf("invalid maxAge: %w", err)
		}
		p.limited = true
	}
	return p, nil
}

// loadMemo looks an entry up in the snapshot. Without a cache every
// look-up misses. A key the snapshot lacks is asked for, and loaded is false:
// the node is held back until the next pass brings it.
func (r *pass) loadMemo(cacheName, key string) (MemoLookup, bool) {
	if r.noMemos {
		return MemoLookup{}, true
	}
	k := MemoKey{Cache: cacheName, Key: key}
	l, ok := r.memos[k]
	if !ok {
		r.need(func(n *Need) {
			if !slices.Contains(n.Memos, k) {
				n.Memos = append(n.Memos, k)
			}
		})
		return MemoLookup{}, false
	}
	return l, true
}

// memoHitNode creates the node of a cache hit: Succeeded at once, of the
// template's node type, with the cached outputs (ctl/operator.go
// initializeCacheHitNode). Its global outputs are exported as a finished
// node's would be, and the hit is planned for the caller to record.
func (r *pass) memoHitNode(in invocation, opts execOpts, e MemoEntry, status *v1alpha1.MemoizationStatus) (memoLookup, error) {
	n, ok := r.newNode(nodeInit{name: in.name, typ: templateNodeType(in.tmpl), h: in.h, scope: in.scope,
		boundaryID: opts.boundaryID, phase: v1alpha1.NodeSucceeded, flag: opts.flag, inputs: in.inputs})
	if !ok {
		return memoLookup{hold: holdNodeLimit}, nil
	}
	n.Outputs = e.Outputs.DeepCopy()
	n.MemoizationStatus = status
	r.put(n)
	r.exportOutputs(n.Outputs)
	r.addMemoSave(MemoSave{Hit: true, NodeID: n.ID, Cache: status.CacheName, Key: status.Key})
	if err := r.applyDisplayName(&n, in.tmpl, in.v); err != nil {
		return memoLookup{}, err
	}
	return memoLookup{hit: r.nodes[n.ID]}, nil
}

// templateNodeType is the type of the node a template creates when no
// retry node wraps it (rule 1.1).
func templateNodeType(t *v1alpha1.Template) v1alpha1.NodeType {
	switch t.Type() {
	case v1alpha1.TemplateTypeSteps:
		return v1alpha1.NodeTypeSteps
	case v1alpha1.TemplateTypeDAG:
		return v1alpha1.NodeTypeDAG
	case v1alpha1.TemplateTypeSuspend:
		return v1alpha1.NodeTypeSuspend
	}
	return leafNodeType(t)
}

// recordMemoMiss puts the miss status on the node the invocation created
// (a Retry node when the template retries), and returns the node.
func (r *pass) recordMemoMiss(out v1alpha1.NodeStatus, miss *v1alpha1.MemoizationStatus) v1alpha1.NodeStatus {
	if miss == nil || out.ID == "" {
		return out
	}
	n, ok := r.nodes[out.ID]
	if !ok {
		return out
	}
	n.MemoizationStatus = miss
	r.put(n)
	return n
}

// planMemoSaves plans a save for each memoized node of a miss that
// succeeded in this pass (Argo saves only on success).
func (r *pass) planMemoSaves() {
	for _, id := range r.changedIDs {
		n, ok := r.nodes[id]
		if !ok || n.MemoizationStatus == nil || n.MemoizationStatus.Hit || !r.succeededNow(n) {
			continue
		}
		r.addMemoSave(MemoSave{NodeID: n.ID, Cache: n.MemoizationStatus.CacheName,
			Key: n.MemoizationStatus.Key, Outputs: n.Outputs.DeepCopy()})
	}
}

// succeededNow reports whether a changed node became Succeeded in this
// pass: a leaf by the runtime's report merged now, any other node by
// setPhase, which stamps finishedAt with now. A node that succeeded before
// and is changed again (a child linked to it, the sums written when the
// workflow completes, a node carried over by a memoized resubmit) is not
// saved again: its entry would look newer than its outputs are. Two passes
// at the same instant may plan the same save twice, which changes nothing.
func (f *facts) succeededNow(n v1alpha1.NodeStatus) bool {
	if n.Phase != v1alpha1.NodeSucceeded {
		return false
	}
	if isLeafType(n.Type) {
		res, ok := f.results[n.ID]
		return ok && res.Phase == v1alpha1.NodeSucceeded
	}
	return n.FinishedAt.Time.Equal(f.now)
}
