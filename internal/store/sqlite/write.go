package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// stmts are the statements of the write path, prepared once on the writer
// connection and reused by every transaction.
type stmts struct {
	meta       *sql.Stmt
	updateObj  *sql.Stmt
	updateOrd  *sql.Stmt
	updateSpec *sql.Stmt
	upsertNode *sql.Stmt
	deleteNode *sql.Stmt
	dropLabels *sql.Stmt
	putLabel   *sql.Stmt
}

func prepare(ctx context.Context, db *sql.DB) (stmts, error) {
	var s stmts
	var err error
	p := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = db.PrepareContext(ctx, q)
		return st
	}
	s.meta = p(`SELECT id, uid, resource_version, generation, created_at, unfinished, order_at, spec_hash, labels
		FROM objects WHERE kind = ? AND namespace = ? AND name = ?`)
	s.updateObj = p(`UPDATE objects SET resource_version = ?, generation = ?, phase = ?,
		labels = ?, spec_hash = ?, body = ? WHERE id = ?`)
	// Apart, because setting an indexed column rewrites its index entries
	// even when the value is the same: a step's status write must not.
	s.updateOrd = p(`UPDATE objects SET unfinished = ?, order_at = ? WHERE id = ?`)
	s.updateSpec = p(`UPDATE specs SET spec = ? WHERE object_id = ?`)
	s.upsertNode = p(`INSERT INTO nodes (object_id, node_id, rv, body) VALUES (?, ?, ?, ?)
		ON CONFLICT (object_id, node_id) DO UPDATE SET rv = excluded.rv, body = excluded.body`)
	s.deleteNode = p(`DELETE FROM nodes WHERE object_id = ? AND node_id = ?`)
	s.dropLabels = p(`DELETE FROM object_labels WHERE object_id = ?`)
	s.putLabel = p(`INSERT INTO object_labels (object_id, key, value) VALUES (?, ?, ?)`)
	if err != nil {
		s.close()
		return stmts{}, fmt.Errorf("prepare: %w", err)
	}
	return s, nil
}

func (s stmts) close() {
	for _, st := range []*sql.Stmt{s.meta, s.updateObj, s.updateOrd, s.updateSpec, s.upsertNode, s.deleteNode, s.dropLabels, s.putLabel} {
		if st != nil {
			_ = st.Close()
		}
	}
}

// Tx is one write transaction; see Store.Tx. Its methods use the context
// given to Store.Tx.
type Tx struct {
	s      *Store
	ctx    context.Context
	tx     *sql.Tx
	events []pendingEvent
	undo   []func()
}

// Get reads an object inside the transaction, seeing its earlier writes.
func (tx *Tx) Get(kind store.Kind, namespace, name string) (store.Object, error) {
	k, err := lookupKind(kind)
	if err != nil {
		return nil, fmt.Errorf("get: %w", err)
	}
	return getObject(tx.ctx, tx.tx, k, k.scope(namespace), name)
}

// List lists inside the transaction; see Store.List.
func (tx *Tx) List(kind store.Kind, namespace string, opts store.ListOptions) ([]store.Object, string, error) {
	k, err := lookupKind(kind)
	if err != nil {
		return nil, "", fmt.Errorf("list: %w", err)
	}
	return listObjects(tx.ctx, tx.tx, k, k.scope(namespace), opts)
}

