package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// Options configure a Store. The zero value is usable.
type Options struct {
	// Logger receives migrations and dropped watchers; nil discards.
	Logger *slog.Logger
	// Clock gives creation timestamps; nil means time.Now.
	Clock func() time.Time
	// WatchBuffer is how many events each watcher may have pending before
	// it is dropped; 0 means 1024.
	WatchBuffer int
	// ReadConns caps the read pool; 0 means max(4, GOMAXPROCS).
	ReadConns int
	// BusyTimeout is how long a write waits for another process holding
	// the file's write lock; 0 means 5s. Within one process writes queue
	// in Go and never wait on SQLite.
	BusyTimeout time.Duration
}

// Store is the embedded store: one SQLite file in WAL mode. It is safe for
// concurrent use.
type Store struct {
	path  string
	log   *slog.Logger
	clock func() time.Time

	// w is the only connection that writes (MaxOpenConns 1, BEGIN
	// IMMEDIATE). Keeping one writer keeps its page cache warm for the hot
	// path; other connections' caches are reset whenever it commits.
	w *sql.DB
	// r serves Get and List (query_only); WAL lets them run beside a write.
	r     *sql.DB
	stmts stmts

	// writeMu orders write transactions and the publication of their
	// events, so watchers see events in commit order.
	writeMu sync.Mutex
	closed  bool // guarded by writeMu
	// shut is closed for readers, which do not take writeMu.
	shut     atomic.Bool
	hub      *hub
	once     sync.Once
	closeErr error
}

// Open opens (creating if needed) the store at path and migrates its schema.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("open sqlite store: empty path: %w", ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", abs, err)
	}
	if err := restrictFiles(abs); err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", abs, err)
	}
	s := &Store{path: abs, log: opts.Logger, clock: opts.Clock}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	buf := opts.WatchBuffer
	if buf <= 0 {
		buf = 1024
	}
	s.hub = newHub(buf, s.log)
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = 5 * time.Second
	}

	fail := func(err error) (*Store, error) {
		for _, db := range []*sql.DB{s.w, s.r} {
			if db != nil {
				_ = db.Close()
			}
		}
		return nil, fmt.Errorf("open sqlite store %s: %w", abs, err)
	}

	if err := s.openWriter(ctx, busy); err != nil {
		return fail(err)
	}
	if err := s.openReaders(ctx, busy, opts.ReadConns); err != nil {
		return fail(err)
	}
	if err := restrictFiles(abs); err != nil { // the -wal and -shm files SQLite made
		return fail(err)
	}
	return s, nil
}

// openWriter opens the store's one writing connection, checks that the
// database is in WAL mode, migrates the schema and prepares the statements.
func (s *Store) openWriter(ctx context.Context, busy time.Duration) error {
	var err error
	s.w, err = sql.Open("sqlite", dsn(s.path, busy, true))
	if err != nil {
		return err
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)
	s.w.SetConnMaxLifetime(0)
	s.w.SetConnMaxIdleTime(0)
	var mode string
	if err := s.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal_mode is %q, want wal (is the file on a filesystem without shared memory?)", mode)
	}
	if err := migrate(ctx, s.w, s.log); err != nil {
		return err
	}
	if s.stmts, err = prepare(ctx, s.w); err != nil {
		return err
	}
	return nil
}

// openReaders opens the pool of read-only connections: readers of them, or
// max(4, GOMAXPROCS) when readers is not positive.
func (s *Store) openReaders(ctx context.Context, busy time.Duration, readers int) error {
	if readers <= 0 {
		readers = max(4, runtime.GOMAXPROCS(0))
	}
	var err error
	s.r, err = sql.Open("sqlite", dsn(s.path, busy, false))
	if err != nil {
		return err
	}
	s.r.SetMaxOpenConns(readers)
	s.r.SetMaxIdleConns(readers)
	s.r.SetConnMaxLifetime(0)
	s.r.SetConnMaxIdleTime(0)
	return s.r.PingContext(ctx)
}

