package controller

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// WatchStore is what the Manager needs from a store: the controller's
// writes, plus reads and a watch of the workflows.
type WatchStore interface {
	Store
	Get(ctx context.Context, kind store.Kind, namespace, name string) (store.Object, error)
	Delete(ctx context.Context, kind store.Kind, namespace, name string) error
	List(ctx context.Context, kind store.Kind, namespace string, opts store.ListOptions) ([]store.Object, string, error)
	Watch(ctx context.Context, kind store.Kind, namespace string) (<-chan store.Event, error)
}

// Templates returns the resolver for templateRefs of workflows in a namespace.
type Templates func(namespace string) engine.TemplateResolver

// Manager runs every workflow of a store that is not completed: those there
// at start (after a crash too) and those created or changed later (an API
// submit, a retry). Many workflows share one runtime; the Manager routes
// each step event to its workflow's driver.
type Manager struct {
	c         *Controller
	st        WatchStore
	rt        Runtime
	templates Templates

	mu      sync.Mutex
	handles map[types.UID]*handle // the driver of each workflow being driven, by UID
	wg      sync.WaitGroup
	// archiveq feeds the archiver, which archives completed workflows in
	// batches (one commit for many).
	archiveq chan *v1alpha1.Workflow
	// gc deletes completed workflows by ttlStrategy and retention (gc.go).
	gc *collector
	// quarantine is crash quarantine's configuration; quarantined, set
	// once by Run before any driver starts, maps the workflows it ends
	// Error to their message (quarantine.go).
	quarantine  Quarantine
	quarantined map[types.UID]string
	// listing is true on the watch goroutine during the first listing;
	// listed is set after it, and recovering counts the drivers that
	// listing started and that have not yet settled (ready.go).
	listing    bool
	listed     atomic.Bool
	recovering atomic.Int64
	// recoverySlots bounds how many drivers of the start-up recovery load
	// their workflow and reconcile it for the first time at once (ready.go).
	recoverySlots chan struct{}
}

// handle is the Manager's side of one running driver.
type handle struct {
	key     string
	st      WatchStore
	events  *runtime.Queue
	changes chan struct{} // capacity 1
	cancel  context.CancelFunc
	deleted atomic.Bool
	// storeRV is the newest resourceVersion the watch reported, written is
	// the newest the driver wrote: the driver reloads only when the store
	// has something newer than what it wrote.
	storeRV atomic.Int64
	written atomic.Int64
	// busySince is when the driver became busy (UnixNano), 0 when it is
	// not; settle ends its part in the start-up recovery, or is nil
	// (quarantine.go, ready.go).
	busySince atomic.Int64
	settle    func()
}

func (h *handle) wrote(rv string) { h.written.Store(parseRV(rv)) }
func (h *handle) stale() bool     { return h.storeRV.Load() > h.written.Load() }

func (h *handle) notify(rv string) {
	if v := parseRV(rv); v > h.storeRV.Load() {
		h.storeRV.Store(v)
	}
	select {
	case h.changes <- struct{}{}:
	default:
	}
}

func parseRV(rv string) int64 {
	v, _ := strconv.ParseInt(rv, 10, 64)
	return v
}

// NewManager returns a Manager on c's runtime and the given store, which
// must be the one c writes to.
func (c *Controller) NewManager(st WatchStore, templates Templates) (*Manager, error) {
	return &Manager{c: c, st: st, rt: c.rt, templates: templates, handles: map[types.UID]*handle{},
		archiveq: make(chan *v1alpha1.Workflow, archiveBatch), gc: c.newCollector(st),
		recoverySlots: make(chan struct{}, recoveryConcurrency)}, nil
}

