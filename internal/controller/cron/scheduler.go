package cron

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	robfig "github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Store is what the scheduler needs from a store: it reads and watches
// CronWorkflows and Workflows, creates and deletes Workflows, and writes
// the status of CronWorkflows.
type Store interface {
	Get(ctx context.Context, kind store.Kind, namespace, name string) (store.Object, error)
	List(ctx context.Context, kind store.Kind, namespace string, opts store.ListOptions) ([]store.Object, string, error)
	Create(ctx context.Context, obj store.Object) error
	Update(ctx context.Context, obj store.Object) error
	Delete(ctx context.Context, kind store.Kind, namespace, name string) error
	Watch(ctx context.Context, kind store.Kind, namespace string) (<-chan store.Event, error)
}

// Options configure a Scheduler.
type Options struct {
	Store Store
	// Clock is the scheduler's time; nil means RealClock().
	Clock Clock
	// Logger receives what the scheduler does; nil discards.
	Logger *slog.Logger
	// Local is the zone of the schedules of a CronWorkflow without
	// spec.timezone; nil means time.Local.
	Local *time.Location
}

// maxWait bounds one wait of the loop, so that a wall clock that jumped
// (a machine that slept) is noticed within a minute.
const maxWait = time.Minute

// Scheduler creates the Workflows of the CronWorkflows of a store when
// their schedules fire, and keeps the CronWorkflows' status up to date.
type Scheduler struct {
	st    Store
	clock Clock
	log   *slog.Logger
	local *time.Location
	syncq chan chan struct{}

	// entries is owned by the loop goroutine: one per CronWorkflow key.
	entries map[string]*entry
}

// entry is the loop's view of one CronWorkflow.
type entry struct {
	cw     *v1alpha1.CronWorkflow // the newest seen; never modified
	scheds []robfig.Schedule      // nil when the spec is invalid
	// after is the time up to which the schedules were considered; next
	// is the first due time after it (zero: never).
	after, next time.Time
}

