package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The workflow archive: completed workflows kept after they leave the
// objects table (argo archive). An archived workflow is keyed by its uid;
// it is one row of the table archived (the workflow without its nodes as
// JSON, its nodes apart and gzip-compressed when large) and one row of
// archived_labels per label, indexed by (key, value), so that a label
// selector is answered from the index rather than by decoding rows.

// The archive's list options are shared by every archive (store package);
// these aliases keep this package's callers unchanged.
type (
	NameFilter         = store.NameFilter
	ArchiveListOptions = store.ArchiveListOptions
)

// The name filters; "" means Exact.
const (
	NameExact     = store.NameExact
	NameContains  = store.NameContains
	NamePrefix    = store.NamePrefix
	NameNotEquals = store.NameNotEquals
)

// Archive stores wf in the archive, replacing the archived workflow with
// the same uid if there is one; see Tx.Archive.
func (s *Store) Archive(ctx context.Context, wf *v1alpha1.Workflow) error {
	return s.Tx(ctx, func(tx *Tx) error { return tx.Archive(wf) })
}

// ArchiveBatch archives many workflows in one transaction: one commit
// instead of one per workflow.
func (s *Store) ArchiveBatch(ctx context.Context, wfs []*v1alpha1.Workflow) error {
	return s.Tx(ctx, func(tx *Tx) error {
		for _, wf := range wfs {
			if err := tx.Archive(wf); err != nil {
				return err
			}
		}
		return nil
	})
}

// Archive stores wf, nodes included, in the archive. It is idempotent by
// uid: archiving a workflow again replaces the earlier copy. wf needs a
// uid, a name and a namespace. The archive is not watched: Archive
// publishes no event.
func (tx *Tx) Archive(wf *v1alpha1.Workflow) error {
	if wf == nil {
		return fmt.Errorf("archive: nil workflow: %w", ErrInvalid)
	}
	key := wf.Namespace + "/" + wf.Name
	if wf.UID == "" || wf.Name == "" || wf.Namespace == "" {
		return fmt.Errorf("archive %s: uid, name and namespace are required: %w", key, ErrInvalid)
	}
	row, err := encodeArchived(wf)
	if err != nil {
		return fmt.Errorf("archive %s: %w", key, err)
	}
	var id int64
	err = tx.tx.QueryRowContext(tx.ctx, `INSERT INTO archived
		(uid, namespace, name, phase, labels, created_at, started_at, finished_at, archived_at, summary, nodes)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (uid) DO UPDATE SET namespace = excluded.namespace, name = excluded.name,
			phase = excluded.phase, labels = excluded.labels, created_at = excluded.created_at,
			started_at = excluded.started_at, finished_at = excluded.finished_at,
			archived_at = excluded.archived_at, summary = excluded.summary, nodes = excluded.nodes
		RETURNING id`,
		string(wf.UID), wf.Namespace, wf.Name, string(wf.Status.Phase), row.labels,
		unixOrZero(wf.CreationTimestamp.Time), unixOrZero(wf.Status.StartedAt.Time), row.finishedAt,
		tx.s.clock().UnixNano(), row.summary, row.nodes).Scan(&id)
	if err != nil {
		return fmt.Errorf("archive %s: %w", key, err)
	}
	if _, err := tx.tx.ExecContext(tx.ctx, `DELETE FROM archived_labels WHERE archive_id = ?`, id); err != nil {
		return fmt.Errorf("archive %s: labels: %w", key, err)
	}
	if len(wf.Labels) == 0 {
		return nil
	}
	// One statement for all the labels: preparing one per workflow would
	// cost more than the inserts.
	args := make([]any, 0, 4*len(wf.Labels))
	for k, v := range wf.Labels {
		args = append(args, id, wf.Namespace, k, v)
	}
	q := `INSERT INTO archived_labels (archive_id, namespace, key, value) VALUES ` +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?), ", len(wf.Labels)), ", ")
	if _, err := tx.tx.ExecContext(tx.ctx, q, args...); err != nil {
		return fmt.Errorf("archive %s: labels: %w", key, err)
	}
	return nil
}

