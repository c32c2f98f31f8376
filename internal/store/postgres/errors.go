package postgres

import (
	"errors"

	"github.com/braidwf/braid/internal/store"
)

// Errors of this package. The shared errors are returned as package store
// documents them: store.ErrNotFound (GetArchived or DeleteArchived of a
// uid that is not archived) and store.ErrInvalid (see below). Every error
// is wrapped with context; test with errors.Is.
var (
	// ErrInvalid is store.ErrInvalid: the call itself is wrong and
	// retrying cannot help: a workflow without uid, name or namespace, a
	// label selector that does not parse or uses an operator this store
	// cannot filter on, an unknown name filter, a negative limit or
	// offset, a memo entry without namespace, cache, key or node ID. The
	// server answers it with InvalidArgument (HTTP 400).
	ErrInvalid = store.ErrInvalid
	// ErrClosed: the Store was closed.
	ErrClosed = errors.New("postgres store is closed")
	// ErrSchemaTooNew: the database was migrated by a newer braid whose
	// schema this binary does not know. Open refuses it rather than guess.
	ErrSchemaTooNew = errors.New("database schema is newer than this binary")
)