// Create stores a new object. obj.Name is required (resolve generateName
// with GenerateName first), and so is obj.Namespace for namespaced kinds;
// a cluster-scoped object's namespace is cleared. Create sets on obj: uid
// (when empty), creationTimestamp (the injected clock, to the second, as
// the Kubernetes API serializes it), resourceVersion "1" and generation 1.
// It also fills in apiVersion and kind. A Workflow's Status.Nodes are
// stored as rows. A taken name gives
// store.ErrAlreadyExists.
func (tx *Tx) Create(obj store.Object) error {
	k, err := kindOf(obj)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	ns, name := k.scope(obj.GetNamespace()), obj.GetName()
	key := k.key(ns, name)
	if name == "" {
		return fmt.Errorf("create %s: metadata.name is required (resolve generateName first): %w", k.kind, ErrInvalid)
	}
	if k.namespaced && ns == "" {
		return fmt.Errorf("create %s: metadata.namespace is required: %w", key, ErrInvalid)
	}
	if _, err := tx.meta(k, ns, name); err == nil {
		return fmt.Errorf("create %s: %w", key, store.ErrAlreadyExists)
	} else if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("create %s: %w", key, err)
	}

	now := tx.s.clock()
	tx.remember(obj)
	obj.GetObjectKind().SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(string(k.kind)))
	obj.SetNamespace(ns)
	if obj.GetUID() == "" {
		obj.SetUID(uuid.NewUUID())
	}
	obj.SetCreationTimestamp(metav1.NewTime(now.Truncate(time.Second)))
	obj.SetResourceVersion("1")
	obj.SetGeneration(1)

	spec, err := encodeSpec(obj)
	if err != nil {
		return fmt.Errorf("create %s: %w", key, err)
	}
	body, err := encodeBody(obj)
	if err != nil {
		return fmt.Errorf("create %s: %w", key, err)
	}
	res, err := tx.tx.ExecContext(tx.ctx, `INSERT INTO objects
		(kind, namespace, name, uid, resource_version, generation, created_at, phase, unfinished, order_at, labels, spec_hash, body)
		VALUES (?, ?, ?, ?, 1, 1, ?, ?, ?, ?, ?, ?, ?)`,
		string(k.kind), ns, name, string(obj.GetUID()), now.UnixNano(), body.phase, body.unfinished, body.orderAt,
		body.labels, spec.hash, body.json)
	if err != nil {
		return fmt.Errorf("create %s: insert: %w", key, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("create %s: %w", key, err)
	}
	if _, err := tx.tx.ExecContext(tx.ctx, `INSERT INTO specs (object_id, spec) VALUES (?, ?)`, id, spec.json); err != nil {
		return fmt.Errorf("create %s: insert spec: %w", key, err)
	}
	if err := tx.writeLabels(id, obj.GetLabels(), false); err != nil {
		return fmt.Errorf("create %s: %w", key, err)
	}
	if wf, ok := obj.(*v1alpha1.Workflow); ok {
		if err := tx.writeAllNodes(id, 1, wf.Status.Nodes, false); err != nil {
			return fmt.Errorf("create %s: %w", key, err)
		}
	}
	tx.emit(k, store.Added, obj)
	return nil
}

// Update replaces a stored object with obj (metadata, spec and status).
// obj.ResourceVersion must equal the stored one, and obj.UID, when set, the
// stored uid; otherwise store.ErrConflict. On success obj gets the new
// resourceVersion; generation grows when the spec changed; uid and
// creationTimestamp are kept from the stored object.
//
// For a Workflow, Update is a full write: every node row is replaced by
// Status.Nodes, and a non-nil empty map deletes them all. A nil
// Status.Nodes (a workflow from List or Watch) leaves the node rows as
// they are. The controller's hot path is UpdateWorkflowStatus.
func (tx *Tx) Update(obj store.Object) error {
	k, err := kindOf(obj)
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	nodes := nodesNone
	if wf, ok := obj.(*v1alpha1.Workflow); ok && wf.Status.Nodes != nil {
		nodes = nodesAll
	}
	return tx.update(k, obj, nodes, nil)
}

// UpdateWorkflowStatus is the hot path. It is Update (same optimistic
// concurrency, same row) except that of the node rows it writes only those
// whose IDs are listed in changedNodes: a listed node present in
// wf.Status.Nodes is inserted or replaced, a listed node absent from it is
// deleted, and every unlisted node row is left untouched. The caller must
// therefore list every node it created, modified or removed since it read
// wf (engine.Result.Changed).
func (tx *Tx) UpdateWorkflowStatus(wf *v1alpha1.Workflow, changedNodes []string) error {
	if wf == nil {
		return fmt.Errorf("update workflow status: nil workflow: %w", ErrInvalid)
	}
	k, _ := lookupKind(store.KindWorkflow)
	return tx.update(k, wf, nodesListed, changedNodes)
}

// Delete removes an object, and a workflow's node rows.
func (tx *Tx) Delete(kind store.Kind, namespace, name string) error {
	k, err := lookupKind(kind)
	if err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	ns := k.scope(namespace)
	key := k.key(ns, name)
	var old store.Object
	if tx.s.hub.wants(k.kind) {
		// The event carries the object as it was, without nodes.
		if old, err = readObject(tx.ctx, tx.tx, k, ns, name); err != nil {
			return fmt.Errorf("delete %s: %w", key, err)
		}
	}
	m, err := tx.meta(k, ns, name)
	if err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	// Node, spec and label rows go explicitly; ON DELETE CASCADE is the
	// safety net.
	for _, q := range []string{
		`DELETE FROM nodes WHERE object_id = ?`,
		`DELETE FROM specs WHERE object_id = ?`,
		`DELETE FROM object_labels WHERE object_id = ?`,
		`DELETE FROM objects WHERE id = ?`,
	} {
		if _, err := tx.tx.ExecContext(tx.ctx, q, m.id); err != nil {
			return fmt.Errorf("delete %s: %w", key, err)
		}
	}
	if old != nil {
		tx.events = append(tx.events, pendingEvent{k.kind, store.Event{Type: store.Deleted, Object: old}})
	}
	return nil
}