// archivedRow is the encoded columns of an archived workflow.
type archivedRow struct {
	summary    []byte
	nodes      []byte // nil when the workflow has no nodes
	labels     any    // string (JSON) or nil
	finishedAt any    // int64 or nil
}

func encodeArchived(wf *v1alpha1.Workflow) (archivedRow, error) {
	var r archivedRow
	var err error
	if r.summary, err = store.ArchivedSummary(wf); err != nil {
		return r, err
	}
	if r.nodes, err = store.ArchivedNodes(wf.Status.Nodes); err != nil {
		return r, err
	}
	if len(wf.Labels) > 0 {
		b, err := json.Marshal(wf.Labels)
		if err != nil {
			return r, fmt.Errorf("encode labels: %w", err)
		}
		r.labels = string(b)
	}
	if !wf.Status.FinishedAt.IsZero() {
		r.finishedAt = wf.Status.FinishedAt.Unix()
	}
	return r, nil
}

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// GetArchived returns the archived workflow with this uid, nodes included;
// store.ErrNotFound when there is none.
func (s *Store) GetArchived(ctx context.Context, uid string) (*v1alpha1.Workflow, error) {
	if s.shut.Load() {
		return nil, fmt.Errorf("get archived workflow %s: %w", uid, ErrClosed)
	}
	var summary, nodes []byte
	err := s.r.QueryRowContext(ctx, `SELECT summary, nodes FROM archived WHERE uid = ?`, uid).Scan(&summary, &nodes)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("get archived workflow %s: %w", uid, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get archived workflow %s: %w", uid, err)
	}
	wf, err := store.DecodeArchived(summary, nodes)
	if err != nil {
		return nil, fmt.Errorf("get archived workflow %s: %w", uid, err)
	}
	return wf, nil
}

