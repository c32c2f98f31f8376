package postgres

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options tune OpenWith; the zero value is what Open uses.
type Options struct {
	// Clock gives the archive's and the memo entries' timestamps; nil
	// means time.Now.
	Clock func() time.Time
	// Logger receives the migration notice; nil discards.
	Logger *slog.Logger
	// MaxConns bounds the connection pool; 0 keeps pgxpool's default (the
	// DSN's pool_max_conns, else max(4, number of CPUs)).
	MaxConns int32
}

// Store is the workflow archive and the memoization caches in PostgreSQL.
// It is safe for concurrent use.
type Store struct {
	pool  *pgxpool.Pool
	clock func() time.Time
	shut  atomic.Bool
}

// Open connects to dsn (a postgres:// URL or a key=value string) and
// creates or migrates the tables; see OpenWith.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return OpenWith(ctx, dsn, Options{})
}

// OpenWith is Open with options. Opening is idempotent: a database that
// has the tables is only read (ErrSchemaTooNew when a newer braid migrated
// it), and replicas opening a new database at once are serialized.
func OpenWith(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	// Unnamed statements with cached descriptions: one round trip, and a
	// plan made for each call's values (a label selector's plan depends on
	// how common the label is; a generic plan would not know). It also
	// works through poolers in transaction mode.
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres store: connect: %w", err)
	}
	if err := migrate(ctx, pool, log); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	s := &Store{pool: pool, clock: opts.Clock}
	if s.clock == nil {
		s.clock = time.Now
	}
	return s, nil
}

// Close closes the connection pool; later calls fail with ErrClosed.
// Closing twice is harmless.
func (s *Store) Close() error {
	if s.shut.Swap(true) {
		return nil
	}
	s.pool.Close()
	return nil
}

// open fails with ErrClosed once the Store is closed.
func (s *Store) open(what string) error {
	if s.shut.Load() {
		return fmt.Errorf("%s: %w", what, ErrClosed)
	}
	return nil
}

// now is the store's clock to the microsecond, PostgreSQL's precision, so
// a timestamp reads back equal to what was written.
func (s *Store) now() time.Time { return s.clock().UTC().Truncate(time.Microsecond) }
