package sqlite

import (
	"context"
	"errors"
	"testing"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
)

// fixture is one object of each kind, with a way to change its spec and a
// way to change only its metadata or status.
type fixture struct {
	kind       store.Kind
	namespaced bool
	new        func(t *testing.T) store.Object
	editSpec   func(store.Object)
	editOther  func(store.Object)
}

func fixtures() []fixture {
	return []fixture{{
		kind: store.KindWorkflow, namespaced: true,
		new: func(t *testing.T) store.Object {
			return mustParse[v1alpha1.Workflow](t, `
metadata: {name: hello, namespace: argo, labels: {app: hello}}
spec:
  entrypoint: main
  arguments: {parameters: [{name: who, value: world}]}
  templates:
  - name: main
    container: {image: alpine, command: [echo, "{{workflow.parameters.who}}"]}
status:
  phase: Running
  nodes:
    hello: {id: hello, name: hello, type: Pod, phase: Running, templateName: main}
`)
		},
		editSpec:  func(o store.Object) { o.(*v1alpha1.Workflow).Spec.Entrypoint = "other" },
		editOther: func(o store.Object) { o.(*v1alpha1.Workflow).Status.Message = "working" },
	}, {
		kind: store.KindWorkflowTemplate, namespaced: true,
		new: func(t *testing.T) store.Object {
			return mustParse[v1alpha1.WorkflowTemplate](t, `
metadata: {name: tmpl, namespace: argo}
spec:
  templates:
  - name: say
    inputs: {parameters: [{name: msg}]}
    container: {image: alpine, command: [echo, "{{inputs.parameters.msg}}"]}
`)
		},
		editSpec:  func(o store.Object) { o.(*v1alpha1.WorkflowTemplate).Spec.Entrypoint = "say" },
		editOther: func(o store.Object) { o.SetAnnotations(map[string]string{"note": "x"}) },
	}, {
		kind: store.KindClusterWorkflowTemplate,
		new: func(t *testing.T) store.Object {
			return mustParse[v1alpha1.ClusterWorkflowTemplate](t, `
metadata: {name: ctmpl}
spec:
  templates:
  - name: say
    script: {image: python, source: "print(1)"}
`)
		},
		editSpec:  func(o store.Object) { o.(*v1alpha1.ClusterWorkflowTemplate).Spec.Entrypoint = "say" },
		editOther: func(o store.Object) { o.SetLabels(map[string]string{"tier": "gold"}) },
	}, {
		kind: store.KindCronWorkflow, namespaced: true,
		new: func(t *testing.T) store.Object {
			return mustParse[v1alpha1.CronWorkflow](t, `
metadata: {name: nightly, namespace: argo}
spec:
  schedules: ["0 2 * * *"]
  concurrencyPolicy: Forbid
  workflowSpec:
    entrypoint: main
    templates: [{name: main, container: {image: alpine}}]
status: {phase: Active}
`)
		},
		editSpec:  func(o store.Object) { o.(*v1alpha1.CronWorkflow).Spec.Schedules = []string{"0 3 * * *"} },
		editOther: func(o store.Object) { o.(*v1alpha1.CronWorkflow).Status.Succeeded = 7 },
	}, {
		kind: store.KindWorkflowEventBinding, namespaced: true,
		new: func(t *testing.T) store.Object {
			return mustParse[v1alpha1.WorkflowEventBinding](t, `
metadata: {name: on-push, namespace: argo}
spec:
  event: {selector: "payload.ref == 'main'"}
  submit:
    workflowTemplateRef: {name: tmpl}
`)
		},
		editSpec:  func(o store.Object) { o.(*v1alpha1.WorkflowEventBinding).Spec.Event.Selector = "true" },
		editOther: func(o store.Object) { o.SetLabels(map[string]string{"x": "y"}) },
	}}
}