// New returns a Scheduler; Run starts it.
func New(o Options) (*Scheduler, error) {
	if o.Store == nil {
		return nil, errors.New("cron scheduler: no store")
	}
	s := &Scheduler{st: o.Store, clock: o.Clock, log: o.Logger, local: o.Local,
		syncq: make(chan chan struct{}), entries: map[string]*entry{}}
	if s.clock == nil {
		s.clock = RealClock()
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.local == nil {
		s.local = time.Local
	}
	return s, nil
}

// Run schedules until ctx ends. A watch that ends (the store dropped a
// slow watcher) is opened again after listing everything again.
func (s *Scheduler) Run(ctx context.Context) error {
	for {
		err := s.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		s.log.Warn("cron watch ended; listing again", "err", err)
		t := s.clock.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
	}
}

// Sync returns once the scheduler has handled every store change made
// before the call and every schedule due at the clock's current time. Tests
// use it after moving a FakeClock or writing to the store.
func (s *Scheduler) Sync(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case s.syncq <- done:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

var errWatchClosed = errors.New("the store closed the watch")

// session watches, lists, and then serves events, timers and Sync until
// a watch ends or ctx does.
func (s *Scheduler) session(ctx context.Context) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	crons, err := s.st.Watch(wctx, store.KindCronWorkflow, "")
	if err != nil {
		return fmt.Errorf("watch cron workflows: %w", err)
	}
	wfs, err := s.st.Watch(wctx, store.KindWorkflow, "")
	if err != nil {
		return fmt.Errorf("watch workflows: %w", err)
	}
	if err := s.resync(ctx); err != nil {
		return err
	}
	for {
		if err := s.step(ctx, crons, wfs); err != nil {
			return err
		}
	}
}

// step waits for one thing to do and does it.
func (s *Scheduler) step(ctx context.Context, crons, wfs <-chan store.Event) error {
	var due <-chan time.Time
	if next := s.earliest(); !next.IsZero() {
		t := s.clock.NewTimer(min(next.Sub(s.clock.Now()), maxWait))
		defer t.Stop()
		due = t.C()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case ev, ok := <-crons:
		if !ok {
			return errWatchClosed
		}
		s.cronEvent(ctx, ev)
	case ev, ok := <-wfs:
		if !ok {
			return errWatchClosed
		}
		s.workflowEvent(ctx, ev)
	case <-due:
		s.runDue(ctx)
	case done := <-s.syncq:
		defer close(done)
		if err := s.drain(ctx, crons, wfs); err != nil {
			return err
		}
		s.runDue(ctx)
	}
	return nil
}

// drain handles the events already waiting, without blocking.
func (s *Scheduler) drain(ctx context.Context, crons, wfs <-chan store.Event) error {
	for {
		select {
		case ev, ok := <-crons:
			if !ok {
				return errWatchClosed
			}
			s.cronEvent(ctx, ev)
		case ev, ok := <-wfs:
			if !ok {
				return errWatchClosed
			}
			s.workflowEvent(ctx, ev)
		default:
			return nil
		}
	}
}

// earliest is the first due time of all entries; zero when none is due ever.
func (s *Scheduler) earliest() time.Time {
	var first time.Time
	for _, e := range s.entries {
		if !e.next.IsZero() && (first.IsZero() || e.next.Before(first)) {
			first = e.next
		}
	}
	return first
}

// resync lists every CronWorkflow, forgets those gone, settles the
// children each one thinks active, and catches up missed runs.
func (s *Scheduler) resync(ctx context.Context) error {
	objs, _, err := s.st.List(ctx, store.KindCronWorkflow, "", store.ListOptions{})
	if err != nil {
		return fmt.Errorf("list cron workflows: %w", err)
	}
	seen := map[string]bool{}
	uids := map[types.UID]bool{}
	for _, o := range objs {
		cw, ok := o.(*v1alpha1.CronWorkflow)
		if !ok {
			continue
		}
		seen[key(cw.Namespace, cw.Name)] = true
		uids[cw.UID] = true
		s.upsert(ctx, cw)
	}
	for k := range s.entries {
		if !seen[k] {
			delete(s.entries, k)
		}
	}
	// CronWorkflows deleted while no scheduler watched leave their
	// workflows behind: delete them now.
	s.deleteOwned(ctx, "", func(uid types.UID) bool { return !uids[uid] })
	return nil
}

// cronEvent follows a CronWorkflow's change.
func (s *Scheduler) cronEvent(ctx context.Context, ev store.Event) {
	cw, ok := ev.Object.(*v1alpha1.CronWorkflow)
	if !ok {
		return
	}
	if ev.Type == store.Deleted {
		delete(s.entries, key(cw.Namespace, cw.Name))
		s.deleteOwned(ctx, cw.Namespace, func(uid types.UID) bool { return uid == cw.UID }) // owned.go
		return
	}
	s.upsert(ctx, cw)
}

// upsert records a CronWorkflow seen in a list or an event. A new one is
// settled and caught up; a changed spec is parsed again.
func (s *Scheduler) upsert(ctx context.Context, cw *v1alpha1.CronWorkflow) {
	k := key(cw.Namespace, cw.Name)
	e, known := s.entries[k]
	if known && e.cw.UID == cw.UID {
		if rvNewer(e.cw.ResourceVersion, cw.ResourceVersion) {
			return
		}
		specChanged := e.cw.Generation != cw.Generation
		e.cw = cw
		if specChanged { // new schedules count from now
			e.after = s.clock.Now()
			s.parse(ctx, e)
		}
		return
	}
	e = &entry{cw: cw, after: s.clock.Now()}
	s.entries[k] = e
	s.parse(ctx, e)
	if e.scheds == nil {
		return
	}
	s.settleActive(ctx, e)
	s.catchUp(ctx, e)
}

// rvNewer reports whether have is a newer resourceVersion than got (an
// event that arrives after the scheduler read the object itself).
func rvNewer(have, got string) bool {
	var h, g int64
	_, err1 := fmt.Sscan(have, &h)
	_, err2 := fmt.Sscan(got, &g)
	return err1 == nil && err2 == nil && h > g
}

// parse reads the schedules of e's spec. An invalid spec gets a SpecError
// condition and never fires; a valid one loses that condition.
func (s *Scheduler) parse(ctx context.Context, e *entry) {
	scheds, err := spec.ParseCronSchedules(&e.cw.Spec, s.local)
	if err != nil {
		e.scheds, e.next = nil, time.Time{}
		msg := err.Error()
		s.log.Warn("cron workflow cannot be scheduled", "cron", key(e.cw.Namespace, e.cw.Name), "err", msg)
		s.writeStatus(ctx, e, func(cw *v1alpha1.CronWorkflow) bool {
			return setCondition(cw, v1alpha1.ConditionTypeSpecError, msg)
		})
		return
	}
	e.scheds = scheds
	e.next = nextAfter(scheds, e.after)
	if hasCondition(e.cw, v1alpha1.ConditionTypeSpecError) {
		s.writeStatus(ctx, e, func(cw *v1alpha1.CronWorkflow) bool {
			return removeCondition(cw, v1alpha1.ConditionTypeSpecError)
		})
	}
}

// catchUp runs, once, the latest time missed since status.lastScheduledTime
// when it is within startingDeadlineSeconds of now. Without a deadline,
// or before a first run, missed times are not run (as Argo).
func (s *Scheduler) catchUp(ctx context.Context, e *entry) {
	d := e.cw.Spec.StartingDeadlineSeconds
	last := e.cw.Status.LastScheduledTime
	if d == nil || *d <= 0 || last == nil {
		return
	}
	now := s.clock.Now()
	from := last.Time
	if floor := now.Add(-time.Duration(*d) * time.Second).Add(-time.Nanosecond); floor.After(from) {
		from = floor
	}
	t := latestIn(e.scheds, from, now)
	if t.IsZero() {
		return
	}
	s.log.Info("running a missed schedule", "cron", key(e.cw.Namespace, e.cw.Name), "scheduled", t, "late", now.Sub(t))
	s.run(ctx, e, t)
}

// runDue runs every entry whose next time has come: once, for the latest
// time due, however many passed while the process could not run.
func (s *Scheduler) runDue(ctx context.Context) {
	now := s.clock.Now()
	keys := make([]string, 0, len(s.entries))
	for k := range s.entries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e, ok := s.entries[k]
		if !ok || e.next.IsZero() || e.next.After(now) {
			continue
		}
		t := latestIn(e.scheds, e.after, now)
		e.after, e.next = now, nextAfter(e.scheds, now)
		if !t.IsZero() {
			s.run(ctx, e, t)
		}
	}
}

func key(ns, name string) string { return ns + "/" + name }