// restrictFiles makes the database file (created empty when missing) and
// its -wal and -shm files readable and writable by braid's user only: they
// hold every workflow with its parameters and outputs. SQLite creates the
// -wal and -shm files with the database file's mode, so a new store is
// 0600 throughout; a store made with looser modes is tightened. An
// existing file is never opened: closing a descriptor of it would drop the
// POSIX locks that SQLite holds on it in this process.
func restrictFiles(abs string) error {
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		if err := f.Close(); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrExist):
		return err
	}
	for _, p := range []string{abs, abs + "-wal", abs + "-shm"} {
		info, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(p, info.Mode().Perm()&0o700); err != nil {
			return err
		}
	}
	return nil
}

// dsn builds the modernc.org/sqlite data source name. The path is escaped
// as a file: URI so that '?', '#' and '%' in it are not taken for syntax.
func dsn(abs string, busy time.Duration, writer bool) string {
	q := url.Values{}
	pragmas := []string{
		fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()),
		"foreign_keys(1)",
		"synchronous(NORMAL)",
		"cache_size(-16384)", // KiB: up to 16 MiB per connection
		"temp_store(MEMORY)",
	}
	if writer {
		// journal_mode is persistent in the file; the writer sets it first.
		pragmas = append(pragmas, "journal_mode(WAL)", "journal_size_limit(67108864)")
		q.Set("_txlock", "immediate")
	} else {
		pragmas = append(pragmas, "query_only(1)")
	}
	q["_pragma"] = pragmas
	return "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes every watch channel and the database. It waits for a write
// in progress. Calling it again returns the first result.
func (s *Store) Close() error {
	s.once.Do(func() {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
		s.closed = true
		s.shut.Store(true)
		s.hub.close()
		s.stmts.close()
		errW := s.w.Close()
		errR := s.r.Close()
		if errW != nil {
			s.closeErr = fmt.Errorf("close sqlite store %s: %w", s.path, errW)
		} else if errR != nil {
			s.closeErr = fmt.Errorf("close sqlite store %s: %w", s.path, errR)
		}
	})
	return s.closeErr
}

// Tx runs fn in one write transaction, bbolt style: it commits when fn
// returns nil and rolls back when fn returns an error or panics (the panic
// continues). The Tx and its methods use ctx and must not be used after fn
// returns. Write transactions run one at a time. Watch events of the writes
// are published after the commit, in commit order; a rolled-back
// transaction publishes nothing and restores the metadata (resourceVersion,
// uid, creationTimestamp, generation) that its writes had set on the
// caller's objects.
func (s *Store) Tx(ctx context.Context, fn func(tx *Tx) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.closed {
		return ErrClosed
	}
	sqlTx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write: %w", err)
	}
	tx := &Tx{s: s, ctx: ctx, tx: sqlTx}
	committed := false
	defer func() {
		if !committed {
			_ = sqlTx.Rollback()
			tx.rollbackObjects()
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	committed = true
	s.hub.publish(tx.events)
	return nil
}

// Get returns a fresh copy of one object. A Workflow comes back with all
// its nodes in Status.Nodes.
func (s *Store) Get(ctx context.Context, kind store.Kind, namespace, name string) (store.Object, error) {
	k, err := lookupKind(kind)
	if err != nil {
		return nil, fmt.Errorf("get: %w", err)
	}
	if s.shut.Load() {
		return nil, fmt.Errorf("get %s: %w", k.key(k.scope(namespace), name), ErrClosed)
	}
	// One read transaction, so the object row and its nodes are one snapshot.
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", k.key(k.scope(namespace), name), err)
	}
	defer func() { _ = tx.Rollback() }()
	return getObject(ctx, tx, k, k.scope(namespace), name)
}

