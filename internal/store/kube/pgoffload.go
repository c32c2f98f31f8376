package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// pgSchema creates the offload table. A version is the hash of the nodes
// JSON, so saving the same nodes twice writes one row.
const pgSchema = `CREATE TABLE IF NOT EXISTS braid_offloaded_nodes (
	uid        text        NOT NULL,
	version    text        NOT NULL,
	nodes      bytea       NOT NULL,
	updated_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (uid, version)
)`

// PGOffloader keeps offloaded node maps in PostgreSQL, gzipped JSON, one
// row per (workflow uid, version).
type PGOffloader struct {
	pool *pgxpool.Pool
}

var _ NodeOffloader = (*PGOffloader)(nil)

// OpenPGOffloader connects to dsn (a postgres:// URL or key=value string)
// and creates the table if it is missing.
func OpenPGOffloader(ctx context.Context, dsn string) (*PGOffloader, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("offload: connect: %w", err)
	}
	if _, err := pool.Exec(ctx, pgSchema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("offload: create table: %w", err)
	}
	return &PGOffloader{pool: pool}, nil
}

// Close closes the connection pool.
func (p *PGOffloader) Close() { p.pool.Close() }

// Save stores nodes and returns their version ("sha256:" and 32 hex digits
// of the nodes JSON).
func (p *PGOffloader) Save(ctx context.Context, uid string, nodes v1alpha1.Nodes) (string, error) {
	if uid == "" {
		return "", errors.New("offload: save: the workflow has no uid")
	}
	raw, err := json.Marshal(nodes)
	if err != nil {
		return "", fmt.Errorf("offload: encode nodes: %w", err)
	}
	sum := sha256.Sum256(raw)
	version := "sha256:" + hex.EncodeToString(sum[:16])
	z, err := gzipBytes(raw)
	if err != nil {
		return "", fmt.Errorf("offload: %w", err)
	}
	_, err = p.pool.Exec(ctx, `INSERT INTO braid_offloaded_nodes (uid, version, nodes) VALUES ($1, $2, $3)
		ON CONFLICT (uid, version) DO UPDATE SET updated_at = now()`, uid, version, z)
	if err != nil {
		return "", fmt.Errorf("offload: save %s %s: %w", uid, version, err)
	}
	return version, nil
}

// Load returns the nodes saved under version; store.ErrNotFound if none.
func (p *PGOffloader) Load(ctx context.Context, uid, version string) (v1alpha1.Nodes, error) {
	var z []byte
	err := p.pool.QueryRow(ctx, `SELECT nodes FROM braid_offloaded_nodes WHERE uid = $1 AND version = $2`, uid, version).Scan(&z)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("offload: load %s %s: %w", uid, version, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("offload: load %s %s: %w", uid, version, err)
	}
	raw, err := gunzipBytes(z)
	if err != nil {
		return nil, fmt.Errorf("offload: load %s %s: %w", uid, version, err)
	}
	var nodes v1alpha1.Nodes
	if err := json.Unmarshal(raw, &nodes); err != nil {
		return nil, fmt.Errorf("offload: load %s %s: decode: %w", uid, version, err)
	}
	return nodes, nil
}

// Prune deletes the versions of uid other than keep last saved before before.
func (p *PGOffloader) Prune(ctx context.Context, uid, keep string, before time.Time) error {
	_, err := p.pool.Exec(ctx, `DELETE FROM braid_offloaded_nodes WHERE uid = $1 AND version <> $2 AND updated_at < $3`,
		uid, keep, before)
	if err != nil {
		return fmt.Errorf("offload: prune %s: %w", uid, err)
	}
	return nil
}

// Delete deletes every version of uid.
func (p *PGOffloader) Delete(ctx context.Context, uid string) error {
	if _, err := p.pool.Exec(ctx, `DELETE FROM braid_offloaded_nodes WHERE uid = $1`, uid); err != nil {
		return fmt.Errorf("offload: delete %s: %w", uid, err)
	}
	return nil
}

// Versions returns the versions kept for uid (for tests and diagnostics).
func (p *PGOffloader) Versions(ctx context.Context, uid string) ([]string, error) {
	rows, err := p.pool.Query(ctx, `SELECT version FROM braid_offloaded_nodes WHERE uid = $1 ORDER BY updated_at`, uid)
	if err != nil {
		return nil, fmt.Errorf("offload: versions %s: %w", uid, err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("offload: versions %s: %w", uid, err)
	}
	return vs, nil
}
