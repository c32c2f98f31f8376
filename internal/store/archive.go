package store

import "time"

// NameFilter says how ArchiveListOptions.Name compares with a name, as
// argo-server's nameFilter parameter.
type NameFilter string

// The name filters; "" means Exact.
const (
	NameExact     NameFilter = "Exact"
	NameContains  NameFilter = "Contains"
	NamePrefix    NameFilter = "Prefix"
	NameNotEquals NameFilter = "NotEquals"
)

// ArchiveListOptions filter and page ListArchived. The zero value lists
// everything.
type ArchiveListOptions struct {
	// Namespace restricts the list to one namespace; "" lists every one.
	Namespace string
	// NamePrefix keeps the workflows whose name starts with it.
	NamePrefix string
	// Name, compared by NameFilter, keeps matching names; "" keeps all.
	Name       string
	NameFilter NameFilter
	// LabelSelector is a Kubernetes label selector.
	LabelSelector string
	// CreatedAfter and CreatedBefore keep workflows created strictly after
	// and before them (to the second).
	CreatedAfter, CreatedBefore time.Time
	// FinishedBefore keeps finished workflows that finished strictly
	// before it (to the second).
	FinishedBefore time.Time
	// Limit bounds the page; 0 means no limit. Offset skips that many of
	// the matching workflows first.
	Limit, Offset int
}
