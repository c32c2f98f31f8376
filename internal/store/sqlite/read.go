package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	"k8s.io/apimachinery/pkg/fields"
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