// DeleteArchived removes the archived workflow with this uid;
// store.ErrNotFound when there is none.
func (s *Store) DeleteArchived(ctx context.Context, uid string) error {
	return s.Tx(ctx, func(tx *Tx) error {
		// Labels go explicitly; ON DELETE CASCADE is the safety net.
		if _, err := tx.tx.ExecContext(tx.ctx,
			`DELETE FROM archived_labels WHERE archive_id = (SELECT id FROM archived WHERE uid = ?)`, uid); err != nil {
			return fmt.Errorf("delete archived workflow %s: %w", uid, err)
		}
		res, err := tx.tx.ExecContext(tx.ctx, `DELETE FROM archived WHERE uid = ?`, uid)
		if err != nil {
			return fmt.Errorf("delete archived workflow %s: %w", uid, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("delete archived workflow %s: %w", uid, err)
		} else if n == 0 {
			return fmt.Errorf("delete archived workflow %s: %w", uid, store.ErrNotFound)
		}
		return nil
	})
}

// ListArchived returns the archived workflows that opts selects, most
// recently started first (then most recently archived first), WITHOUT
// their nodes, and whether more follow the page (Limit set and another
// workflow matches after it).
//
// A label selector is answered in SQL, in one of two ways chosen per call:
// walking the workflows newest first and checking each one's labels in the
// index (cheap when the label is common: the page fills quickly), or
// starting from the index entries of the selector's rarest required label
// and sorting those (cheap when it is rare). See driverFor.
func (s *Store) ListArchived(ctx context.Context, opts ArchiveListOptions) ([]v1alpha1.Workflow, bool, error) {
	return s.listArchived(ctx, opts, planAuto)
}

// listPlan forces a plan of ListArchived, for tests.
type listPlan int

const (
	planAuto  listPlan = iota // driverFor decides
	planWalk                  // walk the workflows newest first
	planLabel                 // start from the rarest required label, if any
)

func (s *Store) listArchived(ctx context.Context, opts ArchiveListOptions, plan listPlan) ([]v1alpha1.Workflow, bool, error) {
	if s.shut.Load() {
		return nil, false, fmt.Errorf("list archived workflows: %w", ErrClosed)
	}
	if opts.Limit < 0 || opts.Offset < 0 {
		return nil, false, fmt.Errorf("list archived workflows: negative limit or offset: %w", ErrInvalid)
	}
	f, err := archiveFilter(opts)
	if err != nil {
		return nil, false, fmt.Errorf("list archived workflows: %w", err)
	}
	// One read transaction: the choice of plan and the list see one snapshot.
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, false, fmt.Errorf("list archived workflows: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	drive, err := driverFor(ctx, tx, opts, f.labels, plan)
	if err != nil {
		return nil, false, fmt.Errorf("list archived workflows: %w", err)
	}
	q, args := `SELECT a.summary FROM archived a`+f.where(), f.args()
	if drive != nil {
		// CROSS JOIN keeps the label rows as the outer loop.
		q = `SELECT a.summary FROM archived_labels d CROSS JOIN archived a` + f.where(
			"a.id = d.archive_id", "d.key = ?", "d.value IN ("+placeholders(len(drive.values))+")")
		args = append(args, drive.key)
		for _, v := range drive.values {
			args = append(args, v)
		}
	}
	q += ` ORDER BY a.started_at DESC, a.id DESC`
	if opts.Limit > 0 {
		// One more than asked says whether a next page exists.
		q += ` LIMIT ? OFFSET ?`
		args = append(args, opts.Limit+1, opts.Offset)
	} else if opts.Offset > 0 {
		q += ` LIMIT -1 OFFSET ?`
		args = append(args, opts.Offset)
	}
	return scanArchived(ctx, tx, q, args, opts.Limit)
}

func scanArchived(ctx context.Context, q querier, query string, args []any, limit int) ([]v1alpha1.Workflow, bool, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, false, fmt.Errorf("list archived workflows: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var (
		out  []v1alpha1.Workflow
		more bool
	)
	for rows.Next() {
		if limit > 0 && len(out) == limit {
			more = true
			break
		}
		var summary []byte
		if err := rows.Scan(&summary); err != nil {
			return nil, false, fmt.Errorf("list archived workflows: %w", err)
		}
		wf, err := store.DecodeArchived(summary, nil)
		if err != nil {
			return nil, false, fmt.Errorf("list archived workflows: %w", err)
		}
		out = append(out, *wf)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("list archived workflows: %w", err)
	}
	return out, more, nil
}

// driveProbe bounds the count of index entries driverFor reads per label.
const driveProbe = 4096

// driverFor picks the required label (=, ==, in, exists) to start a list
// from, or nil to walk the workflows newest first. Walking costs about
// (offset+limit) * total / matching rows; starting from a label costs its
// matching rows (they are sorted). The first is chosen when
// matching^2 > (offset+limit) * total, from a count bounded by driveProbe.
// Listing without a limit always starts from the rarest label.
func driverFor(ctx context.Context, q querier, opts ArchiveListOptions, conds []labelCond, plan listPlan) (*labelCond, error) {
	if plan == planWalk {
		return nil, nil
	}
	var (
		best  *labelCond
		bestN int64
	)
	for i := range conds {
		c := &conds[i]
		if !c.required || len(c.values) == 0 {
			continue
		}
		probe := `SELECT count(*) FROM (SELECT 1 FROM archived_labels WHERE key = ? AND value IN (` +
			placeholders(len(c.values)) + `)`
		args := []any{c.key}
		for _, v := range c.values {
			args = append(args, v)
		}
		if opts.Namespace != "" {
			probe += ` AND namespace = ?`
			args = append(args, opts.Namespace)
		}
		probe += ` LIMIT ?)`
		args = append(args, driveProbe)
		var n int64
		if err := q.QueryRowContext(ctx, probe, args...).Scan(&n); err != nil {
			return nil, fmt.Errorf("count label %s: %w", c.key, err)
		}
		if best == nil || n < bestN {
			best, bestN = c, n
		}
	}
	if best == nil || opts.Limit == 0 || plan == planLabel {
		return best, nil
	}
	if bestN >= driveProbe {
		return nil, nil
	}
	var total int64 // the largest id: an upper bound of the row count, read from the b-tree's end
	if err := q.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM archived`).Scan(&total); err != nil {
		return nil, fmt.Errorf("count archived workflows: %w", err)
	}
	if bestN*bestN > int64(opts.Offset+opts.Limit)*total {
		return nil, nil
	}
	return best, nil
}

// CountArchived is how many archived workflows opts selects, ignoring
// Limit and Offset.
func (s *Store) CountArchived(ctx context.Context, opts ArchiveListOptions) (int64, error) {
	if s.shut.Load() {
		return 0, fmt.Errorf("count archived workflows: %w", ErrClosed)
	}
	f, err := archiveFilter(opts)
	if err != nil {
		return 0, fmt.Errorf("count archived workflows: %w", err)
	}
	var n int64
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM archived a`+f.where(), f.args()...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count archived workflows: %w", err)
	}
	return n, nil
}

// filter is the SQL of ArchiveListOptions over the table archived aliased a.
type filter struct {
	conds  []string
	cargs  []any
	labels []labelCond
}

func (f *filter) add(cond string, args ...any) {
	f.conds, f.cargs = append(f.conds, cond), append(f.cargs, args...)
}

// where is the WHERE clause ("" when empty) of f's conditions and then
// extra ones, whose arguments follow args().
func (f *filter) where(extra ...string) string {
	all := slices.Clone(f.conds)
	for _, l := range f.labels {
		all = append(all, l.sql)
	}
	all = append(all, extra...)
	if len(all) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(all, " AND ")
}

func (f *filter) args() []any {
	out := slices.Clone(f.cargs)
	for _, l := range f.labels {
		out = append(out, l.args...)
	}
	return out
}

func archiveFilter(opts ArchiveListOptions) (*filter, error) {
	f := &filter{}
	if opts.Namespace != "" {
		f.add("a.namespace = ?", opts.Namespace)
	}
	if opts.NamePrefix != "" {
		f.add("substr(a.name, 1, ?) = ?", len(opts.NamePrefix), opts.NamePrefix)
	}
	if opts.Name != "" {
		switch opts.NameFilter {
		case "", NameExact:
			f.add("a.name = ?", opts.Name)
		case NamePrefix:
			f.add("substr(a.name, 1, ?) = ?", len(opts.Name), opts.Name)
		case NameContains:
			f.add("instr(a.name, ?) > 0", opts.Name)
		case NameNotEquals:
			f.add("a.name <> ?", opts.Name)
		default:
			return nil, fmt.Errorf("name filter %q is not one of Exact, Contains, Prefix, NotEquals: %w", opts.NameFilter, ErrInvalid)
		}
	}
	if !opts.CreatedAfter.IsZero() {
		f.add("a.created_at > ?", opts.CreatedAfter.Unix())
	}
	if !opts.CreatedBefore.IsZero() {
		f.add("a.created_at < ?", opts.CreatedBefore.Unix())
	}
	if !opts.FinishedBefore.IsZero() {
		f.add("a.finished_at < ?", opts.FinishedBefore.Unix())
	}
	var err error
	if f.labels, err = labelConds(opts.LabelSelector, archivedHas); err != nil {
		return nil, err
	}
	return f, nil
}

// labelCond is one requirement of a label selector as SQL.
type labelCond struct {
	sql  string
	args []any
	// required: the workflow must carry key with one of values (=, ==,
	// in); with no values, any value (exists).
	required bool
	key      string
	values   []string
	op       selection.Operator
}

// archivedHas starts the condition that an archived workflow (a) has a
// label: the key's argument, then more conditions on l.value, then ")".
const archivedHas = `EXISTS (SELECT 1 FROM archived_labels l WHERE l.archive_id = a.id AND l.key = ?`

// labelConds turns a label selector into SQL conditions on a label table,
// with Kubernetes' semantics: != and notin also match a row without the
// label; gt and lt match integer values written canonically ("007" is
// not). has opens the EXISTS of one label of the row (archivedHas).
func labelConds(sel, has string) ([]labelCond, error) {
	if strings.TrimSpace(sel) == "" {
		return nil, nil
	}
	parsed, err := labels.Parse(sel)
	if err != nil {
		return nil, fmt.Errorf("label selector %q: %v: %w", sel, err, ErrInvalid)
	}
	reqs, _ := parsed.Requirements()
	out := make([]labelCond, 0, len(reqs))
	for _, r := range reqs {
		c := labelCond{key: r.Key(), values: r.Values().List(), op: r.Operator()} // sorted
		in := ` AND l.value IN (` + placeholders(len(c.values)) + `))`
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			c.sql, c.required = has+in, true
		case selection.NotEquals, selection.NotIn:
			c.sql = `NOT ` + has + in
		case selection.Exists:
			c.sql, c.required, c.values = has+`)`, true, nil
		case selection.DoesNotExist:
			c.sql, c.values = `NOT `+has+`)`, nil
		case selection.GreaterThan, selection.LessThan:
			op := ">"
			if r.Operator() == selection.LessThan {
				op = "<"
			}
			n, err := strconv.ParseInt(c.values[0], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("label selector %q: %q is not an integer: %w", sel, c.values[0], ErrInvalid)
			}
			// A label value is an integer when it reads back unchanged.
			c.sql = has + ` AND CAST(CAST(l.value AS INTEGER) AS TEXT) = l.value AND CAST(l.value AS INTEGER) ` + op + ` ?)`
			c.args, c.values = []any{c.key, n}, nil
			out = append(out, c)
			continue
		default:
			return nil, fmt.Errorf("label selector %q: operator %q is not supported: %w", sel, r.Operator(), ErrInvalid)
		}
		c.args = []any{c.key}
		for _, v := range c.values {
			c.args = append(c.args, v)
		}
		out = append(out, c)
	}
	return out, nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// ArchivedLabelKeys lists, sorted, the label keys of the archived
// workflows of a namespace ("" for every namespace).
func (s *Store) ArchivedLabelKeys(ctx context.Context, namespace string) ([]string, error) {
	q, args := `SELECT DISTINCT key FROM archived_labels ORDER BY key`, []any(nil)
	if namespace != "" {
		q, args = `SELECT DISTINCT key FROM archived_labels WHERE namespace = ? ORDER BY key`, []any{namespace}
	}
	out, err := s.queryStrings(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("archived label keys: %w", err)
	}
	return out, nil
}

// ArchivedLabelValues lists, sorted, the values the label key takes on the
// archived workflows of a namespace ("" for every namespace).
func (s *Store) ArchivedLabelValues(ctx context.Context, namespace, key string) ([]string, error) {
	q, args := `SELECT DISTINCT value FROM archived_labels WHERE key = ? ORDER BY value`, []any{key}
	if namespace != "" {
		q, args = `SELECT DISTINCT value FROM archived_labels WHERE namespace = ? AND key = ? ORDER BY value`, []any{namespace, key}
	}
	out, err := s.queryStrings(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("archived label values of %s: %w", key, err)
	}
	return out, nil
}

// strings runs a query of one text column on the read pool.
func (s *Store) queryStrings(ctx context.Context, q string, args ...any) ([]string, error) {
	if s.shut.Load() {
		return nil, ErrClosed
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
