package engine

import (
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// checkedReconcile is Reconcile with the engine's contract checked: the
// same Snapshot and now give the same Result, lock and memo decisions
// included. It reconciles a deep copy first, then s itself, and fails t
// when the two Results differ. Every table test and every corpus example
// goes through it (the test drivers call it for each pass), so the
// property holds for each pass they make.
func checkedReconcile(t testing.TB, s Snapshot, now time.Time) (Result, error) {
	t.Helper()
	if s.Workflow == nil {
		return Reconcile(s, now)
	}
	twin := s
	twin.Workflow = s.Workflow.DeepCopy()
	twin.Results = maps.Clone(s.Results)
	twin.Relaunch = maps.Clone(s.Relaunch)
	twin.Memos = maps.Clone(s.Memos)
	if s.Locks != nil {
		twin.Locks = s.Locks.Clone()
	}
	want, wantErr := Reconcile(twin, now)
	got, err := Reconcile(s, now)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("Reconcile is not deterministic: error %v, then %v", wantErr, err)
	}
	if diff := resultDiff(want, got); diff != "" {
		t.Fatalf("Reconcile over the same Snapshot and now gave another Result (-first +second):\n%s", diff)
	}
	return got, err
}

func resultDiff(a, b Result) string {
	return cmp.Diff(a, b, cmpopts.EquateEmpty(), cmp.Comparer(func(x, y resource.Quantity) bool { return x.Cmp(y) == 0 }))
}

// flipResolver answers templateRef with a different template each call:
// a snapshot that is not plain data.
type flipResolver struct{ calls int }

func (f *flipResolver) Template(ref v1alpha1.TemplateRef) (*v1alpha1.Template, error) {
	f.calls++
	return &v1alpha1.Template{Name: ref.Template, Container: &corev1.Container{Image: "busybox", Args: []string{strconv.Itoa(f.calls)}}}, nil
}

// The property check itself finds a snapshot that answers differently the
// second time.
func TestResultDiffCatchesImpureSnapshot(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: flip}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, templateRef: {name: lib, template: t}}
`)
	s := Snapshot{Workflow: d.wf, Templates: &flipResolver{}}
	twin := s
	twin.Workflow = s.Workflow.DeepCopy()
	a, _ := Reconcile(twin, d.now)
	b, _ := Reconcile(s, d.now)
	if resultDiff(a, b) == "" {
		t.Fatal("two passes over a resolver that changes its answer gave the same Result")
	}
}
