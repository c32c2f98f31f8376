package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// openStore is a real SQLite store in the test's directory holding one
// CronWorkflow, argo/c.
func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	cw := &v1alpha1.CronWorkflow{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: "c"},
		Spec: v1alpha1.CronWorkflowSpec{Schedules: []string{"* * * * *"}}}
	if err := st.Create(ctx, cw); err != nil {
		t.Fatal(err)
	}
	return st
}

func getCron(st *sqlite.Store) func(context.Context) (*v1alpha1.CronWorkflow, error) {
	return func(ctx context.Context) (*v1alpha1.CronWorkflow, error) {
		o, err := st.Get(ctx, store.KindCronWorkflow, "argo", "c")
		if err != nil {
			return nil, err
		}
		cw, ok := o.(*v1alpha1.CronWorkflow)
		if !ok {
			return nil, fmt.Errorf("got a %T", o)
		}
		return cw, nil
	}
}

func updateCron(st *sqlite.Store) func(context.Context, *v1alpha1.CronWorkflow) error {
	return func(ctx context.Context, cw *v1alpha1.CronWorkflow) error { return st.Update(ctx, cw) }
}

// A write that races with another is done again on a fresh read, and the
// other writer's change survives.
func TestModifyRetriesAConflict(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	tries := 0
	got, err := store.Modify(ctx, 3, getCron(st), func(cw *v1alpha1.CronWorkflow) (*v1alpha1.CronWorkflow, bool, error) {
		tries++
		if tries == 1 { // another writer gets there first
			other, err := getCron(st)(ctx)
			if err != nil {
				return nil, false, err
			}
			other.Spec.Timezone = "UTC"
			if err := st.Update(ctx, other); err != nil {
				return nil, false, err
			}
		}
		cw.Spec.Suspend = new(bool)
		*cw.Spec.Suspend = true
		return cw, true, nil
	}, updateCron(st))
	if err != nil {
		t.Fatal(err)
	}
	if tries != 2 {
		t.Errorf("change ran %d times, want 2", tries)
	}
	stored, err := getCron(st)(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Spec.Suspend == nil || !*stored.Spec.Suspend || stored.Spec.Timezone != "UTC" {
		t.Errorf("stored spec %+v: want both writers' changes", stored.Spec)
	}
	if got.ResourceVersion != stored.ResourceVersion {
		t.Errorf("returned resourceVersion %q, stored %q", got.ResourceVersion, stored.ResourceVersion)
	}
}

// When every attempt conflicts, Modify stops after its bound with an error
// that says so and wraps ErrConflict.
func TestModifyGivesUp(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	for _, tt := range []struct{ attempts, want int }{{4, 4}, {0, store.DefaultModifyAttempts}} {
		tries := 0
		_, err := store.Modify(ctx, tt.attempts, getCron(st), func(cw *v1alpha1.CronWorkflow) (*v1alpha1.CronWorkflow, bool, error) {
			tries++
			cw.ResourceVersion = "999999" // never the stored one
			return cw, true, nil
		}, updateCron(st))
		if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), fmt.Sprintf("gave up after %d attempts", tt.want)) {
			t.Errorf("attempts %d: err = %v", tt.attempts, err)
		}
		if tries != tt.want {
			t.Errorf("attempts %d: change ran %d times, want %d", tt.attempts, tries, tt.want)
		}
	}
}

// Nothing to write, and the errors of get, change and update, end Modify
// at once, the errors as they are.
func TestModifyStops(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	before, err := getCron(st)(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := store.Modify(ctx, 3, getCron(st), func(cw *v1alpha1.CronWorkflow) (*v1alpha1.CronWorkflow, bool, error) {
		return cw, false, nil
	}, func(context.Context, *v1alpha1.CronWorkflow) error {
		t.Error("update called with nothing to write")
		return nil
	})
	if err != nil || got.ResourceVersion != before.ResourceVersion {
		t.Errorf("no change: got %v, %v", got, err)
	}

	boom := errors.New("boom")
	tries := 0
	count := func(cw *v1alpha1.CronWorkflow) (*v1alpha1.CronWorkflow, bool, error) { tries++; return cw, true, nil }
	tests := []struct {
		name   string
		get    func(context.Context) (*v1alpha1.CronWorkflow, error)
		change func(*v1alpha1.CronWorkflow) (*v1alpha1.CronWorkflow, bool, error)
		update func(context.Context, *v1alpha1.CronWorkflow) error
		want   error
	}{
		{"get", func(context.Context) (*v1alpha1.CronWorkflow, error) { return nil, store.ErrNotFound }, count, updateCron(st), store.ErrNotFound},
		{"change", getCron(st), func(*v1alpha1.CronWorkflow) (*v1alpha1.CronWorkflow, bool, error) { tries++; return nil, false, boom }, updateCron(st), boom},
		{"update", getCron(st), count, func(context.Context, *v1alpha1.CronWorkflow) error { return boom }, boom},
	}
	for _, tt := range tests {
		tries = 0
		if _, err := store.Modify(ctx, 3, tt.get, tt.change, tt.update); err != tt.want {
			t.Errorf("%s: err = %v, want %v itself", tt.name, err, tt.want)
		}
		if tries > 1 {
			t.Errorf("%s: change ran %d times", tt.name, tries)
		}
	}
}
