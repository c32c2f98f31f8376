package sqlite

import (
	"errors"

	"github.com/braidwf/braid/internal/store"
)

// Errors of this package. The shared errors (store.ErrNotFound,
// store.ErrAlreadyExists, store.ErrConflict) are returned as documented in
// package store; these add what only this implementation can report. Every
// error is wrapped with context; test with errors.Is.
var (
	// ErrInvalid: the call itself is wrong and retrying cannot help: an
	// unknown kind, an object without a name, a namespaced object without a
	// namespace, a label or field selector that does not parse or uses a
	// field or operator this store cannot filter on, a continue token this
	// store did not issue.
	ErrInvalid = store.ErrInvalid
	// ErrClosed: the Store was closed.
	ErrClosed = errors.New("store is closed")
	// ErrSchemaTooNew: the database file was written by a newer braid whose
	// schema this binary does not know. Open refuses it rather than guess.
	ErrSchemaTooNew = errors.New("database schema is newer than this binary")
)
