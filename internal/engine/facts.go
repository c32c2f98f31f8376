package engine

import (
	"regexp"
	"time"

	"github.com/braidwf/braid/internal/synclock"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// facts are what one pass knows: the snapshot (the workflow's spec and
// status, the runtime's results, memoization entries, lock state, limits),
// now, what start derives from them (the workflow deadline, the shutdown)
// and caches of pure functions of the spec. Their methods answer questions
// about the node tree and the templates: node look-ups by name and ID,
// children, attempts, outbound nodes, templates, loops, limits. They change
// nothing that a Result carries; only their caches fill up.
//
// The node tree they read is the one the pass's recorder writes, so every
// question sees the decisions the pass has made so far, as Argo's operator
// reads its own updates.
type facts struct {
	wf       *v1alpha1.Workflow
	spec     *v1alpha1.WorkflowSpec
	nodes    v1alpha1.Nodes // wf.Status.Nodes: written only through the recorder
	now      time.Time
	resolver TemplateResolver
	results  map[string]StepResult
	relaunch map[string]bool        // Snapshot.Relaunch, with the leaves that wait for a lock
	memos    map[MemoKey]MemoLookup // Snapshot.Memos: memoization look-ups
	noMemos  bool
	locks    *synclock.Table // Snapshot.Locks: template-level synchronization
	lim      Limits          // with defaults
	pattern  string          // Snapshot.TransientErrorPattern

	deadline     time.Time // workflow deadline; zero when there is none
	pastDeadline bool
	shutdown     v1alpha1.ShutdownStrategy

	*caches
	refErrs   map[v1alpha1.TemplateRef]error // resolver errors: never kept in a Prepared
	prepared  bool                           // caches outlive the pass (Snapshot.Prepared)
	transient *regexp.Regexp
	failures  *string // workflow.failures, computed once per pass
	keyBuf    []byte  // scratch for node IDs (byName)
}

// caches memoise pure functions of the spec: within one pass, or across
// passes when the caller keeps a Prepared.
type caches struct {
	local      map[string]*v1alpha1.Template
	refTmpls   map[v1alpha1.TemplateRef]*v1alpha1.Template
	merged     map[*v1alpha1.Template]*v1alpha1.Template
	dags       map[*v1alpha1.Template]*dagInfo
	resultRefs map[*v1alpha1.Template]map[string]bool
	loops      map[string]*loopEntry
}

// newFacts reads a snapshot. The workflow's status gets a node map when it
// has none.
func newFacts(s Snapshot, now time.Time) facts {
	wf := s.Workflow
	if wf.Status.Nodes == nil {
		wf.Status.Nodes = v1alpha1.Nodes{}
	}
	f := facts{
		wf:       wf,
		spec:     execSpec(wf),
		nodes:    wf.Status.Nodes,
		now:      now.UTC(),
		resolver: s.Templates,
		results:  s.Results,
		relaunch: withLockWaiters(s),
		memos:    s.Memos,
		noMemos:  s.NoMemos,
		locks:    s.Locks,
		lim:      s.Limits.WithDefaults(),
		pattern:  s.TransientErrorPattern,
		caches:   &caches{},
	}
	if m := s.Prepared; m != nil {
		if m.spec != f.spec {
			m.spec, m.c = f.spec, caches{}
		}
		f.caches = &m.c
		f.prepared = true
	}
	return f
}

// execSpec is the spec the workflow runs (v1alpha1.Workflow.ExecSpec). A
// stored template spec follows the shutdown and suspend of the workflow's
// own spec, where the API sets them, as Argo's controller copies them.
func execSpec(wf *v1alpha1.Workflow) *v1alpha1.WorkflowSpec {
	s := wf.ExecSpec()
	if s != &wf.Spec {
		s.Shutdown, s.Suspend = wf.Spec.Shutdown, wf.Spec.Suspend
	}
	return s
}

// suspended reports whether the workflow is suspended: it is not walked.
func (f *facts) suspended() bool {
	return f.spec.Suspend != nil && *f.spec.Suspend
}

// stopsNew reports whether a shutdown stops new work at this level: any
// shutdown, except a Stop inside an exit handler.
func (f *facts) stopsNew(opts execOpts) bool {
	return f.shutdown != "" && !(f.shutdown == v1alpha1.ShutdownStop && opts.onExit)
}
