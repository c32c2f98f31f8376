// Package sqlite is braid's embedded store: every Argo object of an
// embedded deployment lives in one SQLite file (by default
// $BRAID_HOME/braid.db), read and written through modernc.org/sqlite, a
// pure-Go SQLite, so that braid stays one static binary without cgo.
//
// # What it owns
//
//   - The file: opening it (WAL journal, synchronous=NORMAL, a busy timeout,
//     foreign keys on), its schema and the migrations between schema
//     versions (PRAGMA user_version; see schema.go). A file written by a
//     newer braid is refused with ErrSchemaTooNew.
//   - The objects: Workflow, WorkflowTemplate, ClusterWorkflowTemplate,
//     CronWorkflow and WorkflowEventBinding, with Kubernetes-like metadata
//     semantics: uid, creationTimestamp, a per-object resourceVersion ("1"
//     on Create, one more per write) checked on every update (optimistic
//     concurrency: store.ErrConflict), and a generation that grows when the
//     spec changes. Namespaces are names only; cluster-scoped objects have
//     namespace "".
//   - Workflow nodes as rows, one per node, so a workflow has no size cap
//     and the controller's hot path, UpdateWorkflowStatus, writes only the
//     nodes that changed.
//   - Semaphore limits set through the sync API (synclimits.go): a
//     ConfigMap's keys and database semaphores' limits, one row each.
//   - Watch: an in-process fan-out of ADDED, MODIFIED and DELETED events in
//     commit order.
//
// It does not decide anything about workflows. What a status should be is
// the engine's business and when to write it the controller's.
//
// # Schema (version 6)
//
//	objects  id PK, kind, namespace, name (UNIQUE together), uid,
//	         resource_version, generation, created_at (unix ns, injected clock),
//	         phase (status.phase, for field selectors), labels (JSON; label
//	         gt and lt are matched on it), spec_hash (sha256 of the spec), body (JSON of the
//	         object without its spec and without status.nodes),
//	         unfinished (1 until a Workflow's status.finishedAt is set) and
//	         order_at (unix s of finishedAt, else of the creation) — version 4,
//	         for Argo's list order
//	         indexes: (kind, created_at DESC, id DESC),
//	                  (kind, namespace, created_at DESC, id DESC),
//	                  (kind, unfinished DESC, order_at DESC, created_at DESC, id DESC),
//	                  (kind, namespace, unfinished DESC, order_at DESC, created_at DESC, id DESC)
//	object_labels  object_id -> objects, key, value; PK (object_id, key),
//	         indexed on (key, value, object_id): the labels column as rows,
//	         kept with it by every write, for label selectors in SQL (List
//	         and Count) — version 6
//	specs    object_id PK -> objects, spec (JSON)
//	nodes    object_id -> objects, node_id (UNIQUE together), rv (the
//	         workflow's resource_version when the row was last written:
//	         WorkflowNodesSince reads only the rows written after a version),
//	         body (JSON of one NodeStatus)
//	archived uid UNIQUE, namespace, name, phase, labels, created_at,
//	         started_at, finished_at, summary (the workflow without nodes),
//	         nodes (JSON, gzipped above 4 KiB) — version 2, archive.go
//	archived_labels  archive_id -> archived, namespace, key, value; indexed
//	         on (key, value, archive_id) and (namespace, key, value), so a
//	         label selector over 100,000 archived workflows is answered in SQL
//	memo     (namespace, cache, key) PK, node_id, outputs, created_at,
//	         last_hit_at — version 3, memo.go
//	sync_limits  (namespace, config_map, key) PK, sync_limit: semaphore
//	         limits set through the sync API (config_map '' for a database
//	         semaphore) — version 5, synclimits.go
//
// The spec lives apart so that a status write does not rewrite it: writes
// compare spec_hash and touch specs only when the spec changed (which is
// also when generation grows). The columns resource_version and
// generation are the authority; the copies inside body are overwritten on
// read. JSON is the same encoding the API uses, so a row can be read with
// the sqlite3 shell and json_extract.
//
// # Reading and writing
//
// Get returns a fresh object; a Workflow comes back with every node in
// Status.Nodes, read in one snapshot. List and Watch give Workflows
// WITHOUT nodes (Status.Nodes is nil) so that they stay cheap whatever the
// workflows' size. List orders newest first, or in Argo's list order
// (store.OrderArgo: unfinished newest first, then latest finished first),
// both from an index, filters by
// label selector, by the fields metadata.name, metadata.namespace and
// status.phase (=, ==, !=), by name (Exact, Contains, Prefix, NotEquals),
// by creation time and by finish time (FinishedBefore, from order_at), and
// pages with Limit and an opaque Continue token (a position, so objects
// created while paging do not shift pages). Count answers how many a list
// holds from a token on (a page's remainingItemCount) in SQL. Label
// selectors are answered from object_labels in both (so a page's LIMIT is
// SQL's, and a rare label costs its rows, not the table's): a count by one
// label among 10,000 workflows takes about 2 ms (BenchmarkCount); a name
// filter reads each row (about 17 ms).
// With ListOptions.Fields, SQL builds each object from those JSON paths
// only (project.go), so a list of names never decodes a spec.
//
// Update is a full write. For a Workflow it replaces every node row with
// Status.Nodes, except that a nil Status.Nodes (a workflow from List or
// Watch) leaves the node rows alone; a non-nil empty map deletes them.
// UpdateWorkflowStatus writes the workflow row and only the nodes whose IDs
// it is given: present in Status.Nodes means upsert, absent means delete.
// An unlisted change is not written, so the caller lists every node it
// touched (engine.Result.Changed). Like the status subresource of
// Kubernetes, it writes metadata and status but never the spec: a spec
// change goes through Update.
//
// Writes are serialized: one writer connection (BEGIN IMMEDIATE) behind a
// mutex that also orders the publication of events; reads use a separate
// pool of query_only connections, which WAL lets run beside a write. Tx
// runs several writes in one transaction, bbolt style, and on rollback
// restores the metadata its writes had set on the caller's objects.
//
// Durability: with WAL and synchronous=NORMAL a commit survives a crash of
// the process; an operating-system crash or power loss can lose the last
// commits (never corrupt the file), which also ends every step process, so
// the controller's restart path treats those steps as lost.
//
// Watch sees the writes of this Store only: one process, one Store per
// file. Watch events are deep copies shared by all watchers of an event: do not
// modify them. Each watcher has a buffer (Options.WatchBuffer); a watcher
// that falls that far behind is dropped and its channel closed, so that a
// slow reader never blocks a writer. A closed channel means: list again
// and watch again.
//
// # Costs (10,000-node workflow; see bench_test.go)
//
// UpdateWorkflowStatus of one node takes about 0.11 to 0.17 ms and appends
// two 4 KiB pages to the WAL (the workflow row's page and the node's leaf
// page). A node whose JSON is large costs its overflow pages: a DAG root
// listing 10,000 children is about 190 KB, and listing it as changed
// appends about 2 pages when its size stays the same (SQLite rewrites only
// the pages whose bytes differ) but 50 pages (200 KB) and about 2 ms when
// its size changes. List such a node only when it really changed. Get
// decodes every node (encoding/json, about 8 µs a node, spread over all
// CPUs; 80 to 200 ms for 10,000 nodes): load a workflow once and keep it,
// do not Get it on every reconcile.
//
// # Imports
//
// This package imports the API types (pkg/apis/v1alpha1), internal/store
// (kinds, options, events, errors), Kubernetes apimachinery (metadata,
// selectors) and the SQLite driver. It must not import the engine, the
// controller, the runtimes, the executor or the server: they use it,
// through interfaces they declare.
package sqlite
