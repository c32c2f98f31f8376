package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/store/storetest"
)

// TestContract runs the contract every store keeps (internal/store/storetest)
// against a store file of the test's own, opened as openStore opens it, so
// that its file invariants are checked at the end.
func TestContract(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		New: func(t *testing.T, clock func() time.Time) storetest.Env {
			path := filepath.Join(t.TempDir(), "braid.db")
			return storetest.Env{Open: func() any {
				return openStore(t, path, withOptions(func(o *Options) { o.Clock = clock }))
			}}
		},
		ErrClosed: ErrClosed,
	})
}
