package sqlite

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func getWF(t testing.TB, s *Store, ns, name string) *v1alpha1.Workflow {
	t.Helper()
	o, err := s.Get(context.Background(), store.KindWorkflow, ns, name)
	must(t, err, "Get")
	return o.(*v1alpha1.Workflow)
}

func TestUpdateWorkflowStatusWritesOnlyChangedNodes(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	wf := bigWorkflow("wide", 50)
	must(t, s.Create(ctx, wf), "Create")
	ids := slices.Sorted(maps.Keys(wf.Status.Nodes))
	rows := nodeRows(t, s, "argo", "wide")
	if len(rows) != 50 {
		t.Fatalf("%d node rows after Create, want 50", len(rows))
	}

	type step struct {
		name    string
		edit    func(wf *v1alpha1.Workflow) []string // returns changedNodes
		written []string                             // rows whose rv must be the new one
		deleted []string                             // rows that must be gone
	}
	a, b, c := ids[3], ids[7], ids[11]
	newNode := leafNode("wide", 999, v1alpha1.NodePending, metav1.Time{})
	steps := []step{{
		name: "one node",
		edit: func(wf *v1alpha1.Workflow) []string {
			n := wf.Status.Nodes[a]
			n.Phase, n.Message = v1alpha1.NodeFailed, "exit 1"
			wf.Status.Nodes[a] = n
			return []string{a}
		},
		written: []string{a},
	}, {
		name: "add a node and modify another",
		edit: func(wf *v1alpha1.Workflow) []string {
			wf.Status.Nodes[newNode.ID] = newNode
			root := wf.Status.Nodes["wide"]
			root.Children = append(root.Children, newNode.ID)
			wf.Status.Nodes["wide"] = root
			return []string{newNode.ID, "wide"}
		},
		written: []string{newNode.ID, "wide"},
	}, {
		name: "remove a listed node",
		edit: func(wf *v1alpha1.Workflow) []string {
			delete(wf.Status.Nodes, b)
			return []string{b}
		},
		deleted: []string{b},
	}, {
		name: "status only, no nodes",
		edit: func(wf *v1alpha1.Workflow) []string {
			wf.Status.Message = "half way"
			return nil
		},
	}, {
		name: "duplicates and an unknown ID",
		edit: func(wf *v1alpha1.Workflow) []string {
			n := wf.Status.Nodes[c]
			n.Message = "again"
			wf.Status.Nodes[c] = n
			return []string{c, c, "never-existed"}
		},
		written: []string{c},
	}}

	cur := getWF(t, s, "argo", "wide")
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			before := nodeRows(t, s, "argo", "wide")
			changed := st.edit(cur)
			must(t, s.UpdateWorkflowStatus(ctx, cur, changed), "UpdateWorkflowStatus")
			newRV := int64(0)
			for _, r := range cur.ResourceVersion {
				newRV = newRV*10 + int64(r-'0')
			}
			after := nodeRows(t, s, "argo", "wide")
			for id, rv := range after {
				was, existed := before[id]
				switch {
				case slices.Contains(st.written, id):
					if rv != newRV {
						t.Errorf("node %s: rv %d, want the new %d", id, rv, newRV)
					}
				case !existed:
					t.Errorf("node %s appeared but was not listed", id)
				case rv != was:
					t.Errorf("node %s was rewritten (rv %d -> %d) but was not listed", id, was, rv)
				}
			}
			for _, id := range st.deleted {
				if _, ok := after[id]; ok {
					t.Errorf("node %s still has a row", id)
				}
			}
			got := getWF(t, s, "argo", "wide")
			if d := diffJSON(t, cur, got); d != "" {
				t.Errorf("Get after UpdateWorkflowStatus (-want +got):\n%s", d)
			}
		})
	}

	// The contract: an unlisted change is not written.
	n := cur.Status.Nodes[a]
	n.Message = "not listed"
	cur.Status.Nodes[a] = n
	must(t, s.UpdateWorkflowStatus(ctx, cur, nil), "UpdateWorkflowStatus")
	if got := getWF(t, s, "argo", "wide").Status.Nodes[a].Message; got != "exit 1" {
		t.Errorf("unlisted node change was written: message %q", got)
	}

	// Optimistic concurrency applies as in Update.
	stale := cur.DeepCopy()
	stale.ResourceVersion = "1"
	isErr(t, s.UpdateWorkflowStatus(ctx, stale, []string{a}), store.ErrConflict, "stale UpdateWorkflowStatus")
	missing := cur.DeepCopy()
	missing.Name = "missing"
	isErr(t, s.UpdateWorkflowStatus(ctx, missing, nil), store.ErrNotFound, "UpdateWorkflowStatus of a missing workflow")
}

