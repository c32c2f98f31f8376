package supervisor

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/braidwf/braid/internal/runtime"
)

// ErrRunning is returned by Serve when another supervisor holds the data
// directory.
var ErrRunning = errors.New("a supervisor already runs on this data directory")

// Runtime is what a supervisor serves: the local runtime.
type Runtime interface {
	runtime.Runtime
	// Close stops the steps still running and releases the runtime.
	Close() error
}

// Options configure Serve.
type Options struct {
	// DataDir is the data directory whose steps the supervisor owns.
	DataDir string
	// Version is braid's build, told to clients in the hello.
	Version string
	// IdleTimeout: the supervisor exits once no client has been connected
	// and no step has run for this long; 0 means 30s.
	IdleTimeout time.Duration
	// Logger receives the supervisor's own messages; nil discards them.
	Logger *slog.Logger
	// Listening, when set, is called once the socket accepts connections.
	Listening func(socket string)
	// Lock is the data directory's lock, taken by LockDataDir before the
	// runtime was built (so that a second supervisor builds none); nil:
	// Serve takes it.
	Lock *os.File
	// Warnings are what the runtime said at its start that a server should
	// say too (a part of the steps' containment the kernel refused): each
	// client logs them once per supervisor.
	Warnings []string
}

// maxBuffered bounds the events kept while no client is connected; a
// client that connects later asks for the status of what it has in flight.
const maxBuffered = 1 << 16

// supervisor is one Serve.
type supervisor struct {
	rt       Runtime
	log      *slog.Logger
	opts     Options
	instance string
	stop     chan string // a reason to exit, from a shutdown request

	mu       sync.Mutex
	sub      *peer // the connection the events go to
	buffered []runtime.StepEvent
	inflight map[string]bool
	conns    int
	lastBusy time.Time
}

// Serve runs the supervisor of opts.DataDir until ctx ends, it is idle for
// its IdleTimeout, a client asks it to shut down, or its data directory is
// removed; it then closes rt, which stops the steps still running. It
// returns ErrRunning when another supervisor holds the data directory.
func Serve(ctx context.Context, rt Runtime, opts Options) error {
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	lock := opts.Lock
	if lock == nil {
		var err error
		if lock, err = LockDataDir(opts.DataDir); err != nil {
			return err
		}
	}
	defer lock.Close()
	ln, socket, err := listen(opts.DataDir)
	if err != nil {
		return err
	}
	defer os.Remove(socket)
	pidFile := filepath.Join(opts.DataDir, PIDName)
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("supervisor: %w", err)
	}
	defer os.Remove(pidFile)
	s := &supervisor{rt: rt, log: opts.Logger, opts: opts, instance: newInstance(), stop: make(chan string, 1),
		inflight: map[string]bool{}, lastBusy: time.Now()}
	go s.pump()
	go s.accept(ln)
	s.log.Info("supervisor started", "socket", socket, "pid", os.Getpid(), "instance", s.instance)
	if opts.Listening != nil {
		opts.Listening(socket)
	}
	reason := s.wait(ctx, lock)
	s.log.Info("supervisor stopping", "reason", reason)
	ln.Close()
	s.closePeers()
	return rt.Close()
}

// wait returns why the supervisor stops.
func (s *supervisor) wait(ctx context.Context, lock *os.File) string {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return "signalled"
		case why := <-s.stop:
			return why
		case <-tick.C:
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(int(lock.Fd()), &st); err == nil && st.Nlink == 0 {
			return "the data directory was removed"
		}
		s.mu.Lock()
		idle := s.conns == 0 && len(s.inflight) == 0 && time.Since(s.lastBusy) >= s.opts.IdleTimeout
		s.mu.Unlock()
		if idle {
			return "idle"
		}
	}
}

// LockDataDir takes the data directory's supervisor lock, held until the
// file is closed, or fails with ErrRunning.
func LockDataDir(dataDir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dataDir, lockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("supervisor: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrRunning
		}
		return nil, fmt.Errorf("supervisor: lock %s: %w", f.Name(), err)
	}
	return f, nil
}

// listen opens the socket, mode 0600 from its creation (the umask is
// narrowed around the bind), replacing a stale one.
func listen(dataDir string) (net.Listener, string, error) {
	socket := SocketPath(dataDir)
	if dir := filepath.Dir(socket); dir != dataDir {
		if err := privateDir(dir); err != nil {
			return nil, "", fmt.Errorf("supervisor: %w", err)
		}
	}
	if err := os.Remove(socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, "", fmt.Errorf("supervisor: remove the stale socket: %w", err)
	}
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", socket)
	syscall.Umask(old)
	if err != nil {
		return nil, "", fmt.Errorf("supervisor: %w", err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	return ln, socket, nil
}

func newInstance() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// pump hands every event of the runtime to the connected client, or keeps
// it until one connects.
func (s *supervisor) pump() {
	for ev := range s.rt.Events() {
		s.mu.Lock()
		if ev.Phase.Completed() {
			delete(s.inflight, ev.RunID)
			s.lastBusy = time.Now()
		}
		sub := s.sub
		if sub == nil {
			s.buffer(ev)
		}
		s.mu.Unlock()
		if sub != nil && sub.send(reply{Event: &ev}) != nil {
			s.mu.Lock()
			s.buffer(ev)
			s.mu.Unlock()
		}
	}
}

// buffer keeps an event for the next client; s.mu is held.
func (s *supervisor) buffer(ev runtime.StepEvent) {
	if len(s.buffered) >= maxBuffered {
		s.buffered = s.buffered[1:]
	}
	s.buffered = append(s.buffered, ev)
}

func (s *supervisor) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if err := samePeer(c); err != nil {
			s.log.Warn("refused a connection", "err", err)
			c.Close()
			continue
		}
		p := &peer{c: c, w: bufio.NewWriter(c)}
		s.mu.Lock()
		s.conns++
		s.mu.Unlock()
		go s.serve(p)
	}
}