// nodeWrite says which node rows a write touches.
type nodeWrite int

const (
	nodesNone   nodeWrite = iota // leave every node row
	nodesAll                     // replace every node row
	nodesListed                  // upsert or delete the listed IDs only
)

// objectMeta is the stored row's metadata that a write checks.
type objectMeta struct {
	id         int64
	uid        string
	rv         int64
	generation int64
	createdAt  int64
	unfinished int64
	orderAt    int64
	specHash   []byte
	labels     sql.NullString // the labels column (JSON)
}

func (tx *Tx) meta(k kindInfo, ns, name string) (objectMeta, error) {
	var m objectMeta
	err := tx.tx.StmtContext(tx.ctx, tx.s.stmts.meta).QueryRowContext(tx.ctx, string(k.kind), ns, name).
		Scan(&m.id, &m.uid, &m.rv, &m.generation, &m.createdAt, &m.unfinished, &m.orderAt, &m.specHash, &m.labels)
	if errors.Is(err, sql.ErrNoRows) {
		return m, store.ErrNotFound
	}
	return m, err
}

func (tx *Tx) update(k kindInfo, obj store.Object, nodes nodeWrite, changed []string) error {
	ns, name := k.scope(obj.GetNamespace()), obj.GetName()
	key := k.key(ns, name)
	m, err := tx.meta(k, ns, name)
	if err != nil {
		return fmt.Errorf("update %s: %w", key, err)
	}
	if rv := obj.GetResourceVersion(); rv != formatRV(m.rv) {
		return fmt.Errorf("update %s: resourceVersion %q, stored %d: %w", key, rv, m.rv, store.ErrConflict)
	}
	if uid := string(obj.GetUID()); uid != "" && uid != m.uid {
		return fmt.Errorf("update %s: uid %s, stored %s (deleted and created again): %w", key, uid, m.uid, store.ErrConflict)
	}
	// A status update (nodes listed) leaves the spec alone, like the status
	// subresource of Kubernetes: hashing a large spec on every step would
	// dominate the hot path.
	spec := encodedSpec{hash: m.specHash}
	if nodes != nodesListed {
		if spec, err = encodeSpec(obj); err != nil {
			return fmt.Errorf("update %s: %w", key, err)
		}
	}
	specChanged := !bytes.Equal(spec.hash, m.specHash)
	rv, gen := m.rv+1, m.generation
	if specChanged {
		gen++
	}

	tx.remember(obj)
	obj.GetObjectKind().SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(string(k.kind)))
	obj.SetNamespace(ns)
	obj.SetUID(types.UID(m.uid))
	obj.SetCreationTimestamp(metav1.NewTime(time.Unix(0, m.createdAt).Truncate(time.Second)))
	obj.SetResourceVersion(formatRV(rv))
	obj.SetGeneration(gen)

	body, err := encodeBody(obj)
	if err != nil {
		return fmt.Errorf("update %s: %w", key, err)
	}
	if _, err := tx.tx.StmtContext(tx.ctx, tx.s.stmts.updateObj).ExecContext(tx.ctx,
		rv, gen, body.phase, body.labels, spec.hash, body.json, m.id); err != nil {
		return fmt.Errorf("update %s: %w", key, err)
	}
	if body.unfinished != m.unfinished || body.orderAt != m.orderAt {
		if _, err := tx.tx.StmtContext(tx.ctx, tx.s.stmts.updateOrd).ExecContext(tx.ctx,
			body.unfinished, body.orderAt, m.id); err != nil {
			return fmt.Errorf("update %s: list order: %w", key, err)
		}
	}
	if labelsChanged(m.labels, body.labels) {
		if err := tx.writeLabels(m.id, obj.GetLabels(), true); err != nil {
			return fmt.Errorf("update %s: %w", key, err)
		}
	}
	if specChanged {
		if _, err := tx.tx.StmtContext(tx.ctx, tx.s.stmts.updateSpec).ExecContext(tx.ctx, spec.json, m.id); err != nil {
			return fmt.Errorf("update %s: spec: %w", key, err)
		}
	}
	if wf, ok := obj.(*v1alpha1.Workflow); ok {
		switch nodes {
		case nodesAll:
			err = tx.writeAllNodes(m.id, rv, wf.Status.Nodes, true)
		case nodesListed:
			err = tx.writeListedNodes(m.id, rv, wf.Status.Nodes, changed)
		}
		if err != nil {
			return fmt.Errorf("update %s: %w", key, err)
		}
	}
	tx.emit(k, store.Modified, obj)
	return nil
}

