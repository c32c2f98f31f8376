package server

import "github.com/braidwf/braid/internal/store/sqlite"

// sqliteCaps are every optional capability of the SQLite store, as
// internal/app gives them to the embedded server.
func sqliteCaps(st *sqlite.Store) Capabilities {
	return Capabilities{Archive: st, Counter: st, NodeDeltas: st, StatusUpdater: st}
}
