package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are this package's schema, one step per entry. The row
// component = schemaComponent of braid_schema_versions holds how many have
// been applied. Append; never edit a step that has shipped.
var migrations = [...]string{
	// 1: the workflow archive (archive.go) and the memoization caches
	// (memo.go).
	`
CREATE TABLE braid_archived_workflows (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    uid         text        NOT NULL UNIQUE,
    namespace   text        NOT NULL,
    name        text        NOT NULL,
    phase       text        NOT NULL DEFAULT '',
    created_at  timestamptz,           -- metadata.creationTimestamp, to the second; NULL when unset
    started_at  timestamptz,           -- status.startedAt, to the second; NULL when unset
    finished_at timestamptz,           -- status.finishedAt, to the second; NULL when unset
    archived_at timestamptz NOT NULL,  -- from the store's clock
    summary     bytea       NOT NULL,  -- JSON of the workflow without status.nodes
    nodes       bytea                  -- JSON of status.nodes, gzipped when large; NULL when none
);
CREATE INDEX braid_archived_by_start    ON braid_archived_workflows (started_at DESC NULLS LAST, id DESC);
CREATE INDEX braid_archived_by_ns_start ON braid_archived_workflows (namespace, started_at DESC NULLS LAST, id DESC);
CREATE INDEX braid_archived_by_name     ON braid_archived_workflows (namespace, name);

CREATE TABLE braid_archived_labels (
    archive_id bigint NOT NULL REFERENCES braid_archived_workflows (id) ON DELETE CASCADE,
    namespace  text   NOT NULL,          -- copied from the workflow, for label keys and values
    key        text   COLLATE "C" NOT NULL, -- byte order, as the embedded store sorts
    value      text   COLLATE "C" NOT NULL,
    PRIMARY KEY (archive_id, key)
);
CREATE INDEX braid_archived_labels_by_kv ON braid_archived_labels (key, value, archive_id);
CREATE INDEX braid_archived_labels_by_ns ON braid_archived_labels (namespace, key, value);
-- A value mostly comes with one key: without this the planner multiplies
-- their frequencies and takes a common label for a rarer one.
CREATE STATISTICS braid_archived_labels_kv (dependencies, mcv) ON key, value FROM braid_archived_labels;

CREATE TABLE braid_memo (
    namespace   text        NOT NULL,
    cache       text        NOT NULL,  -- memoize.cache.configMap.name
    key         text        NOT NULL,
    node_id     text        NOT NULL,  -- the node whose outputs were saved
    outputs     bytea,                 -- JSON of v1alpha1.Outputs; NULL when the node had none
    created_at  timestamptz NOT NULL,  -- from the store's clock
    last_hit_at timestamptz NOT NULL,  -- created_at until the first hit
    PRIMARY KEY (namespace, cache, key)
);
CREATE INDEX braid_memo_by_last_hit ON braid_memo (last_hit_at);
`,
	// 2: semaphore limits set through the sync API (synclimits.go): the
	// limits of database semaphores (config_map ''), and ConfigMap keys
	// where a caller keeps those here.
	`
CREATE TABLE braid_sync_limits (
    namespace  text    NOT NULL,
    config_map text    NOT NULL,  -- the ConfigMap's name; '' for a database semaphore
    key        text    NOT NULL,
    sync_limit integer NOT NULL CHECK (sync_limit > 0),
    PRIMARY KEY (namespace, config_map, key)
);
`,
}

// schemaVersion is the version of a fully migrated database.
const schemaVersion = len(migrations)

// schemaComponent names this package's row of braid_schema_versions; other
// braid tables in the same database may keep their own rows.
const schemaComponent = "archive"

// migrateLock is the key of the transaction-scoped advisory lock that
// serializes migrations, so that replicas opening a new database at once
// do not race on CREATE TABLE.
const migrateLock int64 = 0x62726169645f6d67 // "braid_mg"

const versionsTable = `CREATE TABLE IF NOT EXISTS braid_schema_versions (
    component   text        PRIMARY KEY,
    version     integer     NOT NULL,
    migrated_at timestamptz NOT NULL DEFAULT now()
)`

// migrate brings the schema to schemaVersion in one transaction, so that
// a failure leaves either the old schema or the new one. A database that
// is current is only read: no lock, no DDL, so a role without CREATE
// privilege can open it.
func migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	have, err := readVersion(ctx, pool)
	if err != nil {
		return err
	}
	if have > schemaVersion {
		return fmt.Errorf("schema version %d, this binary knows %d: %w", have, schemaVersion, ErrSchemaTooNew)
	}
	if have == schemaVersion {
		return nil
	}
	var from int
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLock); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		if _, err := tx.Exec(ctx, versionsTable, pgx.QueryExecModeSimpleProtocol); err != nil {
			return fmt.Errorf("create braid_schema_versions: %w", err)
		}
		// Read again under the lock: another process may have migrated.
		if from, err = readVersion(ctx, tx); err != nil {
			return err
		}
		if from > schemaVersion {
			return fmt.Errorf("schema version %d, this binary knows %d: %w", from, schemaVersion, ErrSchemaTooNew)
		}
		for v := from; v < schemaVersion; v++ {
			if _, err := tx.Exec(ctx, migrations[v], pgx.QueryExecModeSimpleProtocol); err != nil {
				return fmt.Errorf("migration %d: %w", v+1, err)
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO braid_schema_versions (component, version) VALUES ($1, $2)
			ON CONFLICT (component) DO UPDATE SET version = excluded.version, migrated_at = now()`,
			schemaComponent, schemaVersion)
		if err != nil {
			return fmt.Errorf("record schema version: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if from < schemaVersion {
		log.Info("postgres archive schema migrated", "from", from, "to", schemaVersion)
	}
	return nil
}

// queryRower is a pool or a transaction.
type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// readVersion is the applied schema version; 0 when nothing was applied.
func readVersion(ctx context.Context, q queryRower) (int, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT to_regclass('braid_schema_versions') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	err := q.QueryRow(ctx, `SELECT version FROM braid_schema_versions WHERE component = $1`, schemaComponent).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}
