package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/store/storetest"
)

// TestContract runs the contract every store keeps (internal/store/storetest)
// against a PostgreSQL schema of the test's own. A store still open when
// the test ends has its tables' invariants checked.
func TestContract(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		New: func(t *testing.T, clock func() time.Time) storetest.Env {
			dsn := testSchema(t)
			return storetest.Env{Open: func() any {
				s, err := OpenWith(context.Background(), dsn, Options{Clock: clock})
				must(t, err, "Open")
				t.Cleanup(func() {
					if s.open("check") == nil {
						checkInvariants(t, s)
					}
					must(t, s.Close(), "Close")
				})
				return s
			}}
		},
		ErrClosed: ErrClosed,
		AfterLoad: func(t *testing.T, s any) {
			_, err := s.(*Store).pool.Exec(context.Background(), `ANALYZE braid_archived_workflows; ANALYZE braid_archived_labels`)
			must(t, err, "analyze")
		},
	})
}