func TestCRUD(t *testing.T) {
	for _, f := range fixtures() {
		t.Run(string(f.kind), func(t *testing.T) {
			ctx := context.Background()
			s := testStore(t)
			obj := f.new(t)
			ns, name := obj.GetNamespace(), obj.GetName()

			must(t, s.Create(ctx, obj), "Create")
			if obj.GetUID() == "" || obj.GetResourceVersion() != "1" || obj.GetGeneration() != 1 || obj.GetCreationTimestamp().Time.IsZero() {
				t.Fatalf("Create set uid %q rv %q generation %d created %v", obj.GetUID(), obj.GetResourceVersion(), obj.GetGeneration(), obj.GetCreationTimestamp())
			}
			if got := obj.GetCreationTimestamp().Time; got.Nanosecond() != 0 {
				t.Errorf("creationTimestamp %v has sub-second precision the API cannot carry", got)
			}

			got, err := s.Get(ctx, f.kind, ns, name)
			must(t, err, "Get")
			if d := diffJSON(t, obj, got); d != "" {
				t.Errorf("Get after Create (-created +got):\n%s", d)
			}
			if gvk := got.GetObjectKind().GroupVersionKind(); gvk.Kind != string(f.kind) || gvk.GroupVersion().String() != v1alpha1.APIVersion {
				t.Errorf("Get: TypeMeta %v", gvk)
			}
			if got == obj {
				t.Errorf("Get returned the caller's object, want a fresh one")
			}

			isErr(t, s.Create(ctx, f.new(t)), store.ErrAlreadyExists, "Create again")

			// A metadata or status change keeps the generation; a spec change bumps it.
			f.editOther(got)
			must(t, s.Update(ctx, got), "Update (status/metadata)")
			if got.GetResourceVersion() != "2" || got.GetGeneration() != 1 {
				t.Errorf("after status update: rv %q generation %d, want 2 and 1", got.GetResourceVersion(), got.GetGeneration())
			}
			f.editSpec(got)
			must(t, s.Update(ctx, got), "Update (spec)")
			if got.GetResourceVersion() != "3" || got.GetGeneration() != 2 {
				t.Errorf("after spec update: rv %q generation %d, want 3 and 2", got.GetResourceVersion(), got.GetGeneration())
			}
			again, err := s.Get(ctx, f.kind, ns, name)
			must(t, err, "Get after Update")
			if d := diffJSON(t, got, again); d != "" {
				t.Errorf("Get after Update (-updated +got):\n%s", d)
			}

			// The first reader's copy is stale now.
			isErr(t, s.Update(ctx, obj), store.ErrConflict, "Update with stale resourceVersion")
			noRV := again.DeepCopyObject().(store.Object)
			noRV.SetResourceVersion("")
			isErr(t, s.Update(ctx, noRV), store.ErrConflict, "Update without resourceVersion")
			otherUID := again.DeepCopyObject().(store.Object)
			otherUID.SetUID(types.UID("not-the-stored-uid"))
			isErr(t, s.Update(ctx, otherUID), store.ErrConflict, "Update with another uid")

			must(t, s.Delete(ctx, f.kind, ns, name), "Delete")
			_, err = s.Get(ctx, f.kind, ns, name)
			isErr(t, err, store.ErrNotFound, "Get after Delete")
			isErr(t, s.Delete(ctx, f.kind, ns, name), store.ErrNotFound, "Delete again")
			isErr(t, s.Update(ctx, again), store.ErrNotFound, "Update after Delete")

			// The name is free again, and the new object is a new one.
			fresh := f.new(t)
			must(t, s.Create(ctx, fresh), "Create after Delete")
			if fresh.GetUID() == again.GetUID() {
				t.Errorf("re-created object kept uid %s", fresh.GetUID())
			}
			isErr(t, s.Update(ctx, again), store.ErrConflict, "Update of the deleted incarnation")
		})
	}
}

func TestCreateKeepsGivenUID(t *testing.T) {
	s := testStore(t)
	wf := &v1alpha1.Workflow{}
	wf.Name, wf.Namespace, wf.UID = "w", "argo", "0b7c3f38-0000-4000-8000-000000000001"
	must(t, s.Create(context.Background(), wf), "Create")
	got, err := s.Get(context.Background(), store.KindWorkflow, "argo", "w")
	must(t, err, "Get")
	if got.GetUID() != wf.UID {
		t.Errorf("uid %q, want %q", got.GetUID(), wf.UID)
	}
}

