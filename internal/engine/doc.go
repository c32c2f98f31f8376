// Package engine decides what happens next in one workflow. It is braid's
// heart: a pure reconcile with Argo Workflows' semantics, as written down in
// shared/reference/ARGO-SEMANTICS.md (rule numbers below refer to it).
//
// # What it owns
//
// Everything about a workflow's execution that can be decided from a
// snapshot: the node tree (names, IDs, types, phases, messages, children,
// outbound nodes, boundaries, display names), variable substitution into
// templates, steps and DAG scheduling, loops, when, depends, retries and
// backoff, timeouts and deadlines, suspend, exit handlers and lifecycle
// hooks, parallelism and failFast, shutdown, template and global outputs,
// the workflow's own phase and message, and the bookkeeping Argo shows:
// progress, resourcesDuration, taskResultSynced and the PodRunning and
// Completed conditions.
//
// It does not own: validation (internal/spec; Reconcile assumes a validated
// spec but never crashes on one that is not), template storage (templateRef
// goes through a TemplateResolver; spec.workflowTemplateRef is resolved by
// the caller), persistence, running steps, time, labels on the Workflow
// object (the caller sets workflows.argoproj.io/phase and /completed from
// Status.Phase), ConfigMaps (a valueFrom.configMapKeyRef needs a default).
//
// # The contract
//
//	func Reconcile(s Snapshot, now time.Time) (Result, error)
//
// The caller (internal/controller) loads a Snapshot, all plain data: the
// Workflow (spec and current status), a TemplateResolver, the step results
// the runtime reported since the last call (by node ID), Limits, an
// optional Prepared, the memoization entries the last pass asked for
// (Memos) and a copy of the lock state the workflow needs (Locks, a
// synclock.Table). Reconcile returns:
//
//   - Result.Status: the new status. Only the nodes listed in
//     Result.Changed were created or modified, so a store can write just
//     those rows.
//   - Result.Plan: the steps to Launch (each node is already in Status as
//     Pending, with a fully substituted template) and the runs to Kill (each
//     node already holds its final phase and message; later reports are
//     ignored).
//   - Result.RequeueAfter: when to call again even if no result arrives
//     (retry backoff, suspend duration, workflow deadline, Pending timeout,
//     or "as soon as possible" when a pass changed something nothing will
//     report on).
//   - Result.Locks, Plan.Memoize and Result.Metadata: the decisions the
//     caller commits after it persists Status: lock acquisitions, places in
//     queues and releases (Status.Synchronization already shows them),
//     memoization writes, and the workflow's labels and annotations from
//     workflowMetadata.
//   - Result.Need: the memoization entries and lock state the pass found
//     missing from the Snapshot. The nodes that need them are not created
//     in this pass; the caller loads them and calls again at once.
//
// The caller persists Status, then starts each Launch and kills each Kill,
// and calls Reconcile again on every reported result and after
// RequeueAfter. The error return is only for a caller's mistake
// (ErrNoWorkflow); every user error (a bad reference, a missing input, an
// unresolvable template, a failing step) ends up in the status, as Argo
// records it: an Error or Failed node, a failed step group, an Error or
// Failed workflow with Argo's exact messages (rule 2.9).
//
// Reconcile is deterministic: the same snapshot and now give the same
// result. It performs no I/O, starts no goroutines and reads no clock.
// Snapshot.Workflow is owned by Reconcile during the call: the returned
// Status shares memory with it.
//
// # How a pass works
//
// Like Argo's operator, every pass starts from the entrypoint and walks the
// template tree (rule 0.1); node identity is the node name, and a node that
// is fulfilled returns at once without any substitution. reconcile.go holds
// the pass: start, merge the results (pod.go), apply a shutdown or a passed
// deadline (control.go), run the entrypoint, the workflow hooks and the exit
// handler in the order of rule 9.4, and settle the workflow phase (phase.go).
//
// A pass (the type pass) composes two halves, as Tekton's PipelineRunFacts
// keeps what a reconcile knows apart from what it does. facts.go holds what
// the pass knows: the snapshot, now, the node tree, templates and limits,
// with methods that only read (node look-ups, children, attempts, outbound
// nodes, templates, loops). recorder.go holds what the pass decides: every
// node write (put, setPhase, addChild, killNode), the Plan's launches, kills
// and memoization saves, lock decisions, needs, metadata, wake-ups, and the
// bound that ends the workflow; it assembles the Result. The walk (pass's own
// methods) reads the one and records into the other.
//
// Inside the walk an error means a user error on a node, nothing else.
// Whether an invocation was held back (parallelism, a reference not yet
// known, the node limit, the pass's share of nodes, state the caller must
// load) or timed out travels in an outcome next to it (outcome.go), and the
// steps and DAG code decide what each means for the group or the task.
//
//	facts.go      what a pass knows, read-only; recorder.go: what it decides
//	outcome.go    holds and timeouts: what an invocation did besides an error
//	execute.go    executeTemplate: resolve, bind inputs, parallelism, retry, dispatch
//	template.go   holders, templateRef, inline templates, templateDefaults
//	scope.go      variables: globals, inputs, locals, lazy steps./tasks. references
//	args.go       inputs from arguments (rule 6.5), artifacts, absent optionals
//	refs.go       steps.<name>.* and skipped producers' outputs (rule 6.6)
//	steps.go      steps templates (rules 1.7, 2.4); stepgroup.go: step groups (rule 2.3)
//	dag.go        DAG templates and tasks; dagphase.go: depends, targets, phase (rule 2.5)
//	loops.go      loop items, iteration names, aggregates (§5)
//	loopsrc.go    loop sources, bounded and expanded lazily (Limits)
//	retry.go      Retry nodes, policies, backoff, expression (§7)
//	hooks.go      exit handlers and lifecycle hooks (§9)
//	timeout.go    suspend, template timeouts and deadlines (§8)
//	pod.go        leaf nodes, Launches, result capture (rule 11.3), merging results
//	outputs.go    outputs of steps and DAG templates, globalName (§12)
//	control.go    parallelism, failFast, shutdown, deadline sweep (§10)
//	sync.go       template-level semaphores and mutexes, through Snapshot.Locks
//	memoize.go    memoize: cache look-ups (Snapshot.Cache) and Plan.Memoize saves
//	progress.go   progress and resourcesDuration: own values, workflow totals
//	nodesums.go   the sums of Steps, DAG and group nodes (SumNodes)
//	resources.go  a pod's resourcesDuration from its containers' resources
//	resultrefs.go which steps' results a template mentions
//	nodes.go      node records, IDs, display names, outbound nodes
//
// # Limits
//
// Every workflow is bounded by Snapshot.Limits (config.yaml's limits:; a
// zero field takes its default): nodes per workflow (50,000), template
// nesting depth (100, Argo's), items per loop (100,000), bytes per
// parameter value (1 MiB: globals, bound inputs, reported outputs, a
// withParam value, a loop's aggregated outputs), bytes of outputs.result
// (256 KiB, its end is kept) and nodes created per pass (2,000). Crossing a
// bound gives a message that names the node, the bound's config key and its
// value (errors.go limitError). Too many nodes or too deep a recursion ends
// the workflow Error at once, killing its running steps; a loop or a
// parameter over its bound errors its node, as a bad withParam does. A
// loop's length is checked before any item is built: a withSequence of
// 10^12 items allocates nothing, and a withParam over the byte bound is not
// parsed.
//
// Expansion is incremental. A pass that has created Limits.MaxNodesPerPass
// nodes creates no more (holdYield), leaves the groups it did not finish
// unsettled and asks to be called again at once, so a pass stays short and
// a shutdown is seen at the next one. A loop's iterations are created in
// index order and the walk stops at the first one that may not be created
// (parallelism, the pass bound); under a shutdown a loop creates no new
// iteration once one exists, so stopping a loop of 100,000 items ends the
// workflow in one pass.
//
// Every Failed or Error workflow has a message: a DAG root (which Argo
// leaves without one, rule 2.5) gives "child '<id>' failed: <message>" of
// the deepest failed node that has one (phase.go failureMessage).
//
// # Cost
//
// A pass is O(nodes walked) with a small constant and allocates little for
// finished work: fulfilled nodes return before any substitution; the
// finished groups of a steps template are found by binary search; variables
// of earlier steps are computed only for the tags that name them; a running
// leaf node is revisited without substitution; node IDs are hashed into a
// scratch buffer; a DAG's dependencies are walked with an explicit stack and
// an unstarted task is rejected without a look-up when a dependency is not
// done; a loop's iterations are named only up to the first one not created,
// and its items are parsed again only when its source changes.
//
// Figures (2 cores, go test -bench): a pass over a loop of 100,000 items
// with parallelism 2, half done, takes about 23 ms (BenchmarkHugeLoopPass).
// The recursion bomb (a steps template that runs a pod, then calls itself
// twice) ended Error at 100,000 nodes after 53 passes, with a peak engine
// heap of about 134 MiB and 0.9 KB of heap per node (BenchmarkRecursionBomb;
// the default limit is now 50,000, which keeps the whole server, a full GET
// of the workflow included, under 512 MiB). A
// loop of 50,000 steps (bench W7) takes 27 passes and 14 s of engine time
// with every step ending at once, against 46 s in one pass before loops were
// expanded lazily and a node's children looked up through a set.
//
// Progress and resourcesDuration cost O(changed nodes) per pass: own values
// and the workflow's totals move by delta. The sums of the other nodes
// (what each reaches through children, rule 1.13) change on every earlier
// node when one step ends, so they are written once, when the workflow
// completes (about 4 ms for a chain of 1,000 steps); SumNodes computes
// them for a running workflow that is being read.
//
// A Prepared kept by the caller across passes (one per workflow, passed in every
// Snapshot) spares the per-pass analysis of large templates: DAG shapes and
// task node IDs, result references, templates merged with defaults, loop
// expansions. It matters: on a 1,000-task DAG chain a pass costs about 8x
// more without it (see bench_test.go).
//
// # Imports
//
// engine imports the API types (pkg/apis/v1alpha1, with k8s.io/api/core/v1
// for resource names), internal/expr, internal/spec, internal/step (the
// launch and result types it shares with the runtimes), internal/synclock
// (the lock table, a value) and the standard library (and apimachinery for
// metav1.Time, IntOrString and resource.Quantity).
//
// # Must not import
//
// The store, the runtime, the executor, the server, the controller, the
// CLI, internal/app or any Kubernetes client: they call it. make lint-arch
// checks it.
package engine
