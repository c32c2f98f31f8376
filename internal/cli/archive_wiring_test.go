package cli

import (
	"testing"

	"github.com/braidwf/braid/internal/controller"
	"github.com/braidwf/braid/internal/server"
)

// The kube store with the PostgreSQL archive is seen as an archive by the
// server and the controller, which find it by type assertion.
func TestArchivedStoreIsAnArchive(t *testing.T) {
	var st kubeWorkflows = archivedStore{}
	if _, ok := st.(server.Archive); !ok {
		t.Error("archivedStore is not a server.Archive")
	}
	if _, ok := st.(controller.Archiver); !ok {
		t.Error("archivedStore is not a controller.Archiver")
	}
	k := &kubeBackend{}
	if _, ok := k.workflows().(server.Archive); ok {
		t.Error("without an archive DSN the store claims an archive")
	}
}
