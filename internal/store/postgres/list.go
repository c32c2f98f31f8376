package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// ListArchived returns the archived workflows that opts selects, most
// recently started first (then most recently archived first; never
// started last), WITHOUT their nodes, and whether more follow the page
// (Limit set and another workflow matches after it).
//
// A label selector becomes EXISTS conditions on braid_archived_labels,
// which PostgreSQL plans per call with the call's values (see OpenWith):
// walking the workflows newest first and probing each one's labels when
// the label is common, or starting from the (key, value) index and
// sorting when it is rare.
func (s *Store) ListArchived(ctx context.Context, opts store.ArchiveListOptions) ([]v1alpha1.Workflow, bool, error) {
	const what = "list archived workflows"
	if err := s.open(what); err != nil {
		return nil, false, err
	}
	if opts.Limit < 0 || opts.Offset < 0 {
		return nil, false, fmt.Errorf("%s: negative limit or offset: %w", what, ErrInvalid)
	}
	var q sqlArgs
	where, err := archiveWhere(&q, opts)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	sql := `SELECT a.summary FROM braid_archived_workflows a` + where +
		` ORDER BY a.started_at DESC NULLS LAST, a.id DESC`
	if opts.Limit > 0 {
		// One more than asked says whether a next page exists.
		sql += ` LIMIT ` + q.arg(opts.Limit+1)
	}
	if opts.Offset > 0 {
		sql += ` OFFSET ` + q.arg(opts.Offset)
	}
	rows, err := s.pool.Query(ctx, sql, q.args...)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var (
		out  []v1alpha1.Workflow
		more bool
	)
	for rows.Next() {
		if opts.Limit > 0 && len(out) == opts.Limit {
			more = true
			break
		}
		var summary []byte
		if err := rows.Scan(&summary); err != nil {
			return nil, false, fmt.Errorf("%s: %w", what, err)
		}
		wf, err := store.DecodeArchived(summary, nil)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, *wf)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	return out, more, nil
}

