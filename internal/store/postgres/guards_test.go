package postgres_test

import (
	"github.com/braidwf/braid/internal/controller"
	"github.com/braidwf/braid/internal/server"
	"github.com/braidwf/braid/internal/store/postgres"
)

// Compile-time guards: the interfaces braid's consumers declare.
var (
	_ server.Archive        = (*postgres.Store)(nil)
	_ controller.Archiver   = (*postgres.Store)(nil)
	_ controller.MemoStore  = (*postgres.Store)(nil)
	_ controller.MemoPruner = (*postgres.Store)(nil)
)
