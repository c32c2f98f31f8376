package controller

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Store is what the controller needs from a store.
type Store interface {
	Create(ctx context.Context, obj store.Object) error
	Update(ctx context.Context, obj store.Object) error
	// UpdateWorkflowStatus writes the workflow's status, and of its nodes only
	// those listed, under optimistic concurrency; it sets the new resourceVersion.
	UpdateWorkflowStatus(ctx context.Context, wf *v1alpha1.Workflow, changedNodes []string) error
}

// Runtime is what the controller needs from a runtime: start and kill
// runs, hear about them, and, after a restart, ask what became of one.
type Runtime interface {
	Start(ctx context.Context, run runtime.Run) error
	Kill(ctx context.Context, runID string) error
	Events() <-chan runtime.StepEvent
	Status(ctx context.Context, runID string) (runtime.StepEvent, bool, error)
}

var (
	_ Runtime = runtime.Runtime(nil)
)

// Options configure a Controller.
type Options struct {
	Store   Store
	Runtime Runtime
	// Hooks are the runtime's workflow hooks (hooks.go); nil: none.
	Hooks WorkflowHooks
	// Archive keeps completed workflows in the archive; nil: no archive.
	Archive Archiver
	// Logger receives the controller's log, each workflow's with its key;
	// nil: slog.Default(). Nothing is discarded.
	Logger *slog.Logger
	Clock  func() time.Time
	Limits engine.Limits
	// Repositories are the artifact repositories; zero: the local file
	// repository for every workflow.
	Repositories artifact.Repositories
	// Artifacts are the drivers artifact garbage collection deletes with;
	// nil: no artifact GC.
	Artifacts *artifact.Drivers
	// Memos keeps the memoization caches (template memoize); nil: every
	// look-up misses and nothing is saved.
	Memos MemoStore
	// MemoPruner deletes the memoization entries nobody used for a while;
	// nil: they are kept.
	MemoPruner MemoPruner
	// Retention is the retentionPolicy the Manager applies (gc.go).
	Retention Retention
	// WakeAt returns a channel that receives once Clock reaches t; nil: a
	// real timer. Tests that inject Clock inject it too.
	WakeAt func(t time.Time) <-chan time.Time
	// Admission configures synchronization and workflow parallelism
	// (admission.go); zero: mutexes only, no bound.
	Admission Admission
	// WorkflowDefaults is merged under every workflow that starts
	// (defaults.go); nil: none.
	WorkflowDefaults *v1alpha1.Workflow
	// ArchiveTTL deletes archived workflows that finished longer ago than
	// this (persistence.archiveTTL, archivettl.go); 0 keeps them.
	ArchiveTTL time.Duration
	// ForgetWorkflow removes what the runtime keeps of a workflow that the
	// archive TTL took and the live store does not hold (its step logs);
	// nil keeps it.
	ForgetWorkflow func(namespace, name string) error
}

// Controller drives workflows through the engine.
type Controller struct {
	store     Store
	rt        Runtime
	hooks     WorkflowHooks // may be nil
	archive   Archiver      // may be nil
	pruner    MemoPruner    // may be nil
	log       *slog.Logger
	now       func() time.Time
	limits    engine.Limits
	repos     artifact.Repositories
	artifacts *artifact.Drivers
	memos     MemoStore // memoization caches (memo.go); may be nil
	// retention and wake serve workflow garbage collection (gc.go).
	retention  Retention
	wake       func(t time.Time) <-chan time.Time
	adm        *admission // locks and parallelism (admission.go)
	defaults   *v1alpha1.Workflow
	archiveTTL time.Duration
	forget     func(namespace, name string) error
	faults     faults // recovered panics (recover.go)
}

// New returns a Controller. Store and Runtime are required.
func New(o Options) (*Controller, error) {
	if o.Store == nil || o.Runtime == nil {
		return nil, fmt.Errorf("controller: a store and a runtime are required")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return &Controller{store: o.Store, rt: o.Runtime, hooks: o.Hooks, archive: o.Archive, pruner: o.MemoPruner, log: o.Logger, now: o.Clock, limits: o.Limits, repos: o.Repositories, artifacts: o.Artifacts,
		retention: o.Retention, wake: o.WakeAt, memos: o.Memos, adm: newAdmission(o.Admission),
		defaults: o.WorkflowDefaults, archiveTTL: o.ArchiveTTL, forget: o.ForgetWorkflow}, nil
}

// wakeAt returns a channel that receives once the clock reaches t.
func (c *Controller) wakeAt(t time.Time) <-chan time.Time {
	if c.wake != nil {
		return c.wake(t)
	}
	return time.After(t.Sub(c.now()))
}

// RunID is the runtime's ID for a workflow's node. A manual retry (braid
// retry) creates again nodes with the IDs they had before; its generation
// gives their runs new IDs.
func RunID(wf *v1alpha1.Workflow, nodeID string) string {
	id := string(wf.UID) + "-" + nodeID
	if g := wf.Annotations[v1alpha1.AnnotationRetryGeneration]; g != "" && g != "0" {
		id += "-r" + g
	}
	return id
}
