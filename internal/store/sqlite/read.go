package sqlite

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// querier is what reads need: a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// getObject reads one object and, for a Workflow, all its nodes. q should
// be a transaction so that both reads see one snapshot.
func getObject(ctx context.Context, q querier, k kindInfo, ns, name string) (store.Object, error) {
	key := k.key(ns, name)
	id, obj, err := readRow(ctx, q, k, ns, name)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	if wf, ok := obj.(*v1alpha1.Workflow); ok {
		if wf.Status.Nodes, err = readNodes(ctx, q, id); err != nil {
			return nil, fmt.Errorf("get %s: %w", key, err)
		}
	}
	return obj, nil
}

// readObject reads one object without a workflow's nodes.
func readObject(ctx context.Context, q querier, k kindInfo, ns, name string) (store.Object, error) {
	_, obj, err := readRow(ctx, q, k, ns, name)
	return obj, err
}

func readRow(ctx context.Context, q querier, k kindInfo, ns, name string) (int64, store.Object, error) {
	var (
		id, rv, gen int64
		body, spec  []byte
	)
	err := q.QueryRowContext(ctx, `SELECT o.id, o.resource_version, o.generation, o.body, s.spec
		FROM objects o JOIN specs s ON s.object_id = o.id
		WHERE o.kind = ? AND o.namespace = ? AND o.name = ?`, string(k.kind), ns, name).
		Scan(&id, &rv, &gen, &body, &spec)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil, store.ErrNotFound
	}
	if err != nil {
		return 0, nil, err
	}
	obj, err := decode(k, body, spec, rv, gen)
	return id, obj, err
}