// List returns the objects of a kind in a namespace ("" for all
// namespaces; ignored for cluster-scoped kinds), newest first (by creation
// time, then by insertion order) or as opts.Order says, filtered by opts.
// When opts.Limit is set and more objects match, the returned token
// continues the listing. With opts.Fields, each object holds those paths
// only (see projectFields).
//
// Workflows are listed WITHOUT their nodes: Status.Nodes is nil, so that
// listing stays fast whatever the workflows' size. Get a workflow for its
// nodes. Passing a listed workflow to Update leaves its node rows as they
// are (see Update).
func (s *Store) List(ctx context.Context, kind store.Kind, namespace string, opts store.ListOptions) ([]store.Object, string, error) {
	k, err := lookupKind(kind)
	if err != nil {
		return nil, "", fmt.Errorf("list: %w", err)
	}
	if s.shut.Load() {
		return nil, "", fmt.Errorf("list %s: %w", k.kind, ErrClosed)
	}
	return listObjects(ctx, s.r, k, k.scope(namespace), opts)
}

// Count is how many objects List with opts would return from
// opts.Continue on, over all its pages (opts.Limit and opts.Fields are
// ignored): with the Continue of a page, how many come after it. It
// counts in SQL, from the indexes and the label rows, without reading an
// object.
func (s *Store) Count(ctx context.Context, kind store.Kind, namespace string, opts store.ListOptions) (int64, error) {
	k, err := lookupKind(kind)
	if err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	if s.shut.Load() {
		return 0, fmt.Errorf("count %s: %w", k.kind, ErrClosed)
	}
	return countObjects(ctx, s.r, k, k.scope(namespace), opts)
}

// Create stores a new object; see Tx.Create.
func (s *Store) Create(ctx context.Context, obj store.Object) error {
	return s.Tx(ctx, func(tx *Tx) error { return tx.Create(obj) })
}

// Update replaces an object; see Tx.Update.
func (s *Store) Update(ctx context.Context, obj store.Object) error {
	return s.Tx(ctx, func(tx *Tx) error { return tx.Update(obj) })
}

// UpdateWorkflowStatus writes a workflow and only the listed nodes; see
// Tx.UpdateWorkflowStatus.
func (s *Store) UpdateWorkflowStatus(ctx context.Context, wf *v1alpha1.Workflow, changedNodes []string) error {
	return s.Tx(ctx, func(tx *Tx) error { return tx.UpdateWorkflowStatus(wf, changedNodes) })
}

// Delete removes an object, and a workflow's nodes; see Tx.Delete.
func (s *Store) Delete(ctx context.Context, kind store.Kind, namespace, name string) error {
	return s.Tx(ctx, func(tx *Tx) error { return tx.Delete(kind, namespace, name) })
}

// Watch returns the changes to objects of kind in namespace ("" for all)
// from now on, in commit order: list after Watch returns and nothing is
// missed. Only this Store's writes are seen, so open one Store per file in
// a process (another process writing the same file is not watched). Each watcher has a buffer of
// Options.WatchBuffer events. A watcher that falls that far behind is
// dropped: its channel is closed without waiting for it, so that a slow
// reader never blocks writers. A closed channel therefore means "list
// again and watch again", as with an expired Kubernetes watch. The channel
// is also closed when ctx ends and when the Store closes.
//
// Event objects are deep copies shared by every watcher of the event; do
// not modify them (DeepCopy first). A Workflow in an event has no nodes,
// as in List.
func (s *Store) Watch(ctx context.Context, kind store.Kind, namespace string) (<-chan store.Event, error) {
	k, err := lookupKind(kind)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	// Subscribing between write transactions means every transaction either
	// committed before the watch began (a List after Watch sees it) or
	// publishes to it. Otherwise a write that skipped its event copy (no
	// watcher yet) but committed after the caller's List would be missed by
	// both.
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("watch %s: %w", k.kind, ErrClosed)
	}
	return s.hub.subscribe(ctx, k.kind, k.scope(namespace))
}
