package app

import (
	"testing"

	"github.com/braidwf/braid/internal/store/postgres"
)

// The server gets the PostgreSQL archive as a typed capability: nil
// without an archive database, never a typed nil.
func TestKubeArchiveWiring(t *testing.T) {
	k := &Kube{}
	if a := k.serverOptions().Archive; a != nil {
		t.Errorf("without an archive DSN the server has an archive: %T", a)
	}
	k.Archive = &postgres.Store{}
	if k.serverOptions().Archive == nil {
		t.Error("with an archive the server has none")
	}
}