// Run drives workflows until ctx ends. Step processes are left to the
// runtime (closing it stops them).
func (m *Manager) Run(ctx context.Context) error {
	if m.quarantine.Journal != "" {
		j, q := openJournal(m.quarantine, m.c.log)
		m.quarantined = q
		m.wg.Add(1)
		go func() { defer m.wg.Done(); m.watchBusy(ctx, j) }()
		defer j.close() // after wg.Wait: a clean stop
	}
	m.restoreAdmission(ctx)
	go m.dispatch(ctx)
	m.wg.Add(2)
	go func() { defer m.wg.Done(); m.gc.run(ctx) }()
	go func() { defer m.wg.Done(); m.recheckLimits(ctx) }()
	if a := m.c.archive; a != nil && m.c.archiveTTL > 0 {
		m.wg.Add(1)
		go func() { defer m.wg.Done(); m.pruneArchive(ctx, a, m.c.archiveTTL) }()
	}
	archived := make(chan struct{})
	go func() { m.archiver(); close(archived) }()
	defer func() {
		m.wg.Wait()
		close(m.archiveq)
		<-archived
	}()
	for {
		err := m.watch(ctx)
		if ctx.Err() != nil {
			return nil
		}
		m.c.log.Warn("workflow watch ended; listing again", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// watch subscribes, lists every workflow once, then follows the events
// until the watch ends.
func (m *Manager) watch(ctx context.Context) error {
	events, err := m.st.Watch(ctx, store.KindWorkflow, "")
	if err != nil {
		return err
	}
	m.listing = !m.listed.Load()
	err = m.listAll(ctx)
	m.listing = false
	if err != nil {
		return err
	}
	m.listed.Store(true)
	for ev := range events {
		wf, ok := ev.Object.(*v1alpha1.Workflow)
		if !ok {
			continue
		}
		m.observe(ctx, ev.Type, wf)
	}
	return errors.New("the watch channel closed")
}

func (m *Manager) listAll(ctx context.Context) error {
	cont := ""
	for {
		objs, next, err := m.st.List(ctx, store.KindWorkflow, "", store.ListOptions{Limit: 500, Continue: cont})
		if err != nil {
			return fmt.Errorf("list workflows: %w", err)
		}
		for _, o := range objs {
			if wf, ok := o.(*v1alpha1.Workflow); ok {
				m.observe(ctx, store.Added, wf)
			}
		}
		if next == "" {
			return nil
		}
		cont = next
	}
}

// observe reacts to one stored workflow (without its nodes).
func (m *Manager) observe(ctx context.Context, t store.EventType, wf *v1alpha1.Workflow) {
	m.mu.Lock()
	h := m.handles[wf.UID]
	m.mu.Unlock()
	switch {
	case t == store.Deleted:
		if h != nil {
			h.deleted.Store(true)
			h.cancel()
		}
		m.c.adm.release(wf.Namespace + "/" + wf.Name)
		m.gc.forget(wf.UID)
	case h != nil:
		h.notify(wf.ResourceVersion)
	case !wf.Status.Phase.Completed():
		m.start(ctx, wf)
	default:
		m.gc.completed(wf, false) // completed before this Manager, or its archive pending
	}
}

// start runs a driver for a workflow that is not completed.
func (m *Manager) start(ctx context.Context, stub *v1alpha1.Workflow) {
	dctx, cancel := context.WithCancel(ctx)
	h := &handle{key: stub.Namespace + "/" + stub.Name, st: m.st, events: runtime.NewQueue(workflowQueue), changes: make(chan struct{}, 1), cancel: cancel}
	h.storeRV.Store(parseRV(stub.ResourceVersion))
	m.trackRecovery(h)
	m.mu.Lock()
	m.handles[stub.UID] = h
	m.mu.Unlock()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer m.forget(stub.UID, h)
		defer m.guardDrive(dctx, stub, h) // recover.go
		m.drive(dctx, stub, h)
	}()
}

func (m *Manager) forget(uid types.UID, h *handle) {
	m.mu.Lock()
	delete(m.handles, uid)
	m.mu.Unlock()
	h.cancel()
	h.events.Close()
}

// drive loads the whole workflow, recovers what a previous process left
// running, and runs the driver loop.
func (m *Manager) drive(ctx context.Context, stub *v1alpha1.Workflow, h *handle) {
	defer h.settled()
	if !m.recoverySlot(ctx, h) { // ready.go
		return
	}
	h.busy() // loading a huge workflow counts too (quarantine.go)
	if msg, ok := m.quarantined[stub.UID]; ok {
		// Not archived: archiving a huge workflow may be what crashed.
		if err := m.failStored(ctx, stub, h, msg, false); err != nil && ctx.Err() == nil {
			m.c.log.Error("quarantine workflow", "workflow", h.key, "err", err)
		}
		return
	}
	obj, err := m.st.Get(ctx, store.KindWorkflow, stub.Namespace, stub.Name)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
			m.c.log.Error("load workflow", "workflow", h.key, "err", err)
		}
		return
	}
	wf := obj.(*v1alpha1.Workflow)
	if wf.UID != stub.UID || wf.Status.Phase.Completed() {
		return
	}
	h.wrote(wf.ResourceVersion)
	d := m.c.newDriver(RunRequest{Workflow: wf, Templates: m.templates(wf.Namespace), events: h.events.Out(), changes: h.changes, h: h})
	d.recover(ctx, m.rt)
	final, err := d.loop(ctx)
	switch {
	case h.deleted.Load():
		m.killRuns(final)
		m.c.adm.release(h.key) // a pass in flight may have taken a lock after the delete
	case err != nil && ctx.Err() == nil:
		m.c.log.Error("drive workflow", "workflow", h.key, "err", err)
	case err == nil && final.Status.Phase.Completed():
		d.collectArtifacts(ctx)
		m.archive(ctx, d.wf)
	}
}

