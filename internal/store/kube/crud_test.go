package kube_test

import (
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/kube"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestCRUDPerKind(t *testing.T) {
	c := newCluster(t)
	s := newStore(t, c, kube.Options{})
	ctx := ctxT(t)
	spec := newWorkflow("", "", nil).Spec
	suffix := randHex(3)
	tests := []struct {
		kind store.Kind
		obj  store.Object
	}{
		{store.KindWorkflow, &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "wf"}, Spec: spec}},
		{store.KindWorkflowTemplate, &v1alpha1.WorkflowTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "tmpl"}, Spec: spec}},
		{store.KindClusterWorkflowTemplate, &v1alpha1.ClusterWorkflowTemplate{ObjectMeta: metav1.ObjectMeta{Name: "braid-kst-cwt-" + suffix}, Spec: spec}},
		{store.KindCronWorkflow, &v1alpha1.CronWorkflow{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "cron"},
			Spec: v1alpha1.CronWorkflowSpec{Schedules: []string{"* * * * *"}, WorkflowSpec: spec}}},
		{store.KindWorkflowEventBinding, &v1alpha1.WorkflowEventBinding{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "wfeb"},
			Spec: v1alpha1.WorkflowEventBindingSpec{Event: v1alpha1.Event{Selector: "true"}}}},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			ns, name := tt.obj.GetNamespace(), tt.obj.GetName()
			if err := s.Create(ctx, tt.obj); err != nil {
				t.Fatalf("create: %v", err)
			}
			if tt.kind == store.KindClusterWorkflowTemplate {
				t.Cleanup(func() { _ = s.Delete(ctx, tt.kind, "", name) })
			}
			if tt.obj.GetUID() == "" || tt.obj.GetResourceVersion() == "" || tt.obj.GetCreationTimestamp().Time.IsZero() {
				t.Fatalf("create did not set metadata: %+v", tt.obj)
			}
			if err := s.Create(ctx, tt.obj.DeepCopyObject().(store.Object)); !errors.Is(err, store.ErrAlreadyExists) {
				t.Fatalf("second create: %v, want ErrAlreadyExists", err)
			}
			got, err := s.Get(ctx, tt.kind, ns, name)
			if err != nil {
				t.Fatalf("get after create: %v", err)
			}
			if got.GetUID() != tt.obj.GetUID() {
				t.Fatalf("get: uid %s, want %s", got.GetUID(), tt.obj.GetUID())
			}
			stale := got.DeepCopyObject().(store.Object)
			got.SetLabels(map[string]string{"x": "1"})
			if err := s.Update(ctx, got); err != nil {
				t.Fatalf("update: %v", err)
			}
			if got.GetResourceVersion() == stale.GetResourceVersion() {
				t.Fatal("update did not set a new resourceVersion")
			}
			stale.SetLabels(map[string]string{"x": "2"})
			if err := s.Update(ctx, stale); !errors.Is(err, store.ErrConflict) {
				t.Fatalf("update at a stale resourceVersion: %v, want ErrConflict", err)
			}
			again, err := s.Get(ctx, tt.kind, ns, name)
			if err != nil || again.GetLabels()["x"] != "1" || again.GetResourceVersion() != got.GetResourceVersion() {
				t.Fatalf("get after update: %v, labels %v rv %s (want %s)", err, labelsOf(again), rvOf(again), got.GetResourceVersion())
			}
			list, _, err := s.List(ctx, tt.kind, ns, store.ListOptions{FieldSelector: "metadata.name=" + name})
			if err != nil || len(list) != 1 || list[0].GetName() != name {
				t.Fatalf("list: %v, %d objects", err, len(list))
			}
			if err := s.Delete(ctx, tt.kind, ns, name); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if _, err := s.Get(ctx, tt.kind, ns, name); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("get after delete: %v, want ErrNotFound", err)
			}
			if err := s.Delete(ctx, tt.kind, ns, name); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("second delete: %v, want ErrNotFound", err)
			}
			if err := s.Update(ctx, got); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("update of a deleted object: %v, want ErrNotFound", err)
			}
		})
	}
}

func TestWrongScopeAndKind(t *testing.T) {
	c := newCluster(t)
	s := newStore(t, c, kube.Options{})
	ctx := ctxT(t)
	if err := s.Create(ctx, &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "x"}}); err == nil {
		t.Error("a workflow without a namespace was accepted")
	}
	if err := s.Create(ctx, &v1alpha1.ClusterWorkflowTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "x"}}); err == nil {
		t.Error("a cluster workflow template with a namespace was accepted")
	}
	if _, err := s.Get(ctx, "Pod", c.ns, "x"); err == nil {
		t.Error("an unknown kind was accepted")
	}
	if _, _, err := s.List(ctx, store.KindWorkflow, c.ns, store.ListOptions{FieldSelector: "spec.x=1"}); err == nil {
		t.Error("an unsupported field selector was accepted")
	}
}

