package controller

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/runtime/local"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// What a start makes of the journal the previous process left: which
// workflows it quarantines, and the counts it carries on.
func TestOpenJournal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		left    string // the file as the previous process left it; "" none
		wantQ   []types.UID
		wantNow string // the file this start writes
	}{
		{name: "clean stop or first start", left: "", wantNow: `{}`},
		{name: "crash with nothing busy forgets every count",
			left: `{"crashes":[{"uid":"a","namespace":"ns","name":"a","crashes":2}]}`, wantNow: `{}`},
		{name: "first crash counts one",
			left:    `{"busy":[{"uid":"a","namespace":"ns","name":"a","busySince":"2026-01-01T00:00:00Z"}]}`,
			wantNow: `{"crashes":[{"uid":"a","namespace":"ns","name":"a","crashes":1}]}`},
		{name: "a count goes on only for the busy ones",
			left: `{"crashes":[{"uid":"a","namespace":"ns","name":"a","crashes":1},{"uid":"b","namespace":"ns","name":"b","crashes":2}],
			        "busy":[{"uid":"a","namespace":"ns","name":"a"}]}`,
			wantNow: `{"crashes":[{"uid":"a","namespace":"ns","name":"a","crashes":2}]}`},
		{name: "the third consecutive crash quarantines",
			left: `{"crashes":[{"uid":"a","namespace":"ns","name":"a","crashes":2}],
			        "busy":[{"uid":"a","namespace":"ns","name":"a"},{"uid":"c","namespace":"ns","name":"c"}]}`,
			wantQ:   []types.UID{"a"},
			wantNow: `{"crashes":[{"uid":"c","namespace":"ns","name":"c","crashes":1}]}`},
		{name: "a torn journal counts nothing", left: `{"busy":[{"ui`, wantNow: `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sub", "crash-journal.json")
			if tc.left != "" {
				if err := writeAtomic(path, []byte(tc.left)); err != nil {
					t.Fatal(err)
				}
			}
			j, q := openJournal(Quarantine{Journal: path, After: 3}, slog.New(slog.DiscardHandler))
			var gotQ []types.UID
			for uid, msg := range q {
				gotQ = append(gotQ, uid)
				if want := "quarantined: the server stopped abnormally 3 times in a row while reconciling this workflow " +
					"(limits.quarantineAfterCrashes: 3)"; msg != want {
					t.Errorf("message %q, want %q", msg, want)
				}
			}
			if diff := cmp.Diff(tc.wantQ, gotQ); diff != "" {
				t.Errorf("quarantined (-want +got):\n%s", diff)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(data)); got != tc.wantNow {
				t.Errorf("journal now %s, want %s", got, tc.wantNow)
			}
			j.close()
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("a clean stop left the journal: %v", err)
			}
		})
	}
}

// A workflow busy in each of three consecutive crashes is quarantined on
// the next start: it ends Error with a message that says so and is not
// reconciled again, and a new workflow runs to Succeeded. Each crash is
// simulated by putting back the journal as the process had it while it
// was busy (a SIGKILL leaves it so; the clean stop of the test removes it).
func TestQuarantineAfterConsecutiveCrashes(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "crash-journal.json")
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// It has had its first pass: its suspend node is Running.
	poison := workflow(t, `
metadata: {name: poison}
spec:
  entrypoint: main
  templates:
  - name: main
    suspend: {}
`)
	if err := st.Create(context.Background(), poison); err != nil {
		t.Fatal(err)
	}
	res, err := engine.Reconcile(engine.Snapshot{Workflow: poison}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	poison.Status = res.Status
	if err := st.UpdateWorkflowStatus(context.Background(), poison, res.Changed); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	var left journalFile
	for crash := 1; crash <= 3; crash++ {
		data := runUntilJournaled(t, dir, journal, "poison")
		if err := os.WriteFile(journal, data, 0o600); err != nil {
			t.Fatal(err)
		}
		left = journalFile{}
		if err := json.Unmarshal(data, &left); err != nil {
			t.Fatal(err)
		}
	}
	if len(left.Crashes) != 1 || left.Crashes[0].Name != "poison" || left.Crashes[0].Crashes != 2 {
		t.Fatalf("the journal before the last crash counts %+v, want poison at 2", left.Crashes)
	}

	c, st2 := newControllerAt(t, dir)
	c.faults.beforeReconcile = func(wf *v1alpha1.Workflow) {
		if wf.Name == "poison" {
			t.Error("the quarantined workflow was reconciled")
		}
	}
	m := newQuarantineManager(t, c, st2, journal)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	wf := waitPhase(t, st2, "poison", v1alpha1.WorkflowError)
	want := "quarantined: the server stopped abnormally 3 times in a row while reconciling this workflow (limits.quarantineAfterCrashes: 3)"
	if wf.Status.Message != want {
		t.Errorf("message %q, want %q", wf.Status.Message, want)
	}
	if n := wf.Status.Nodes[wf.Name]; n.Phase != v1alpha1.NodeError {
		t.Errorf("the suspend node is %s, want Error", n.Phase)
	}
	if err := st2.Create(context.Background(), workflow(t, `
metadata: {name: hello}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [echo, hello]}
`)); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, st2, "hello", v1alpha1.WorkflowSucceeded)
	cancel()
	<-done
	if _, err := os.Stat(journal); !os.IsNotExist(err) {
		t.Errorf("a clean stop left the journal: %v", err)
	}
}

// runUntilJournaled runs a Manager on dir whose passes over the workflow
// name are slow, until the watchdog journals it busy; it returns the
// journal as it was then, and stops the Manager cleanly.
func runUntilJournaled(t *testing.T, dir, journal, name string) []byte {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := local.New(local.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Store: st, Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	// The pass stays busy until the journal has been seen (or a bound), so
	// that a slow machine cannot let it finish before the watchdog looks.
	seen := make(chan struct{})
	c.faults.beforeReconcile = func(wf *v1alpha1.Workflow) {
		if wf.Name == name {
			select {
			case <-seen:
			case <-time.After(15 * time.Second):
			}
		}
	}
	m := newQuarantineManager(t, c, st, journal)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	// start is taken before the Manager runs: its pass may begin at once.
	start := time.Now()
	go func() { _ = m.Run(ctx); close(done) }()
	defer func() {
		close(seen)
		cancel()
		<-done
		_ = rt.Close()
		_ = st.Close()
	}()
	deadline := start.Add(10 * time.Second)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(journal)
		var f journalFile
		// The file the previous "crash" left lists it too: wait for this process's.
		if json.Unmarshal(data, &f) == nil && len(f.Busy) == 1 && f.Busy[0].Name == name && !f.Busy[0].BusySince.Before(start) {
			return data
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s was never journaled busy", name)
	return nil
}

func newQuarantineManager(t *testing.T, c *Controller, st *sqlite.Store, journal string) *Manager {
	t.Helper()
	m, err := c.NewManager(st, func(string) engine.TemplateResolver { return nil })
	if err != nil {
		t.Fatal(err)
	}
	m.SetQuarantine(Quarantine{Journal: journal, After: 3})
	return m
}
