package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The workflow archive: completed workflows kept after they leave the live
// store (argo archive). An archived workflow is keyed by its uid; it is one
// row of braid_archived_workflows (the workflow without its nodes as JSON,
// its nodes apart and gzip-compressed when large) and one row of
// braid_archived_labels per label, indexed by (key, value), so that a
// label selector is answered from the index rather than by decoding rows.

// Archive stores wf in the archive; see ArchiveBatch.
func (s *Store) Archive(ctx context.Context, wf *v1alpha1.Workflow) error {
	return s.ArchiveBatch(ctx, []*v1alpha1.Workflow{wf})
}

// ArchiveBatch stores wfs, nodes included, in the archive: one
// transaction of three statements whatever the batch's size (the rows,
// then their labels replaced). It is idempotent by uid: archiving a
// workflow again replaces the earlier copy, labels included; a uid twice
// in one batch keeps the later copy. Each workflow needs a uid, a name and
// a namespace (ErrInvalid, and nothing is written).
func (s *Store) ArchiveBatch(ctx context.Context, wfs []*v1alpha1.Workflow) error {
	if err := s.open("archive"); err != nil {
		return err
	}
	// The last copy of a uid wins; rows go in the batch's order, so that
	// among equal start times the later archived lists first.
	last := make(map[string]int, len(wfs))
	for i, wf := range wfs {
		if wf != nil {
			last[string(wf.UID)] = i
		}
	}
	var cols archiveColumns
	for i, wf := range wfs {
		r, err := encodeArchived(wf)
		if err != nil {
			return fmt.Errorf("archive: %w", err)
		}
		if last[r.uid] == i {
			cols.add(r)
		}
	}
	if len(cols.uid) == 0 {
		return nil
	}
	batch := &pgx.Batch{}
	batch.Queue(upsertArchived, cols.uid, cols.namespace, cols.name, cols.phase,
		cols.created, cols.started, cols.finished, s.now(), cols.summary, cols.nodes)
	batch.Queue(deleteLabels, cols.uid)
	batch.Queue(insertLabels, cols.labelUID, cols.labelKey, cols.labelValue)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return fmt.Errorf("archive %d workflows (%s, ...): %w", len(cols.uid), cols.first, err)
	}
	return nil
}

// The statements of ArchiveBatch, on arrays of one element per workflow
// (per label for the labels).
const (
	upsertArchived = `INSERT INTO braid_archived_workflows
		(uid, namespace, name, phase, created_at, started_at, finished_at, archived_at, summary, nodes)
		SELECT r.uid, r.namespace, r.name, r.phase, r.created_at, r.started_at, r.finished_at, $8, r.summary, r.nodes
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[],
			$7::timestamptz[], $9::bytea[], $10::bytea[])
			AS r (uid, namespace, name, phase, created_at, started_at, finished_at, summary, nodes)
		ON CONFLICT (uid) DO UPDATE SET namespace = excluded.namespace, name = excluded.name,
			phase = excluded.phase, created_at = excluded.created_at, started_at = excluded.started_at,
			finished_at = excluded.finished_at, archived_at = excluded.archived_at,
			summary = excluded.summary, nodes = excluded.nodes`
	deleteLabels = `DELETE FROM braid_archived_labels l USING braid_archived_workflows w
		WHERE l.archive_id = w.id AND w.uid = ANY ($1::text[])`
	insertLabels = `INSERT INTO braid_archived_labels (archive_id, namespace, key, value)
		SELECT w.id, w.namespace, l.key, l.value
		FROM unnest($1::text[], $2::text[], $3::text[]) AS l (uid, key, value)
		JOIN braid_archived_workflows w ON w.uid = l.uid`
)

// archivedRow is the encoded columns of an archived workflow.
type archivedRow struct {
	key, uid, namespace, name, phase string
	created, started, finished       pgtype.Timestamptz
	summary, nodes                   []byte // nodes nil when the workflow has none
	labels                           map[string]string
}

// archiveColumns are the rows of a batch as columns, and their labels.
type archiveColumns struct {
	first                          string // a workflow's namespace/name, for errors
	uid, namespace, name, phase    []string
	created, started, finished     []pgtype.Timestamptz
	summary, nodes                 [][]byte
	labelUID, labelKey, labelValue []string
}

func (c *archiveColumns) add(r archivedRow) {
	if c.first == "" {
		c.first = r.key
	}
	c.uid, c.namespace = append(c.uid, r.uid), append(c.namespace, r.namespace)
	c.name, c.phase = append(c.name, r.name), append(c.phase, r.phase)
	c.created, c.started, c.finished = append(c.created, r.created), append(c.started, r.started), append(c.finished, r.finished)
	c.summary, c.nodes = append(c.summary, r.summary), append(c.nodes, r.nodes)
	for k, v := range r.labels {
		c.labelUID, c.labelKey, c.labelValue = append(c.labelUID, r.uid), append(c.labelKey, k), append(c.labelValue, v)
	}
}

func encodeArchived(wf *v1alpha1.Workflow) (archivedRow, error) {
	if wf == nil {
		return archivedRow{}, fmt.Errorf("nil workflow: %w", ErrInvalid)
	}
	r := archivedRow{key: wf.Namespace + "/" + wf.Name, uid: string(wf.UID), namespace: wf.Namespace,
		name: wf.Name, phase: string(wf.Status.Phase)}
	if wf.UID == "" || wf.Name == "" || wf.Namespace == "" {
		return r, fmt.Errorf("%s: uid, name and namespace are required: %w", r.key, ErrInvalid)
	}
	var err error
	if r.summary, err = store.ArchivedSummary(wf); err != nil {
		return r, fmt.Errorf("%s: %w", r.key, err)
	}
	if r.nodes, err = store.ArchivedNodes(wf.Status.Nodes); err != nil {
		return r, fmt.Errorf("%s: %w", r.key, err)
	}
	r.created, r.started, r.finished = pgTime(wf.CreationTimestamp.Time), pgTime(wf.Status.StartedAt.Time), pgTime(wf.Status.FinishedAt.Time)
	r.labels = wf.Labels
	return r, nil
}

// seconds is t to the second (what the workflow's JSON keeps, and what
// the list filters compare), or nil for the zero time.
func seconds(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC().Truncate(time.Second)
	return &u
}

// pgTime is seconds(t) as a column value: NULL for the zero time.
func pgTime(t time.Time) pgtype.Timestamptz {
	if u := seconds(t); u != nil {
		return pgtype.Timestamptz{Time: *u, Valid: true}
	}
	return pgtype.Timestamptz{}
}

// GetArchived returns the archived workflow with this uid, nodes included;
// store.ErrNotFound when there is none.
func (s *Store) GetArchived(ctx context.Context, uid string) (*v1alpha1.Workflow, error) {
	what := "get archived workflow " + uid
	if err := s.open(what); err != nil {
		return nil, err
	}
	var summary, nodes []byte
	err := s.pool.QueryRow(ctx, `SELECT summary, nodes FROM braid_archived_workflows WHERE uid = $1`, uid).Scan(&summary, &nodes)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	wf, err := store.DecodeArchived(summary, nodes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return wf, nil
}

// DeleteArchived removes the archived workflow with this uid and its
// labels; store.ErrNotFound when there is none.
func (s *Store) DeleteArchived(ctx context.Context, uid string) error {
	what := "delete archived workflow " + uid
	if err := s.open(what); err != nil {
		return err
	}
	// The labels go by ON DELETE CASCADE, in the same statement.
	tag, err := s.pool.Exec(ctx, `DELETE FROM braid_archived_workflows WHERE uid = $1`, uid)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return nil
}