// CountArchived is how many archived workflows opts selects, ignoring
// Limit and Offset.
func (s *Store) CountArchived(ctx context.Context, opts store.ArchiveListOptions) (int64, error) {
	const what = "count archived workflows"
	if err := s.open(what); err != nil {
		return 0, err
	}
	var q sqlArgs
	where, err := archiveWhere(&q, opts)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM braid_archived_workflows a`+where, q.args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return n, nil
}

// sqlArgs collects a statement's arguments; arg returns the placeholder
// of the one it adds.
type sqlArgs struct{ args []any }

func (q *sqlArgs) arg(v any) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args))
}

// archiveWhere is the WHERE clause ("" when empty) of opts over the table
// braid_archived_workflows aliased a; its arguments go to q.
func archiveWhere(q *sqlArgs, opts store.ArchiveListOptions) (string, error) {
	var conds []string
	if opts.Namespace != "" {
		conds = append(conds, "a.namespace = "+q.arg(opts.Namespace))
	}
	if opts.NamePrefix != "" {
		conds = append(conds, "starts_with(a.name, "+q.arg(opts.NamePrefix)+")")
	}
	if opts.Name != "" {
		switch opts.NameFilter {
		case "", store.NameExact:
			conds = append(conds, "a.name = "+q.arg(opts.Name))
		case store.NamePrefix:
			conds = append(conds, "starts_with(a.name, "+q.arg(opts.Name)+")")
		case store.NameContains:
			conds = append(conds, "strpos(a.name, "+q.arg(opts.Name)+") > 0")
		case store.NameNotEquals:
			conds = append(conds, "a.name <> "+q.arg(opts.Name))
		default:
			return "", fmt.Errorf("name filter %q is not one of Exact, Contains, Prefix, NotEquals: %w", opts.NameFilter, ErrInvalid)
		}
	}
	if t := seconds(opts.CreatedAfter); t != nil {
		conds = append(conds, "a.created_at > "+q.arg(*t))
	}
	if t := seconds(opts.CreatedBefore); t != nil {
		conds = append(conds, "a.created_at < "+q.arg(*t))
	}
	if t := seconds(opts.FinishedBefore); t != nil {
		conds = append(conds, "a.finished_at < "+q.arg(*t))
	}
	lc, err := labelConds(q, opts.LabelSelector)
	if err != nil {
		return "", err
	}
	conds = append(conds, lc...)
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), nil
}

// integerLabel holds when a label value is an integer of int64's range
// written as strconv.FormatInt writes it ("007", "+5" and "-0" are not),
// as the embedded store decides. CASE keeps the cast from seeing other
// values.
const integerLabel = `CASE WHEN l.value ~ '^(0|-?[1-9][0-9]{0,18})$'
	AND l.value::numeric BETWEEN -9223372036854775808 AND 9223372036854775807
	THEN l.value::numeric %s %s ELSE false END`

// labelConds turns a label selector into SQL conditions on
// braid_archived_labels, with Kubernetes' semantics: != and notin also
// match a workflow without the label; gt and lt match integer values only.
func labelConds(q *sqlArgs, sel string) ([]string, error) {
	if strings.TrimSpace(sel) == "" {
		return nil, nil
	}
	parsed, err := labels.Parse(sel)
	if err != nil {
		return nil, fmt.Errorf("label selector %q: %v: %w", sel, err, ErrInvalid)
	}
	reqs, _ := parsed.Requirements()
	out := make([]string, 0, len(reqs))
	for _, r := range reqs {
		has := `EXISTS (SELECT 1 FROM braid_archived_labels l WHERE l.archive_id = a.id AND l.key = ` + q.arg(r.Key())
		in := func() string {
			vals := r.Values().List() // sorted
			ph := make([]string, len(vals))
			for i, v := range vals {
				ph[i] = q.arg(v)
			}
			return ` AND l.value IN (` + strings.Join(ph, ", ") + `))`
		}
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			out = append(out, has+in())
		case selection.NotEquals, selection.NotIn:
			out = append(out, `NOT `+has+in())
		case selection.Exists:
			out = append(out, has+`)`)
		case selection.DoesNotExist:
			out = append(out, `NOT `+has+`)`)
		case selection.GreaterThan, selection.LessThan:
			v := r.Values().List()[0]
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("label selector %q: %q is not an integer: %w", sel, v, ErrInvalid)
			}
			op := ">"
			if r.Operator() == selection.LessThan {
				op = "<"
			}
			out = append(out, has+` AND `+fmt.Sprintf(integerLabel, op, q.arg(n))+`)`)
		default:
			return nil, fmt.Errorf("label selector %q: operator %q is not supported: %w", sel, r.Operator(), ErrInvalid)
		}
	}
	return out, nil
}

// ArchivedLabelKeys lists, sorted by bytes, the label keys of the
// archived workflows of a namespace ("" for every namespace). It skips from
// key to key through an index (a loose index scan), so it reads one index
// entry per distinct key rather than every label row.
func (s *Store) ArchivedLabelKeys(ctx context.Context, namespace string) ([]string, error) {
	const what = "archived label keys"
	if err := s.open(what); err != nil {
		return nil, err
	}
	var q sqlArgs
	first, next := "true", "l.key > k.key"
	if namespace != "" {
		ns := q.arg(namespace)
		first, next = "namespace = "+ns, "l.namespace = "+ns+" AND "+next
	}
	sql := `WITH RECURSIVE k (key) AS (
		(SELECT key FROM braid_archived_labels WHERE ` + first + ` ORDER BY key LIMIT 1)
		UNION ALL
		SELECT (SELECT l.key FROM braid_archived_labels l WHERE ` + next + ` ORDER BY l.key LIMIT 1)
		FROM k WHERE k.key IS NOT NULL
	) SELECT key FROM k WHERE key IS NOT NULL`
	out, err := s.strings(ctx, sql, q.args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// ArchivedLabelValues lists, sorted by bytes, the values the label key
// takes on the archived workflows of a namespace ("" for every namespace),
// skipping from value to value through an index as ArchivedLabelKeys does.
func (s *Store) ArchivedLabelValues(ctx context.Context, namespace, key string) ([]string, error) {
	what := "archived label values of " + key
	if err := s.open(what); err != nil {
		return nil, err
	}
	var q sqlArgs
	k := q.arg(key)
	first, next := "key = "+k, "l.key = "+k+" AND l.value > v.value"
	if namespace != "" {
		ns := q.arg(namespace)
		first, next = "namespace = "+ns+" AND "+first, "l.namespace = "+ns+" AND "+next
	}
	sql := `WITH RECURSIVE v (value) AS (
		(SELECT value FROM braid_archived_labels WHERE ` + first + ` ORDER BY value LIMIT 1)
		UNION ALL
		SELECT (SELECT l.value FROM braid_archived_labels l WHERE ` + next + ` ORDER BY l.value LIMIT 1)
		FROM v WHERE v.value IS NOT NULL
	) SELECT value FROM v WHERE value IS NOT NULL`
	out, err := s.strings(ctx, sql, q.args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// strings runs a query of one text column.
func (s *Store) strings(ctx context.Context, sql string, args ...any) ([]string, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	return out, nil
}
