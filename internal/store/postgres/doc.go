// Package postgres is the workflow archive and the memoization caches of
// a Kubernetes deployment, in PostgreSQL (pgx, a connection pool). The
// embedded deployment keeps both in its SQLite file (internal/store/sqlite,
// archive.go and memo.go); this package gives the same methods with the
// same semantics and errors, so the consumers' interfaces are satisfied
// unchanged: server.Archive, controller.Archiver, controller.MemoStore and
// controller.MemoPruner (guards in guards_test.go).
//
// # What it owns
//
//   - Open / OpenWith: the pool, and the tables, created or migrated
//     idempotently (schema.go). The applied version is the row
//     component='archive' of braid_schema_versions; migrations run in one
//     transaction under an advisory lock, so replicas starting together
//     migrate once; a current database is only read (no DDL, no lock). A
//     database migrated by a newer braid is refused (ErrSchemaTooNew).
//     Tables live in the connection's search_path (the DSN may set it).
//   - The archive (archive.go, list.go): ArchiveBatch (idempotent by uid:
//     an upsert; one transaction of three statements over arrays whatever
//     the batch's size), Archive, GetArchived (nodes included),
//     DeleteArchived, ListArchived (without nodes; newest start first,
//     never started last, then the later archived first; Limit+Offset
//     paging, and whether more follow), CountArchived, ArchivedLabelKeys,
//     ArchivedLabelValues (sorted by bytes, read by a loose index scan).
//   - The memoization caches (memo.go): LoadMemo, SaveMemo (saving the same
//     node's entry again changes nothing), HitMemo, PruneMemos, DeleteMemos.
//   - Semaphore limits set through the sync API (synclimits.go):
//     GetSyncLimit, CreateSyncLimit, UpdateSyncLimit, DeleteSyncLimit,
//     SyncLimitKeys, as the embedded store's.
//
// # Semantics shared with the embedded store
//
// Label selectors use Kubernetes' syntax (k8s.io/apimachinery labels) and
// are answered from the label table's (key, value) index: != and notin
// also match a workflow without the label; gt and lt match values that
// are int64 integers written canonically ("007" is not). Name filters
// Exact, Prefix, Contains and NotEquals compare literally (no pattern
// characters). CreatedAfter and FinishedBefore are exclusive, to the
// second. A selector or name filter that is wrong, or a negative limit or
// offset, is store.ErrInvalid (the server answers 400); an unknown uid is
// store.ErrNotFound. Node maps whose JSON is 4 KiB or more are stored
// gzipped, as the embedded store does. Timestamps of the archive row and
// of memo entries come from the injected clock (Options.Clock).
//
// Every statement runs as an unnamed prepared statement with a cached
// description (pgx QueryExecModeCacheDescribe): one round trip, a plan made
// for the call's own values (whether to walk the workflows newest first or
// to start from a rare label depends on them), and it works through
// poolers in transaction mode.
//
// # Schema (version 2)
//
//	braid_archived_workflows  id (identity) PK, uid UNIQUE, namespace, name,
//	        phase, created_at, started_at, finished_at (timestamptz to the
//	        second, NULL when unset), archived_at, summary (JSON of the
//	        workflow without status.nodes), nodes (JSON, gzipped when large)
//	        indexes: (started_at DESC NULLS LAST, id DESC),
//	                 (namespace, started_at DESC NULLS LAST, id DESC), (namespace, name)
//	braid_archived_labels  archive_id -> braid_archived_workflows ON DELETE
//	        CASCADE, namespace, key, value (COLLATE "C"); PK (archive_id, key)
//	        indexes: (key, value, archive_id), (namespace, key, value);
//	        extended statistics on (key, value)
//	braid_memo  (namespace, cache, key) PK, node_id, outputs (JSON, NULL
//	        when none), created_at, last_hit_at; index (last_hit_at)
//	braid_sync_limits  (namespace, config_map, key) PK, sync_limit (> 0);
//	        config_map '' for a database semaphore (version 2)
//	braid_schema_versions  component PK, version, migrated_at
//
// # Costs (see BenchmarkArchiveList)
//
// 100,000 archived workflows with three labels each; the first page of 20
// with a label selector takes about 1 ms of server time whether the label
// is common (one in 10: the workflows are walked newest first) or rare
// (one in 1,000: the label index is read and sorted).
//
// # Imports
//
// The API types, internal/store, pgx and apimachinery's labels. It must not
// import the engine, the controller, the runtimes, the server, or the
// other stores.
package postgres