func TestWatchEvents(t *testing.T) {
	c := newCluster(t)
	s := newStore(t, c, kube.Options{})
	ctx := ctxT(t)
	// Something that exists before the watch is not replayed.
	if err := s.Create(ctx, newWorkflow(c.ns, "before", nil)); err != nil {
		t.Fatal(err)
	}
	events, err := s.Watch(ctx, store.KindWorkflow, c.ns)
	if err != nil {
		t.Fatal(err)
	}
	wf := newWorkflow(c.ns, "watched", nil)
	w0 := s.Writes()
	if err := s.Create(ctx, wf); err != nil {
		t.Fatal(err)
	}
	if d := s.Writes() - w0; d != 1 {
		t.Fatalf("creating a workflow without status cost %d writes", d)
	}
	wf.Status.Phase = v1alpha1.WorkflowRunning
	wf.Status.Nodes = bigNodes(wf.Name, 3)
	if err := s.UpdateWorkflowStatus(ctx, wf, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, store.KindWorkflow, c.ns, wf.Name); err != nil {
		t.Fatal(err)
	}
	want := []store.EventType{store.Added, store.Modified, store.Deleted}
	for i, w := range want {
		ev, ok := <-events
		if !ok {
			t.Fatalf("event %d: channel closed", i)
		}
		got := ev.Object.(*v1alpha1.Workflow)
		if ev.Type != w || got.Name != "watched" {
			t.Fatalf("event %d: %s %s, want %s watched", i, ev.Type, got.Name, w)
		}
		if got.Status.Nodes != nil {
			t.Fatalf("event %d carries %d nodes; watch events come without nodes", i, len(got.Status.Nodes))
		}
		if w == store.Modified && got.Status.Phase != v1alpha1.WorkflowRunning {
			t.Fatalf("modified event: phase %q", got.Status.Phase)
		}
	}
	// Another namespace's events are not seen.
	other := newCluster(t)
	if err := s.Create(ctx, newWorkflow(other.ns, "elsewhere", nil)); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, newWorkflow(c.ns, "last", nil)); err != nil {
		t.Fatal(err)
	}
	if ev := <-events; ev.Object.GetName() != "last" {
		t.Fatalf("got %s %s, want ADDED last", ev.Type, ev.Object.GetName())
	}
}

func TestWatchSlowReaderIsDropped(t *testing.T) {
	c := newCluster(t)
	s := newStore(t, c, kube.Options{WatchBuffer: 2})
	ctx := ctxT(t)
	events, err := s.Watch(ctx, store.KindWorkflow, c.ns)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := s.Create(ctx, newWorkflow(c.ns, fmt.Sprintf("w%d", i), nil)); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for range events {
		n++
	}
	if n != 2 {
		t.Fatalf("a reader two events behind got %d events before the close, want 2", n)
	}
}

func labelsOf(o store.Object) map[string]string {
	if o == nil {
		return nil
	}
	return o.GetLabels()
}

func rvOf(o store.Object) string {
	if o == nil {
		return ""
	}
	return o.GetResourceVersion()
}

// TestNamespacedStore: a store limited to one namespace lists only that
// namespace's workflows and refuses calls naming another.
func TestNamespacedStore(t *testing.T) {
	mine, other := newCluster(t), newCluster(t)
	all := newStore(t, mine, kube.Options{})
	ctx := ctxT(t)
	for _, ns := range []string{mine.ns, other.ns} {
		if err := all.Create(ctx, newWorkflow(ns, "wf", nil)); err != nil {
			t.Fatal(err)
		}
	}
	s := newStore(t, mine, kube.Options{Namespace: mine.ns})
	objs, _, err := s.List(ctx, store.KindWorkflow, "", store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetNamespace() != mine.ns {
			t.Errorf("listed %s/%s outside %s", o.GetNamespace(), o.GetName(), mine.ns)
		}
	}
	if len(objs) != 1 {
		t.Errorf("listed %d workflows, want 1", len(objs))
	}
	if _, err := s.Get(ctx, store.KindWorkflow, mine.ns, "wf"); err != nil {
		t.Errorf("get in the managed namespace: %v", err)
	}
	calls := map[string]error{
		"get":    func() error { _, err := s.Get(ctx, store.KindWorkflow, other.ns, "wf"); return err }(),
		"list":   func() error { _, _, err := s.List(ctx, store.KindWorkflow, other.ns, store.ListOptions{}); return err }(),
		"create": s.Create(ctx, newWorkflow(other.ns, "wf2", nil)),
		"delete": s.Delete(ctx, store.KindWorkflow, other.ns, "wf"),
		"cluster kind": func() error {
			_, _, err := s.List(ctx, store.KindClusterWorkflowTemplate, "", store.ListOptions{})
			return err
		}(),
	}
	for name, err := range calls {
		if !errors.Is(err, store.ErrForbidden) {
			t.Errorf("%s in another namespace: %v, want ErrForbidden", name, err)
		}
	}
}
