package engine

import (
	"time"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/internal/synclock"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Snapshot is everything Reconcile looks at. Reconcile takes ownership of
// Workflow: the returned Status may share memory with Workflow.Status, and
// the caller must not use Workflow.Status afterwards except through Result.
type Snapshot struct {
	// Workflow is the spec and the current status. metadata.name and uid are set.
	Workflow *v1alpha1.Workflow
	// Templates resolves templateRef; nil resolves nothing.
	Templates TemplateResolver
	// Results are what the runtime reported for Pod nodes, by node ID. A result
	// for a node that is already completed is ignored.
	Results map[string]StepResult
	// Limits bound what one workflow may create.
	Limits Limits
	// TransientErrorPattern is a regular expression (Argo's
	// TRANSIENT_ERROR_PATTERN) that marks more failure messages as transient
	// for retryPolicy OnTransientError, on top of a built-in pattern
	// (connection reset, i/o timeout, pod deleted, ...). Empty adds nothing.
	TransientErrorPattern string
	// Prepared, when set, keeps what Reconcile derives from the templates between
	// calls for this workflow (see Prepared). Optional; nil is always correct.
	Prepared *Prepared
	// Relaunch lists Pod nodes, by ID, that are Pending or Running in Status
	// but that the runtime has never started: the caller persisted them and
	// stopped (a crash) before it could start them. Reconcile plans their
	// Launch again, and they go back to Pending. A node that is completed,
	// or not a leaf, is ignored.
	Relaunch map[string]bool
	// Memos are the memoization entries this pass may look up (templates
	// with memoize, memoize.go), loaded by the caller: the entries that the
	// previous pass asked for in Result.Need. A look-up of a key that is
	// not here holds its node back and asks for the key in Result.Need.
	// Nil with NoMemos: every look-up misses.
	Memos map[MemoKey]MemoLookup
	// NoMemos says there is no memoization cache: every look-up misses and
	// nothing is asked for.
	NoMemos bool
	// Locks is the state of the template-level synchronization locks that
	// this workflow holds, waits for or asked for in Result.Need (sync.go),
	// a copy that Reconcile may change. Reconcile decides on it and returns
	// its decisions in Result.Locks. Nil: templates' synchronization is
	// ignored.
	Locks *synclock.Table
}

// MemoKey names one memoization entry of the workflow's namespace.
type MemoKey struct {
	Cache, Key string
}

// MemoLookup is what the caller found under a MemoKey.
type MemoLookup struct {
	// Found is false when the cache holds no entry under the key.
	Found bool
	Entry MemoEntry
	// Err, when set, is why the look-up failed: the node that looked it up
	// ends Error with it.
	Err string
}

// Need lists what Reconcile found missing from the Snapshot: the caller
// loads it into the next Snapshot, and Reconcile asks to be called again
// at once. The nodes that wait for it are not created in this pass.
type Need struct {
	Memos []MemoKey
	Locks []*v1alpha1.Synchronization
}

// Empty reports whether nothing is needed.
func (n Need) Empty() bool { return len(n.Memos) == 0 && len(n.Locks) == 0 }

// Metadata is a change of the workflow's own labels and annotations
// (spec.workflowMetadata, applied when the workflow starts): the full
// maps to write on the object.
type Metadata struct {
	Labels, Annotations map[string]string
}

// Limits bound what one workflow may make the engine build, so that no
// spec grows the server without limit (the config key `limits`). A field
// left at zero takes its default (the Default* constants, or
// Limits{}.WithDefaults()); nothing is unlimited.
// Crossing a bound ends the node or the workflow Failed or Error with a
// message that names the bound by its config key, its value and the node.
type Limits struct {
	// MaxNodes is how many nodes one workflow may have (limits.maxNodes).
	// The node that would pass it is not created; the workflow ends Error
	// and its running steps are killed.
	MaxNodes int
	// MaxDepth is how deeply templates may call templates (limits.maxDepth,
	// Argo's maximum recursion depth): the template that would go deeper
	// ends Error "Maximum recursion depth exceeded ...".
	MaxDepth int
	// MaxLoopItems is how many items one withItems, withParam or
	// withSequence may have (limits.maxLoopItems). A longer loop errors its
	// step group or task before a single item is built.
	MaxLoopItems int
	// MaxParameterBytes bounds one parameter value: a global argument, a
	// bound input, an output a step reports, a withParam value, a loop's
	// aggregated outputs (limits.maxParameterBytes).
	MaxParameterBytes int
	// MaxResultBytes bounds outputs.result (limits.maxResultBytes): a longer
	// result a step reports keeps its last MaxResultBytes bytes, as Argo
	// keeps the last 256 kB of stdout. The executor already captures at
	// most 256 KiB, so a larger value here changes nothing.
	MaxResultBytes int
	// MaxNodesPerPass is how many nodes one Reconcile creates before it stops
	// walking and asks to be called again at once (RequeueAfter 1ms), so a
	// pass stays short and a stop or terminate is seen within a pass even in
	// a huge loop (limits.maxNodesPerPass). A pass may pass it by the few
	// nodes one template call creates together (a Steps node and its first
	// group, a containerSet's containers).
	MaxNodesPerPass int
	// Expression bounds every expression the engine evaluates ({{= }},
	// when, hooks' and retries' expressions, withParam, labelsFrom) in time
	// and in the size of what it builds (limits.expressionTimeout and
	// limits.maxExpressionBytes). A zero field takes expr.DefaultBudget's.
	// An evaluation over it ends its node Error with
	// "expression exceeded its budget: ...".
	Expression expr.Budget
}

// The defaults of Limits' fields; internal/config.DefaultLimits takes them
// for config.yaml.
const (
	DefaultMaxNodes          = 50000
	DefaultMaxDepth          = 100
	DefaultMaxLoopItems      = 100000
	DefaultMaxParameterBytes = 1 << 20
	DefaultMaxResultBytes    = 256 << 10
	DefaultMaxNodesPerPass   = 2000
)

// WithDefaults returns l with every field that is zero or negative set to
// its default.
func (l Limits) WithDefaults() Limits {
	pick := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	pick(&l.MaxNodes, DefaultMaxNodes)
	pick(&l.MaxDepth, DefaultMaxDepth)
	pick(&l.MaxLoopItems, DefaultMaxLoopItems)
	pick(&l.MaxParameterBytes, DefaultMaxParameterBytes)
	pick(&l.MaxResultBytes, DefaultMaxResultBytes)
	pick(&l.MaxNodesPerPass, DefaultMaxNodesPerPass)
	return l
}

// TemplateResolver finds the templates of WorkflowTemplates and
// ClusterWorkflowTemplates for templateRef.
type TemplateResolver interface {
	Template(ref v1alpha1.TemplateRef) (*v1alpha1.Template, error)
}

// StepResult is what the runtime reports about one Pod node (see
// step.Result).
type StepResult = step.Result

// ContainerResult is one container of a containerSet step (see
// step.Container).
type ContainerResult = step.Container

// Result is the outcome of one Reconcile.
type Result struct {
	// Status is the workflow's new status.
	Status v1alpha1.WorkflowStatus
	// Changed lists the IDs of the nodes this reconcile created or modified,
	// so that a store can write only those.
	Changed []string
	// Plan is what the caller must do, after it has persisted Status.
	Plan Plan
	// Locks are the decisions on template-level locks that Status records
	// (acquisitions, places in queues, releases), for the caller to commit
	// after it has persisted Status. Status.Synchronization is already
	// their outcome.
	Locks []synclock.Decision
	// Metadata, when set, is the workflow's new labels and annotations, to
	// be written with Status.
	Metadata *Metadata
	// Need is what this pass found missing from the Snapshot.
	Need Need
	// RequeueAfter asks for another Reconcile after this long even if no
	// result arrives (retry backoff, suspend duration, the workflow deadline,
	// a Pending step's timeout); 0 means no timer. It is 1ms when the pass
	// changed something that no runtime report will follow (a kill, a
	// failFast decision): call again at once.
	RequeueAfter time.Duration
}

// Plan lists the actions of one reconcile.
type Plan struct {
	Launch []Launch
	Kill   []Kill
	// Memoize lists the memoization cache writes: the outputs of memoized
	// nodes that Succeeded, and the cache hits to record.
	Memoize []MemoSave
}

// Launch starts the Pod node NodeID (see step.Launch). Status already
// holds the node, Pending.
type Launch = step.Launch

// Kill stops a running Pod node. Status already holds the node's final
// phase and message; whatever the runtime reports afterwards is ignored.
type Kill struct {
	NodeID string
	Reason string
}
