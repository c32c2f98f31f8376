package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/braidwf/braid/internal/store"
)

// testDSN is $BRAID_TEST_POSTGRES; without it the test is skipped, or
// fails when BRAID_REQUIRE_POSTGRES=1.
func testDSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv("BRAID_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("BRAID_REQUIRE_POSTGRES") == "1" {
			tb.Fatal("BRAID_TEST_POSTGRES is unset and BRAID_REQUIRE_POSTGRES=1")
		}
		tb.Skip("BRAID_TEST_POSTGRES is unset: run `eval \"$(hack/postgres.sh up | tail -1)\"`")
	}
	return dsn
}

// testSchema creates a PostgreSQL schema of the test's own, dropped on
// cleanup, and returns the DSN whose connections use it (search_path), so
// tests never see each other's rows.
func testSchema(tb testing.TB) string {
	tb.Helper()
	dsn := testDSN(tb)
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	schema := "braid_test_" + hex.EncodeToString(b)
	admin(tb, dsn, "CREATE SCHEMA "+schema)
	tb.Cleanup(func() { admin(tb, dsn, "DROP SCHEMA "+schema+" CASCADE") })
	return withSearchPath(tb, dsn, schema)
}

func admin(tb testing.TB, dsn, sql string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	must(tb, err, "connect")
	defer func() { _ = conn.Close(ctx) }()
	_, err = conn.Exec(ctx, sql)
	must(tb, err, sql)
}

func withSearchPath(tb testing.TB, dsn, schema string) string {
	tb.Helper()
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " search_path=" + schema
	}
	u, err := url.Parse(dsn)
	must(tb, err, "parse DSN")
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// testStore opens a Store on a schema of the test's own with a fake
// clock. On cleanup it checks the tables' invariants, then closes it.
func testStore(tb testing.TB) *Store {
	tb.Helper()
	s, err := OpenWith(context.Background(), testSchema(tb), Options{Clock: newFakeClock().Now})
	must(tb, err, "Open")
	tb.Cleanup(func() {
		checkInvariants(tb, s)
		must(tb, s.Close(), "Close")
	})
	return s
}

// checkInvariants fails the test when a label row has no workflow or
// another namespace than its workflow's, or an archived summary does not
// decode to the row's uid, namespace and name.
func checkInvariants(tb testing.TB, s *Store) {
	tb.Helper()
	ctx := context.Background()
	var n int
	must(tb, s.pool.QueryRow(ctx, `SELECT count(*) FROM braid_archived_labels l
		LEFT JOIN braid_archived_workflows a ON a.id = l.archive_id
		WHERE a.id IS NULL OR a.namespace <> l.namespace`).Scan(&n), "check labels")
	if n != 0 {
		tb.Errorf("invariant: %d label rows without their workflow or in another namespace", n)
	}
	rows, err := s.pool.Query(ctx, `SELECT uid, namespace, name, summary FROM braid_archived_workflows LIMIT 1000`)
	must(tb, err, "check summaries")
	defer rows.Close()
	for rows.Next() {
		var uid, ns, name string
		var summary []byte
		must(tb, rows.Scan(&uid, &ns, &name, &summary), "scan")
		wf, err := store.DecodeArchived(summary, nil)
		if err != nil || string(wf.UID) != uid || wf.Namespace != ns || wf.Name != name {
			tb.Errorf("invariant: row %s %s/%s has summary %v (%v)", uid, ns, name, wf, err)
		}
	}
	must(tb, rows.Err(), "check summaries")
}

// fakeClock advances a millisecond at every reading, so that consecutive
// writes get increasing timestamps.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// isErr fails the test unless err wraps target.
func isErr(tb testing.TB, err, target error, what string) {
	tb.Helper()
	if !errors.Is(err, target) {
		tb.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

func must(tb testing.TB, err error, what string) {
	tb.Helper()
	if err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
}
