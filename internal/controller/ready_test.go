package controller

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The Manager is Ready only once every workflow it found unfinished at
// start has had its recovery and first reconcile; a workflow submitted
// later does not hold it back.
func TestReadyAfterRecovery(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const unfinished = 5
	for i := range unfinished {
		if err := st.Create(context.Background(), workflow(t, fmt.Sprintf(`
metadata: {name: old-%d}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [echo, hi]}
`, i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	c, st2 := newControllerAt(t, dir)
	release := make(chan struct{})
	c.faults.beforeReconcile = func(wf *v1alpha1.Workflow) {
		if strings.HasPrefix(wf.Name, "old-") {
			<-release // their first reconcile waits
		}
	}
	m, err := c.NewManager(st2, func(string) engine.TemplateResolver { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Ready(); err == nil {
		t.Fatal("Ready before Run")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	t.Cleanup(func() { open(); cancel(); <-done })

	want := fmt.Sprintf("recovering %d workflows", unfinished)
	waitReady(t, m, want)
	if err := st2.Create(context.Background(), workflow(t, `
metadata: {name: new}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [echo, hi]}
`)); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, st2, "new", v1alpha1.WorkflowSucceeded)
	if err := m.Ready(); err == nil || err.Error() != want {
		t.Fatalf("Ready after a new workflow: %v, want %q", err, want)
	}
	open()
	waitReady(t, m, "")
	for i := range unfinished {
		waitPhase(t, st2, fmt.Sprintf("old-%d", i), v1alpha1.WorkflowSucceeded)
	}
}

// An empty store is Ready as soon as it is listed.
func TestReadyEmpty(t *testing.T) {
	_, m := startManagerAt(t, t.TempDir())
	waitReady(t, m, "")
}

// waitReady polls m.Ready until its answer is want ("" for ready).
func waitReady(t *testing.T, m *Manager, want string) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, "Manager.Ready", func() error {
		got := ""
		if err := m.Ready(); err != nil {
			got = err.Error()
		}
		if got != want {
			return fmt.Errorf("Ready() = %q, want %q", got, want)
		}
		return nil
	})
}