func TestUpdateReplacesAllNodes(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	wf := bigWorkflow("full", 20)
	must(t, s.Create(ctx, wf), "Create")

	cur := getWF(t, s, "argo", "full")
	cur.Status.Nodes = v1alpha1.Nodes{"full": cur.Status.Nodes["full"]} // e.g. argo retry pruning nodes
	must(t, s.Update(ctx, cur), "Update")
	if rows := nodeRows(t, s, "argo", "full"); len(rows) != 1 || rows["full"] != 2 {
		t.Errorf("rows after full Update: %v", rows)
	}
	cur.Status.Nodes = v1alpha1.Nodes{}
	must(t, s.Update(ctx, cur), "Update with no nodes")
	if rows := nodeRows(t, s, "argo", "full"); len(rows) != 0 {
		t.Errorf("rows after Update with an empty map: %v", rows)
	}
	if got := getWF(t, s, "argo", "full"); got.Status.Nodes != nil {
		t.Errorf("Get of a workflow without nodes: %v, want nil", got.Status.Nodes)
	}
	must(t, s.Delete(ctx, store.KindWorkflow, "argo", "full"), "Delete")
}

func TestDeleteRemovesNodeRows(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	must(t, s.Create(ctx, bigWorkflow("gone", 30)), "Create")
	must(t, s.Create(ctx, bigWorkflow("kept", 10)), "Create")
	must(t, s.Delete(ctx, store.KindWorkflow, "argo", "gone"), "Delete")
	var n int
	must(t, s.r.QueryRowContext(ctx, `SELECT count(*) FROM nodes`).Scan(&n), "count")
	if n != 10 {
		t.Errorf("%d node rows left, want the 10 of the other workflow", n)
	}
}

// A 50,000-node workflow can be created, updated (both ways) and read back.
func TestFiftyThousandNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("large workflow")
	}
	n := 50_000
	if raceEnabled {
		n = 5_000 // the race detector makes the full size take a minute
	}
	ctx := context.Background()
	s := testStore(t, noMonitor)
	wf := bigWorkflow("huge", n)

	start := time.Now()
	must(t, s.Create(ctx, wf), "Create")
	created := time.Since(start)

	start = time.Now()
	got := getWF(t, s, "argo", "huge")
	read := time.Since(start)
	if len(got.Status.Nodes) != n {
		t.Fatalf("Get: %d nodes, want %d", len(got.Status.Nodes), n)
	}

	id := got.Status.Nodes["huge"].Children[n/2]
	node := got.Status.Nodes[id]
	node.Phase = v1alpha1.NodeFailed
	got.Status.Nodes[id] = node
	start = time.Now()
	must(t, s.UpdateWorkflowStatus(ctx, got, []string{id}), "UpdateWorkflowStatus")
	hot := time.Since(start)

	// Steady state: more one-node writes, warm.
	var hotMax time.Duration
	for i := range 20 {
		id := got.Status.Nodes["huge"].Children[i*997%(n-1)]
		node := got.Status.Nodes[id]
		node.Message = "again"
		got.Status.Nodes[id] = node
		start = time.Now()
		must(t, s.UpdateWorkflowStatus(ctx, got, []string{id}), "UpdateWorkflowStatus")
		hotMax = max(hotMax, time.Since(start))
	}

	got.Status.Message = "full write"
	start = time.Now()
	must(t, s.Update(ctx, got), "Update")
	full := time.Since(start)

	again := getWF(t, s, "argo", "huge")
	if len(again.Status.Nodes) != n || again.Status.Nodes[id].Phase != v1alpha1.NodeFailed || again.Status.Message != "full write" {
		t.Errorf("read back: %d nodes, phase %q, message %q", len(again.Status.Nodes), again.Status.Nodes[id].Phase, again.Status.Message)
	}
	if d := diffJSON(t, got, again); d != "" {
		t.Errorf("read back differs (-written +read):\n%.2000s", d)
	}
	t.Logf("%d nodes: create %v, get %v, UpdateWorkflowStatus(1 node) first %v then at most %v, full Update %v",
		n, created, read, hot, hotMax, full)
}