// closePeers closes every connection's subscriber.
func (s *supervisor) closePeers() {
	s.mu.Lock()
	sub := s.sub
	s.sub = nil
	s.mu.Unlock()
	if sub != nil {
		sub.c.Close()
	}
}

// serve reads one connection's requests until it closes.
func (s *supervisor) serve(p *peer) {
	defer func() {
		p.c.Close()
		s.mu.Lock()
		s.conns--
		if s.sub == p {
			s.sub = nil
		}
		s.lastBusy = time.Now()
		s.mu.Unlock()
	}()
	sc := bufio.NewScanner(p.c)
	sc.Buffer(make([]byte, 64<<10), maxMessage)
	for sc.Scan() {
		var req request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			_ = p.send(reply{Err: fmt.Sprintf("bad request: %v", err)})
			return
		}
		if req.Op == opHello {
			s.hello(p, req)
			continue
		}
		go func() { _ = p.send(s.handle(req)) }()
	}
}

// hello answers a client and makes its connection the one events go to:
// first those kept while nobody was connected.
func (s *supervisor) hello(p *peer, req request) {
	s.mu.Lock()
	old := s.sub
	s.sub = p
	kept := s.buffered
	s.buffered = nil
	h := &hello{Version: s.opts.Version, Instance: s.instance, PID: os.Getpid(), Running: len(s.inflight),
		Warnings: s.opts.Warnings}
	s.mu.Unlock()
	if old != nil && old != p {
		old.c.Close() // a newer server took over
	}
	if req.Hello != nil && req.Hello.Version != s.opts.Version {
		s.log.Warn("a server of another version connected", "server", req.Hello.Version, "supervisor", s.opts.Version)
	}
	_ = p.send(reply{Seq: req.Seq, Hello: h})
	for i := range kept {
		if p.send(reply{Event: &kept[i]}) != nil {
			return
		}
	}
}

// handle answers one request.
func (s *supervisor) handle(req request) reply {
	ctx := context.Background()
	out := reply{Seq: req.Seq}
	var err error
	switch req.Op {
	case opStart:
		if req.Run == nil {
			err = errors.New("start: no run")
			break
		}
		out.Known, out.Event, err = s.start(ctx, *req.Run)
	case opKill:
		err = s.rt.Kill(ctx, req.RunID)
	case opStatus:
		var ev runtime.StepEvent
		ev, out.Known, err = s.rt.Status(ctx, req.RunID)
		if out.Known {
			out.Event = &ev
		}
	case opShutdown:
		err = s.shutdown()
	default:
		err = fmt.Errorf("unknown operation %q", req.Op)
	}
	if err != nil {
		out.Err = err.Error()
	}
	return out
}

// start starts a run the runtime does not know yet; for one it knows, it
// returns its latest event instead.
func (s *supervisor) start(ctx context.Context, run runtime.Run) (bool, *runtime.StepEvent, error) {
	if ev, known, err := s.rt.Status(ctx, run.ID); err == nil && known {
		return true, &ev, nil
	}
	s.mu.Lock()
	s.inflight[run.ID] = true
	s.lastBusy = time.Now()
	s.mu.Unlock()
	if err := s.rt.Start(ctx, run); err != nil {
		s.mu.Lock()
		delete(s.inflight, run.ID)
		s.mu.Unlock()
		return false, nil, err
	}
	return false, nil, nil
}

// shutdown asks the supervisor to exit, which it does only when no step
// is running.
func (s *supervisor) shutdown() error {
	s.mu.Lock()
	n := len(s.inflight)
	s.mu.Unlock()
	if n > 0 {
		return fmt.Errorf("the supervisor runs %d steps: it stops once they end", n)
	}
	select {
	case s.stop <- "asked to shut down":
	default:
	}
	return nil
}

// peer is one client connection; its writes are serialized.
type peer struct {
	c  net.Conn
	mu sync.Mutex
	w  *bufio.Writer
}

func (p *peer) send(r reply) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if _, err := p.w.Write(append(b, '\n')); err != nil {
		return err
	}
	return p.w.Flush()
}
