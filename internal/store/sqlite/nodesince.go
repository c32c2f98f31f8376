package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// WorkflowNodesSince reads a workflow without its nodes, the nodes written
// after resourceVersion since (whole), and the IDs of every node it has
// now, in one snapshot. A reader that holds the nodes as of since (the
// server's node stream) so learns what changed without decoding the nodes
// that did not: each node row carries the version that last wrote it.
func (s *Store) WorkflowNodesSince(ctx context.Context, namespace, name string, since int64) (*v1alpha1.Workflow, v1alpha1.Nodes, []string, error) {
	k, _ := lookupKind(store.KindWorkflow)
	key := k.key(k.scope(namespace), name)
	if s.shut.Load() {
		return nil, nil, nil, fmt.Errorf("get %s: %w", key, ErrClosed)
	}
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("get %s: %w", key, err)
	}
	defer func() { _ = tx.Rollback() }()
	id, obj, err := readRow(ctx, tx, k, k.scope(namespace), name)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("get %s: %w", key, err)
	}
	wf, ok := obj.(*v1alpha1.Workflow)
	if !ok {
		return nil, nil, nil, fmt.Errorf("get %s: decoded %T", key, obj)
	}
	rows, err := tx.QueryContext(ctx, `SELECT node_id, CASE WHEN rv > ? THEN body END FROM nodes WHERE object_id = ?`, since, id)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("get %s: read nodes: %w", key, err)
	}
	defer func() { _ = rows.Close() }()
	var (
		ids, changedIDs []string
		bodies          [][]byte
	)
	for rows.Next() {
		var (
			nid  string
			body []byte
		)
		if err := rows.Scan(&nid, &body); err != nil {
			return nil, nil, nil, fmt.Errorf("get %s: read nodes: %w", key, err)
		}
		ids = append(ids, nid)
		if body != nil {
			changedIDs, bodies = append(changedIDs, nid), append(bodies, body)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("get %s: read nodes: %w", key, err)
	}
	decoded, err := decodeNodes(changedIDs, bodies)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("get %s: %w", key, err)
	}
	changed := make(v1alpha1.Nodes, len(changedIDs))
	for i, nid := range changedIDs {
		changed[nid] = decoded[i]
	}
	return wf, changed, ids, nil
}