// Archiver is a store that keeps completed workflows in an archive.
type Archiver interface {
	ArchiveBatch(ctx context.Context, wfs []*v1alpha1.Workflow) error
	// GetArchived returns the archived workflow of uid, store.ErrNotFound
	// when the archive does not hold it.
	GetArchived(ctx context.Context, uid string) (*v1alpha1.Workflow, error)
	// ListArchived and DeleteArchived serve the archive TTL (archivettl.go).
	archivePruner
}

// archiveBatch bounds how many workflows one archive commit takes.
const archiveBatch = 256

// workflowQueue is the buffer of each workflow's event queue: a few events,
// as one workflow's steps report at a time; more wait in the queue's slice.
// (A StepEvent is large: 256 of them per workflow cost 40 KiB, 400 MB for
// 10,000 waiting workflows.)
const workflowQueue = 8

// archive queues a completed workflow for the archive, when the store has
// one. The live workflow stays until it is deleted.
func (m *Manager) archive(_ context.Context, wf *v1alpha1.Workflow) {
	if m.c.archive != nil {
		m.archiveq <- wf
		return
	}
	m.gc.completed(wf, true)
}

// archiver archives what archive queues, in batches, until the queue is
// closed; it finishes what was queued even while the Manager stops.
func (m *Manager) archiver() {
	a := m.c.archive
	for wf := range m.archiveq {
		batch := []*v1alpha1.Workflow{wf}
	more:
		for len(batch) < archiveBatch {
			select {
			case next, ok := <-m.archiveq:
				if !ok {
					break more
				}
				batch = append(batch, next)
			default:
				break more
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := a.ArchiveBatch(ctx, batch); err != nil {
			m.c.log.Warn("archive workflows", "count", len(batch), "err", err)
		} else {
			for _, wf := range batch {
				m.gc.completed(wf, true)
			}
		}
		cancel()
	}
}

// killRuns stops the steps of a deleted workflow.
func (m *Manager) killRuns(wf *v1alpha1.Workflow) {
	ctx := context.Background()
	for id, n := range wf.Status.Nodes {
		if isRun(n) && !n.Phase.Completed() {
			_ = m.rt.Kill(ctx, RunID(wf, id))
		}
	}
}

// dispatch routes each runtime event to its workflow's driver. Events of a
// workflow that has no driver (it was deleted) are dropped: the runtime
// keeps them for Status.
func (m *Manager) dispatch(ctx context.Context) {
	for {
		select {
		case ev, ok := <-m.rt.Events():
			if !ok {
				return
			}
			m.mu.Lock()
			h := m.handles[types.UID(ev.WorkflowUID)]
			m.mu.Unlock()
			if h != nil {
				h.events.Push(ev)
			}
		case <-ctx.Done():
			return
		}
	}
}

// isRun reports whether a node is carried out by the runtime.
func isRun(n v1alpha1.NodeStatus) bool {
	switch n.Type {
	case v1alpha1.NodeTypePod, v1alpha1.NodeTypeHTTP, v1alpha1.NodeTypePlugin:
		return true
	}
	return false
}

// recover asks the runtime about every step the stored workflow has in
// flight: a finished one is reported, one still running is followed, and
// one the runtime never started is launched again. A step the runtime
// lost (braid stopped while it ran) comes back as Error with a message
// that says so, and its retryStrategy decides what happens next.
func (d *driver) recover(ctx context.Context, rt Runtime) {
	for id, n := range d.wf.Status.Nodes {
		if !isRun(n) || n.Phase.Completed() {
			continue
		}
		ev, known, err := rt.Status(ctx, RunID(d.wf, id))
		switch {
		case err != nil:
			d.log.Warn("step status", "node", id, "err", err)
		case !known:
			if d.relaunch == nil {
				d.relaunch = map[string]bool{}
			}
			d.relaunch[id] = true
		case ev.Phase.Completed():
			ev.NodeID = id
			d.record(ev)
		}
	}
}

// reload replaces the workflow with the stored one, after someone else
// changed it. Results not yet merged are kept.
func (d *driver) reload(ctx context.Context) error {
	obj, err := d.req.h.st.Get(ctx, store.KindWorkflow, d.wf.Namespace, d.wf.Name)
	if err != nil {
		return fmt.Errorf("reload %s: %w", d.wf.Name, err)
	}
	wf := obj.(*v1alpha1.Workflow)
	if wf.UID != d.wf.UID {
		return fmt.Errorf("reload %s: %w", d.wf.Name, store.ErrNotFound)
	}
	d.wf = wf
	d.req.h.wrote(wf.ResourceVersion)
	return nil
}

// recheckLimits wakes, every limitsRecheck, the lock waiters that a
// changed limit lets in.
func (m *Manager) recheckLimits(ctx context.Context) {
	t := time.NewTicker(limitsRecheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.c.LimitsChanged()
		}
	}
}