func TestClusterScopedIgnoresNamespace(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	c := &v1alpha1.ClusterWorkflowTemplate{}
	c.Name, c.Namespace = "c", "some-namespace"
	must(t, s.Create(ctx, c), "Create")
	if c.Namespace != "" {
		t.Errorf("namespace %q kept on a cluster-scoped object", c.Namespace)
	}
	for _, ns := range []string{"", "argo"} {
		if _, err := s.Get(ctx, store.KindClusterWorkflowTemplate, ns, "c"); err != nil {
			t.Errorf("Get in namespace %q: %v", ns, err)
		}
	}
	must(t, s.Delete(ctx, store.KindClusterWorkflowTemplate, "elsewhere", "c"), "Delete")
}

func TestInvalidCalls(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	noName := &v1alpha1.Workflow{}
	noName.Namespace, noName.GenerateName = "argo", "hello-"
	noNS := &v1alpha1.WorkflowTemplate{}
	noNS.Name = "t"
	tests := []struct {
		name string
		err  error
	}{
		{"create without name", s.Create(ctx, noName)},
		{"create without namespace", s.Create(ctx, noNS)},
		{"get unknown kind", func() error { _, err := s.Get(ctx, "Pod", "argo", "x"); return err }()},
		{"list unknown kind", func() error { _, _, err := s.List(ctx, "Pod", "", store.ListOptions{}); return err }()},
		{"delete unknown kind", s.Delete(ctx, "Pod", "argo", "x")},
		{"watch unknown kind", func() error { _, err := s.Watch(ctx, "Pod", ""); return err }()},
		{"update nil workflow", s.UpdateWorkflowStatus(ctx, nil, nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isErr(t, tt.err, ErrInvalid, tt.name)
		})
	}
}

func TestTxRollback(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	existing := &v1alpha1.Workflow{}
	existing.Name, existing.Namespace = "existing", "argo"
	must(t, s.Create(ctx, existing), "Create")

	created := &v1alpha1.Workflow{}
	created.Name, created.Namespace = "new", "argo"
	updated := existing.DeepCopy()
	updated.Status.Phase = v1alpha1.WorkflowRunning
	boom := errors.New("boom")
	err := s.Tx(ctx, func(tx *Tx) error {
		must(t, tx.Create(created), "tx.Create")
		must(t, tx.Update(updated), "tx.Update")
		got, err := tx.Get(store.KindWorkflow, "argo", "new")
		must(t, err, "tx.Get sees its own write")
		if got.GetResourceVersion() != "1" {
			t.Errorf("tx.Get rv %q", got.GetResourceVersion())
		}
		return boom
	})
	isErr(t, err, boom, "Tx")
	_, err = s.Get(ctx, store.KindWorkflow, "argo", "new")
	isErr(t, err, store.ErrNotFound, "Get of a rolled-back create")
	if created.UID != "" || created.ResourceVersion != "" || !created.CreationTimestamp.IsZero() {
		t.Errorf("rollback left metadata on the created object: uid %q rv %q", created.UID, created.ResourceVersion)
	}
	if updated.ResourceVersion != "1" {
		t.Errorf("rollback left rv %q on the updated object, want 1", updated.ResourceVersion)
	}
	must(t, s.Update(ctx, updated), "Update after rollback") // its rv is still valid

	// A panic rolls back too, and keeps panicking.
	func() {
		defer func() {
			if recover() == nil {
				t.Errorf("panic was swallowed")
			}
		}()
		_ = s.Tx(ctx, func(tx *Tx) error {
			must(t, tx.Create(created), "tx.Create")
			panic("boom")
		})
	}()
	_, err = s.Get(ctx, store.KindWorkflow, "argo", "new")
	isErr(t, err, store.ErrNotFound, "Get after a panicking Tx")
	must(t, s.Create(ctx, created), "Create after panic: the write lock was released")
}

func TestClosed(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	must(t, s.Close(), "Close")
	must(t, s.Close(), "Close again")
	wf := &v1alpha1.Workflow{}
	wf.Name, wf.Namespace = "w", "argo"
	isErr(t, s.Create(ctx, wf), ErrClosed, "Create after Close")
	_, err := s.Get(ctx, store.KindWorkflow, "argo", "w")
	isErr(t, err, ErrClosed, "Get after Close")
	_, _, err = s.List(ctx, store.KindWorkflow, "", store.ListOptions{})
	isErr(t, err, ErrClosed, "List after Close")
	_, err = s.Watch(ctx, store.KindWorkflow, "")
	isErr(t, err, ErrClosed, "Watch after Close")
}
