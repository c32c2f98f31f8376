package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
)

// migrations are the schema, one step per entry. PRAGMA user_version holds
// how many have been applied. Append; never edit a step that has shipped.
var migrations = [...]string{
	// 1: objects, their specs, and workflow nodes as rows.
	`
CREATE TABLE objects (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    kind             TEXT    NOT NULL,
    namespace        TEXT    NOT NULL,          -- '' for cluster-scoped kinds
    name             TEXT    NOT NULL,
    uid              TEXT    NOT NULL,
    resource_version INTEGER NOT NULL,          -- per object: 1 on create, +1 per write
    generation       INTEGER NOT NULL,          -- +1 when the spec changes
    created_at       INTEGER NOT NULL,          -- unix nanoseconds from the injected clock
    phase            TEXT    NOT NULL DEFAULT '', -- status.phase (Workflow, CronWorkflow)
    labels           TEXT,                      -- JSON object; NULL when there are none
    spec_hash        BLOB    NOT NULL,          -- sha256 of specs.spec
    body             BLOB    NOT NULL,          -- JSON of the object without spec and status.nodes
    UNIQUE (kind, namespace, name)
) STRICT;
CREATE INDEX objects_by_age    ON objects (kind, created_at DESC, id DESC);
CREATE INDEX objects_by_ns_age ON objects (kind, namespace, created_at DESC, id DESC);

CREATE TABLE specs (
    object_id INTEGER PRIMARY KEY REFERENCES objects (id) ON DELETE CASCADE,
    spec      BLOB NOT NULL                     -- JSON of the object's spec
) STRICT;

CREATE TABLE nodes (
    object_id INTEGER NOT NULL REFERENCES objects (id) ON DELETE CASCADE,
    node_id   TEXT    NOT NULL,
    rv        INTEGER NOT NULL,                 -- the workflow's resource_version when written
    body      BLOB    NOT NULL,                 -- JSON of one v1alpha1.NodeStatus
    UNIQUE (object_id, node_id)
) STRICT;
`,
	// 2: the workflow archive (archive.go): one row per archived workflow,
	// keyed by uid, and its labels as rows so that label selectors are
	// answered by an index.
	`
CREATE TABLE archived (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    uid         TEXT    NOT NULL UNIQUE,
    namespace   TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    phase       TEXT    NOT NULL DEFAULT '',
    labels      TEXT,                      -- JSON object; NULL when there are none
    created_at  INTEGER NOT NULL,          -- unix seconds of metadata.creationTimestamp
    started_at  INTEGER NOT NULL,          -- unix seconds of status.startedAt; 0 when unset
    finished_at INTEGER,                   -- unix seconds of status.finishedAt; NULL when unset
    archived_at INTEGER NOT NULL,          -- unix nanoseconds from the injected clock
    summary     BLOB    NOT NULL,          -- JSON of the workflow without status.nodes
    nodes       BLOB                       -- gzip of the JSON of status.nodes; NULL when none
) STRICT;
CREATE INDEX archived_by_start    ON archived (started_at DESC, id DESC);
CREATE INDEX archived_by_ns_start ON archived (namespace, started_at DESC, id DESC);
CREATE INDEX archived_by_name     ON archived (namespace, name);

CREATE TABLE archived_labels (
    archive_id INTEGER NOT NULL REFERENCES archived (id) ON DELETE CASCADE,
    namespace  TEXT    NOT NULL,           -- copied from archived, for label keys/values
    key        TEXT    NOT NULL,
    value      TEXT    NOT NULL,
    PRIMARY KEY (archive_id, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX archived_labels_by_kv ON archived_labels (key, value, archive_id);
CREATE INDEX archived_labels_by_ns ON archived_labels (namespace, key, value);
`,
	// 3: the memoization caches (memo.go): one row per (namespace, cache
	// name, key), as Argo keeps one ConfigMap key per entry.
	`
CREATE TABLE memo (
    namespace   TEXT    NOT NULL,
    cache       TEXT    NOT NULL,          -- memoize.cache.configMap.name
    key         TEXT    NOT NULL,
    node_id     TEXT    NOT NULL,          -- the node whose outputs were saved
    outputs     BLOB,                      -- JSON of v1alpha1.Outputs; NULL when the node had none
    created_at  INTEGER NOT NULL,          -- unix nanoseconds from the injected clock
    last_hit_at INTEGER NOT NULL,          -- unix nanoseconds; created_at until the first hit
    PRIMARY KEY (namespace, cache, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX memo_by_last_hit ON memo (last_hit_at);
`,
	// 4: the columns of Argo's list order (store.OrderArgo), so that a whole
	// list is read in that order, a page at a time, from an index.
	`
ALTER TABLE objects ADD COLUMN unfinished INTEGER NOT NULL DEFAULT 1; -- 0 once a Workflow's status.finishedAt is set
ALTER TABLE objects ADD COLUMN order_at   INTEGER NOT NULL DEFAULT 0; -- unix seconds: status.finishedAt once set, else creationTimestamp
UPDATE objects SET order_at = created_at / 1000000000;
UPDATE objects SET unfinished = 0,
    order_at = coalesce(unixepoch(json_extract(CAST(body AS TEXT), '$.status.finishedAt')), order_at)
    WHERE kind = 'Workflow' AND json_extract(CAST(body AS TEXT), '$.status.finishedAt') IS NOT NULL;
CREATE INDEX objects_by_order    ON objects (kind, unfinished DESC, order_at DESC, created_at DESC, id DESC);
CREATE INDEX objects_by_ns_order ON objects (kind, namespace, unfinished DESC, order_at DESC, created_at DESC, id DESC);
`,
	// 5: semaphore limits set through the sync API (synclimits.go): the
	// ConfigMap keys of configMapKeyRef semaphores, and the limits of
	// database semaphores (config_map '').
	`
CREATE TABLE sync_limits (
    namespace  TEXT    NOT NULL,
    config_map TEXT    NOT NULL,          -- the ConfigMap's name; '' for a database semaphore
    key        TEXT    NOT NULL,
    sync_limit INTEGER NOT NULL,          -- at least 1
    PRIMARY KEY (namespace, config_map, key)
) STRICT, WITHOUT ROWID;
`,
	// 6: the labels of objects as rows (objects.labels stays the
	// authority, and what List matches), so that a count by label selector
	// (Count) reads an index instead of parsing each row's JSON.
	`
CREATE TABLE object_labels (
    object_id INTEGER NOT NULL REFERENCES objects (id) ON DELETE CASCADE,
    key       TEXT    NOT NULL,
    value     TEXT    NOT NULL,
    PRIMARY KEY (object_id, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX object_labels_by_kv ON object_labels (key, value, object_id);
INSERT INTO object_labels (object_id, key, value)
    SELECT o.id, j.key, j.value FROM objects o, json_each(o.labels) j WHERE o.labels IS NOT NULL;
`,
}

// schemaVersion is the user_version of a fully migrated database.
const schemaVersion = len(migrations)

// migrate brings the database to schemaVersion in one transaction, so a
// crash leaves either the old schema or the new one.
func migrate(ctx context.Context, db *sql.DB, log *slog.Logger) error {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE on the writer
	if err != nil {
		return fmt.Errorf("begin migration: %w", err)
	}
	defer func() { _ = tx.Rollback() }()

	var have int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return fmt.Errorf("read user_version: %w", err)
	}
	if have > schemaVersion {
		return fmt.Errorf("schema version %d, this binary knows %d: %w", have, schemaVersion, ErrSchemaTooNew)
	}
	if have == schemaVersion {
		return nil
	}
	for v := have; v < schemaVersion; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migration %d: %w", v+1, err)
		}
	}
	// PRAGMA takes no parameters; the value is a constant of this package.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return fmt.Errorf("set user_version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit migration: %w", err)
	}
	log.Info("sqlite store schema migrated", "from", have, "to", schemaVersion)
	return nil
}