// readNodes assembles the node rows of object id. A workflow without nodes
// gets nil, as it had before it was stored. Decoding JSON is most of the
// cost of reading a large workflow (about 8 µs a node), so large node sets
// are decoded on all CPUs.
func readNodes(ctx context.Context, q querier, id int64) (v1alpha1.Nodes, error) {
	rows, err := q.QueryContext(ctx, `SELECT node_id, body FROM nodes WHERE object_id = ?`, id)
	if err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var (
		ids    []string
		bodies [][]byte
	)
	for rows.Next() {
		var (
			nid  string
			body []byte
		)
		if err := rows.Scan(&nid, &body); err != nil {
			return nil, fmt.Errorf("read nodes: %w", err)
		}
		ids, bodies = append(ids, nid), append(bodies, body)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	decoded, err := decodeNodes(ids, bodies)
	if err != nil {
		return nil, err
	}
	nodes := make(v1alpha1.Nodes, len(ids))
	for i, nid := range ids {
		nodes[nid] = decoded[i]
	}
	return nodes, nil
}

// parallelNodes is the node count above which decoding fans out.
const parallelNodes = 512

func decodeNodes(ids []string, bodies [][]byte) ([]v1alpha1.NodeStatus, error) {
	out := make([]v1alpha1.NodeStatus, len(bodies))
	decodeRange := func(from, to int) error {
		for i := from; i < to; i++ {
			if err := json.Unmarshal(bodies[i], &out[i]); err != nil {
				return fmt.Errorf("decode node %s: %w", ids[i], err)
			}
		}
		return nil
	}
	workers := min(runtime.GOMAXPROCS(0), len(bodies)/parallelNodes)
	if workers <= 1 {
		return out, decodeRange(0, len(bodies))
	}
	var (
		wg   sync.WaitGroup
		errs = make([]error, workers)
		size = (len(bodies) + workers - 1) / workers
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = decodeRange(w*size, min((w+1)*size, len(bodies)))
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// listObjects implements List: SQL filters namespace, name, phase and the
// continue position and orders newest first; the label selector is
// matched in Go on the labels column before a row's body is decoded.
func listObjects(ctx context.Context, q querier, k kindInfo, ns string, opts store.ListOptions) ([]store.Object, string, error) {
	where := []string{"o.kind = ?"}
	args := []any{string(k.kind)}
	if ns != "" {
		where = append(where, "o.namespace = ?")
		args = append(args, ns)
	}
	fw, fa, err := fieldFilter(opts.FieldSelector)
	if err != nil {
		return nil, "", fmt.Errorf("list %s: %w", k.kind, err)
	}
	where, args = append(where, fw...), append(args, fa...)
	nw, na, err := nameAndTimeFilter(opts)
	if err != nil {
		return nil, "", fmt.Errorf("list %s: %w", k.kind, err)
	}
	where, args = append(where, nw...), append(args, na...)
	lsel := labels.Everything()
	if opts.LabelSelector != "" {
		if lsel, err = labels.Parse(opts.LabelSelector); err != nil {
			return nil, "", fmt.Errorf("list %s: label selector %q: %v: %w", k.kind, opts.LabelSelector, err, ErrInvalid)
		}
	}
	if opts.Continue != "" {
		c, err := decodeContinue(opts.Continue)
		if err != nil {
			return nil, "", fmt.Errorf("list %s: %w", k.kind, err)
		}
		where = append(where, "(o.created_at < ? OR (o.created_at = ? AND o.id < ?))")
		args = append(args, c.CreatedAt, c.CreatedAt, c.ID)
	}
	limit := max(opts.Limit, 0)
	query := `SELECT o.id, o.created_at, o.labels, o.resource_version, o.generation, o.body, s.spec
		FROM objects o JOIN specs s ON s.object_id = o.id
		WHERE ` + strings.Join(where, " AND ") + `
		ORDER BY o.created_at DESC, o.id DESC`
	if limit > 0 && lsel.Empty() {
		// One more than asked says whether a next page exists.
		query += " LIMIT ?"
		args = append(args, limit+1)
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, "", fmt.Errorf("list %s: %w", k.kind, err)
	}
	defer func() { _ = rows.Close() }()

	var (
		out  []store.Object
		last continueToken
		more bool
	)
	for rows.Next() {
		var (
			id, createdAt, rv, gen int64
			lbl                    sql.NullString
			body, spec             []byte
		)
		if err := rows.Scan(&id, &createdAt, &lbl, &rv, &gen, &body, &spec); err != nil {
			return nil, "", fmt.Errorf("list %s: %w", k.kind, err)
		}
		if !lsel.Empty() {
			var set labels.Set
			if lbl.Valid {
				if err := json.Unmarshal([]byte(lbl.String), &set); err != nil {
					return nil, "", fmt.Errorf("list %s: decode labels: %w", k.kind, err)
				}
			}
			if !lsel.Matches(set) {
				continue
			}
		}
		if limit > 0 && int64(len(out)) == limit {
			more = true
			break
		}
		obj, err := decode(k, body, spec, rv, gen)
		if err != nil {
			return nil, "", fmt.Errorf("list %s: %w", k.kind, err)
		}
		out = append(out, obj)
		last = continueToken{CreatedAt: createdAt, ID: id}
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("list %s: %w", k.kind, err)
	}
	if !more {
		return out, "", nil
	}
	return out, encodeContinue(last), nil
}

// fieldFilter turns a field selector into SQL conditions. It supports
// metadata.name, metadata.namespace and status.phase with =, == and !=.
func fieldFilter(s string) ([]string, []any, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil, nil
	}
	sel, err := fields.ParseSelector(s)
	if err != nil {
		return nil, nil, fmt.Errorf("field selector %q: %v: %w", s, err, ErrInvalid)
	}
	var (
		where []string
		args  []any
	)
	for _, r := range sel.Requirements() {
		var col string
		switch r.Field {
		case "metadata.name":
			col = "o.name"
		case "metadata.namespace":
			col = "o.namespace"
		case "status.phase":
			col = "o.phase"
		default:
			return nil, nil, fmt.Errorf("field selector %q: field %q is not supported (metadata.name, metadata.namespace, status.phase): %w", s, r.Field, ErrInvalid)
		}
		switch r.Operator {
		case selection.Equals, selection.DoubleEquals:
			where = append(where, col+" = ?")
		case selection.NotEquals:
			where = append(where, col+" <> ?")
		default:
			return nil, nil, fmt.Errorf("field selector %q: operator %q is not supported: %w", s, r.Operator, ErrInvalid)
		}
		args = append(args, r.Value)
	}
	return where, args, nil
}

// nameAndTimeFilter turns ListOptions.Name, NameFilter, CreatedAfter and
// CreatedBefore into SQL conditions.
func nameAndTimeFilter(opts store.ListOptions) ([]string, []any, error) {
	var (
		where []string
		args  []any
	)
	if opts.Name != "" {
		like := strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(opts.Name)
		switch opts.NameFilter {
		case "", "Exact":
			where, args = append(where, "o.name = ?"), append(args, opts.Name)
		case "NotEquals":
			where, args = append(where, "o.name <> ?"), append(args, opts.Name)
		case "Prefix":
			where, args = append(where, `o.name LIKE ? ESCAPE '\'`), append(args, like+"%")
		case "Contains":
			where, args = append(where, `o.name LIKE ? ESCAPE '\'`), append(args, "%"+like+"%")
		default:
			return nil, nil, fmt.Errorf("name filter %q is not one of Exact, Contains, Prefix, NotEquals: %w", opts.NameFilter, ErrInvalid)
		}
	}
	if !opts.CreatedAfter.IsZero() {
		where, args = append(where, "o.created_at > ?"), append(args, opts.CreatedAfter.UnixNano())
	}
	if !opts.CreatedBefore.IsZero() {
		where, args = append(where, "o.created_at < ?"), append(args, opts.CreatedBefore.UnixNano())
	}
	return where, args, nil
}

// continueToken is the position after the last object of a page. It is
// opaque to callers: base64url of this JSON.
type continueToken struct {
	V         int   `json:"v"`
	CreatedAt int64 `json:"t"`
	ID        int64 `json:"i"`
}

const continueVersion = 1

func encodeContinue(c continueToken) string {
	c.V = continueVersion
	b, _ := json.Marshal(c) // cannot fail: ints only
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(s string) (continueToken, error) {
	var c continueToken
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.V != continueVersion || c.ID <= 0 {
		return continueToken{}, fmt.Errorf("continue token %q was not issued by this store: %w", s, ErrInvalid)
	}
	return c, nil
}