// labelsChanged compares the stored labels column with the one a write
// sets (a JSON string, or nil): encoding/json sorts map keys, so equal
// labels are equal text.
func labelsChanged(stored sql.NullString, next any) bool {
	s, ok := next.(string)
	return stored.Valid != ok || stored.String != s
}

// writeLabels makes the object_labels rows of object id equal to labels;
// replace first deletes the rows it had. Sorted, for a deterministic row
// order.
func (tx *Tx) writeLabels(id int64, labels map[string]string, replace bool) error {
	if replace {
		if _, err := tx.tx.StmtContext(tx.ctx, tx.s.stmts.dropLabels).ExecContext(tx.ctx, id); err != nil {
			return fmt.Errorf("delete labels: %w", err)
		}
	}
	if len(labels) == 0 {
		return nil
	}
	ins := tx.tx.StmtContext(tx.ctx, tx.s.stmts.putLabel)
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if _, err := ins.ExecContext(tx.ctx, id, k, labels[k]); err != nil {
			return fmt.Errorf("write label %s: %w", k, err)
		}
	}
	return nil
}

// writeAllNodes makes the node rows of object id equal to nodes.
func (tx *Tx) writeAllNodes(id, rv int64, nodes v1alpha1.Nodes, replace bool) error {
	if replace {
		if _, err := tx.tx.ExecContext(tx.ctx, `DELETE FROM nodes WHERE object_id = ?`, id); err != nil {
			return fmt.Errorf("delete nodes: %w", err)
		}
	}
	ids := make([]string, 0, len(nodes))
	for nid := range nodes {
		ids = append(ids, nid)
	}
	slices.Sort(ids) // a deterministic row order
	ins := tx.tx.StmtContext(tx.ctx, tx.s.stmts.upsertNode)
	for _, nid := range ids {
		if err := tx.putNode(ins, id, rv, nid, nodes[nid]); err != nil {
			return err
		}
	}
	return nil
}

// writeListedNodes upserts or deletes the listed node rows of object id.
func (tx *Tx) writeListedNodes(id, rv int64, nodes v1alpha1.Nodes, changed []string) error {
	if len(changed) == 0 {
		return nil
	}
	var ins, del *sql.Stmt
	for _, nid := range changed {
		if n, ok := nodes[nid]; ok {
			if ins == nil {
				ins = tx.tx.StmtContext(tx.ctx, tx.s.stmts.upsertNode)
			}
			if err := tx.putNode(ins, id, rv, nid, n); err != nil {
				return err
			}
			continue
		}
		if del == nil {
			del = tx.tx.StmtContext(tx.ctx, tx.s.stmts.deleteNode)
		}
		if _, err := del.ExecContext(tx.ctx, id, nid); err != nil {
			return fmt.Errorf("delete node %s: %w", nid, err)
		}
	}
	return nil
}

func (tx *Tx) putNode(ins *sql.Stmt, id, rv int64, nid string, n v1alpha1.NodeStatus) error {
	b, err := json.Marshal(&n)
	if err != nil {
		return fmt.Errorf("encode node %s: %w", nid, err)
	}
	if _, err := ins.ExecContext(tx.ctx, id, nid, rv, b); err != nil {
		return fmt.Errorf("write node %s: %w", nid, err)
	}
	return nil
}

// remember records obj's metadata so that a rollback can restore it.
func (tx *Tx) remember(obj store.Object) {
	ns, uid, ts := obj.GetNamespace(), obj.GetUID(), obj.GetCreationTimestamp()
	rv, gen := obj.GetResourceVersion(), obj.GetGeneration()
	tx.undo = append(tx.undo, func() {
		obj.SetNamespace(ns)
		obj.SetUID(uid)
		obj.SetCreationTimestamp(ts)
		obj.SetResourceVersion(rv)
		obj.SetGeneration(gen)
	})
}

// rollbackObjects undoes remember, newest first.
func (tx *Tx) rollbackObjects() {
	for i := len(tx.undo) - 1; i >= 0; i-- {
		tx.undo[i]()
	}
	tx.undo = nil
}

// emit queues an event for after the commit, if anyone watches the kind.
func (tx *Tx) emit(k kindInfo, t store.EventType, obj store.Object) {
	if tx.s.hub.wants(k.kind) {
		tx.events = append(tx.events, pendingEvent{k.kind, store.Event{Type: t, Object: watchCopy(k, obj)}})
	}
}

func formatRV(rv int64) string { return strconv.FormatInt(rv, 10) }
