package store

import (
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Errors a store returns; wrap them with %w and test with errors.Is.
var (
	// ErrNotFound: no object of that kind, namespace and name.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists: Create of a name that is taken.
	ErrAlreadyExists = errors.New("already exists")
	// ErrConflict: Update with a stale resourceVersion.
	ErrConflict = errors.New("conflict: the object has been modified; read it again and retry")
	// ErrInvalid: the call itself is wrong and retrying cannot help (a
	// selector that does not parse, an unknown name filter, ...).
	ErrInvalid = errors.New("invalid argument")
	// ErrForbidden: the store serves only some namespaces (a namespaced
	// braid), and the call names another.
	ErrForbidden = errors.New("forbidden")
	// ErrUnavailable: the store cannot do this as it is set up, and
	// retrying cannot help until its configuration changes (a database
	// sync limit where no database is configured, a limit that the config
	// file sets).
	ErrUnavailable = errors.New("not available")
)

// Kind is an Argo kind name: "Workflow", "WorkflowTemplate", ...
type Kind string

// The kinds a store holds.
const (
	KindWorkflow                Kind = "Workflow"
	KindWorkflowTemplate        Kind = "WorkflowTemplate"
	KindClusterWorkflowTemplate Kind = "ClusterWorkflowTemplate"
	KindCronWorkflow            Kind = "CronWorkflow"
	KindWorkflowEventBinding    Kind = "WorkflowEventBinding"
)

// Object is a typed Argo object.
type Object interface {
	metav1.Object
	runtime.Object
}

// ListOptions filter and page a List.
type ListOptions struct {
	LabelSelector string // Kubernetes label selector syntax
	FieldSelector string // metadata.name, metadata.namespace, status.phase (=, !=)
	Limit         int64  // 0: no limit
	Continue      string // the token a previous List returned
	// Name matches metadata.name as NameFilter says: Exact, Contains,
	// Prefix or NotEquals ("" means Exact). An empty Name matches all.
	Name, NameFilter string
	// CreatedAfter and CreatedBefore bound metadata.creationTimestamp
	// (exclusive); zero values do not.
	CreatedAfter, CreatedBefore time.Time
	// FinishedBefore, when not zero, keeps the Workflows whose
	// status.finishedAt is set and before it (exclusive, to the second, as
	// the JSON time is): argo list's finishedBefore. Applied by the store,
	// so that a page is not cut short by a filter applied after it.
	FinishedBefore time.Time
	// Order is the order of the list, and of the positions its continue
	// tokens hold: a token is good only for the order that issued it.
	Order ListOrder
	// Fields, when not empty, are the dotted JSON paths of an object
	// ("metadata.name", "status.phase", "spec.suspend", "metadata") that
	// the caller reads: a store may then fill in only those, and leave the
	// rest of each object empty, so that a list is not paid for in whole
	// objects. A store may also ignore it and return whole objects.
	Fields []string
}

// ListOrder is the order of a List.
type ListOrder string

// The list orders.
const (
	// OrderNewest lists the newest created first (the default).
	OrderNewest ListOrder = ""
	// OrderArgo is the order of Argo's workflow list: unfinished
	// workflows (no status.finishedAt) first, the newest created first,
	// then finished ones, the latest finished first; both compared to the
	// second (as the JSON times are), and ties newest created first. The
	// other kinds, never finished, come newest created first.
	OrderArgo ListOrder = "Argo"
)

// EventType says what happened to an object.
type EventType string

// Watch event types, as Kubernetes names them.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
)

// Event is one change seen by a watch.
type Event struct {
	Type   EventType
	Object Object
}

// MemoEntry is one entry of a memoization cache (template memoize): the
// outputs a node saved under a key of a named cache in a namespace.
type MemoEntry struct {
	Namespace, Cache, Key string
	// NodeID is the node whose outputs were saved.
	NodeID string
	// Outputs are the saved outputs; nil for a node without any.
	Outputs *v1alpha1.Outputs
	// CreatedAt is when the entry was saved (maxAge counts from it);
	// LastHitAt when it was last used, or CreatedAt.
	CreatedAt, LastHitAt time.Time
}

// SyncLimitRef names the limit of a semaphore (synchronization.semaphore):
// the key Key of the ConfigMap ConfigMap in Namespace (configMapKeyRef),
// or, with ConfigMap "", the database semaphore "Namespace/Key"
// (database.key), as Argo's sync service names them.
type SyncLimitRef struct {
	Namespace, ConfigMap, Key string
}

// Database reports whether r names a database semaphore's limit.
func (r SyncLimitRef) Database() bool { return r.ConfigMap == "" }

// String is "namespace/configMap/key", or "namespace/key" for a database
// limit.
func (r SyncLimitRef) String() string {
	if r.Database() {
		return r.Namespace + "/" + r.Key
	}
	return r.Namespace + "/" + r.ConfigMap + "/" + r.Key
}
