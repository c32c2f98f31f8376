package supervisor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// ErrClosed is returned by a Client's calls after Close.
var ErrClosed = errors.New("supervisor client: closed")

// ClientConfig configures Dial.
type ClientConfig struct {
	// DataDir is the data directory whose supervisor to talk to.
	DataDir string
	// Version is braid's build: a supervisor of another version that runs
	// no step is replaced.
	Version string
	// Spawn starts a supervisor for DataDir, detached from this process
	// (it must outlive it); called when none answers.
	Spawn func() error
	// Logger receives the client's messages; nil discards them.
	Logger *slog.Logger
	// ConnectTimeout bounds the wait for a supervisor to answer, at Dial and
	// after a lost connection; 0 means 30s.
	ConnectTimeout time.Duration
}

// Client is a runtime.Runtime whose steps run in the supervisor of a data
// directory. It is safe for concurrent use.
type Client struct {
	cfg    ClientConfig
	log    *slog.Logger
	events *runtime.Queue
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	conn     *conn
	ready    chan struct{} // closed while conn is set
	instance string
	// inflight are the runs started through this client, or seen running
	// by Status, whose final event has not come yet: a new supervisor is
	// asked about them.
	inflight map[string]*flight
	closed   bool
}

var _ runtime.Runtime = (*Client)(nil)

// Dial connects to the supervisor of cfg.DataDir, starting one when none
// answers, and keeps connected until Close.
func Dial(ctx context.Context, cfg ClientConfig) (*Client, error) {
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{cfg: cfg, log: cfg.Logger, events: runtime.NewQueue(256), ready: make(chan struct{}),
		inflight: map[string]*flight{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	cn, h, err := c.connect(ctx)
	if err != nil {
		c.cancel()
		c.events.Close()
		return nil, err
	}
	c.attach(cn, h)
	go c.keep(cn)
	return c, nil
}

// connect dials the supervisor, starting one when none answers, and says
// hello. A supervisor of another version that runs no step is asked to
// exit and replaced.
func (c *Client) connect(ctx context.Context) (*conn, *hello, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.ConnectTimeout)
	defer cancel()
	replaced := false
	for {
		cn, err := c.dial(ctx)
		if err != nil {
			return nil, nil, err
		}
		r, err := cn.call(ctx, request{Op: opHello, Hello: &hello{Version: c.cfg.Version}})
		if err != nil {
			cn.close()
			return nil, nil, fmt.Errorf("supervisor: hello: %w", err)
		}
		h := r.Hello
		if h == nil {
			cn.close()
			return nil, nil, errors.New("supervisor: no hello")
		}
		if h.Version == c.cfg.Version || h.Running > 0 || replaced {
			if h.Version != c.cfg.Version {
				c.log.Warn("the supervisor runs another version of braid until its steps end",
					"supervisor", h.Version, "server", c.cfg.Version, "pid", h.PID)
			}
			return cn, h, nil
		}
		c.log.Info("replacing a supervisor of another version", "supervisor", h.Version, "server", c.cfg.Version, "pid", h.PID)
		_, _ = cn.call(ctx, request{Op: opShutdown})
		<-cn.dead
		replaced = true
	}
}

// dial connects to the socket, spawning a supervisor once when nothing
// listens, and waiting for it until ctx ends.
func (c *Client) dial(ctx context.Context) (*conn, error) {
	socket := SocketPath(c.cfg.DataDir)
	spawned := false
	wait := 5 * time.Millisecond
	for {
		nc, err := (&net.Dialer{}).DialContext(ctx, "unix", socket)
		if err == nil {
			if perr := samePeer(nc); perr != nil {
				nc.Close()
				return nil, fmt.Errorf("supervisor: %s: %w", socket, perr)
			}
			return newConn(nc, c.onEvent), nil
		}
		if !spawned && c.cfg.Spawn != nil {
			if serr := c.cfg.Spawn(); serr != nil {
				return nil, fmt.Errorf("supervisor: start one: %w", serr)
			}
			spawned = true
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("supervisor: no answer on %s: %w", socket, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// attach makes cn the client's connection.
func (c *Client) attach(cn *conn, h *hello) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h.Instance != c.instance {
		for _, w := range h.Warnings {
			c.log.Warn(w, "from", "supervisor", "pid", h.PID)
		}
	}
	c.conn, c.instance = cn, h.Instance
	close(c.ready)
}

// detach forgets cn, lost, so that calls wait for the next connection.
func (c *Client) detach(cn *conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == cn {
		c.conn, c.ready = nil, make(chan struct{})
	}
}

// keep reconnects whenever the connection is lost, until Close, and then
// asks the supervisor about every run still in flight.
func (c *Client) keep(cn *conn) {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-cn.dead:
		}
		c.detach(cn)
		c.log.Warn("lost the supervisor: reconnecting")
		for {
			next, h, err := c.connect(c.ctx)
			if err == nil {
				cn = next
				prev := c.instance
				c.attach(cn, h)
				if prev != h.Instance {
					c.log.Warn("a new supervisor: the steps of the old one are gone", "pid", h.PID)
				}
				c.resync()
				break
			}
			if c.ctx.Err() != nil {
				return
			}
			c.log.Error("cannot reach a supervisor", "err", err)
		}
	}
}

// flight is a run in flight: the run itself when this client started it,
// and its latest event.
type flight struct {
	run  *runtime.Run
	last runtime.StepEvent
}

// resync asks the supervisor about every run in flight: a finished one
// (or one lost with the old supervisor) is reported; one it never received
// is started when this client has it, and is reported lost otherwise.
func (c *Client) resync() {
	c.mu.Lock()
	flights := make([]flight, 0, len(c.inflight))
	for _, f := range c.inflight {
		flights = append(flights, *f)
	}
	c.mu.Unlock()
	for _, f := range flights {
		ev, known, err := c.Status(c.ctx, f.last.RunID)
		switch {
		case err != nil:
			c.log.Warn("step status after reconnecting", "run", f.last.RunID, "err", err)
		case known && ev.Phase.Completed():
			c.onEvent(identified(ev, f.last))
		case known:
		case f.run != nil:
			if err := c.Start(c.ctx, *f.run); err != nil {
				c.log.Warn("start a step again after reconnecting", "run", f.last.RunID, "err", err)
			}
		default:
			lost := f.last
			lost.Phase, lost.Message, lost.FinishedAt = v1alpha1.NodeError, MsgLost, time.Now()
			c.onEvent(lost)
		}
	}
}

// identified gives ev the workflow and node of the run it is about, which
// the journal of a run that was lost does not hold.
func identified(ev, of runtime.StepEvent) runtime.StepEvent {
	if ev.WorkflowUID == "" {
		ev.WorkflowUID = of.WorkflowUID
	}
	if ev.NodeID == "" {
		ev.NodeID = of.NodeID
	}
	return ev
}

// MsgLost is the message of a step whose process is gone with its
// supervisor, and that the new one never heard of: Argo's for a pod that
// vanished.
const MsgLost = "pod deleted"

// onEvent delivers an event of the supervisor.
func (c *Client) onEvent(ev runtime.StepEvent) {
	if ev.Phase.Completed() {
		c.mu.Lock()
		delete(c.inflight, ev.RunID)
		c.mu.Unlock()
	}
	c.events.Push(ev)
}

// call sends a request on the current connection, waiting for one while
// the client reconnects, and sends it again when the connection is lost
// before the answer: every operation may be repeated.
func (c *Client) call(ctx context.Context, req request) (reply, error) {
	for {
		c.mu.Lock()
		cn, ready, closed := c.conn, c.ready, c.closed
		c.mu.Unlock()
		if closed {
			return reply{}, ErrClosed
		}
		if cn == nil {
			select {
			case <-ready:
				continue
			case <-ctx.Done():
				return reply{}, ctx.Err()
			case <-c.ctx.Done():
				return reply{}, ErrClosed
			}
		}
		r, err := cn.call(ctx, req)
		if errors.Is(err, errConnLost) {
			c.detach(cn)
			continue
		}
		if err != nil {
			return reply{}, err
		}
		if r.Err != "" {
			return r, errors.New(r.Err)
		}
		return r, nil
	}
}

// Start hands the run to the supervisor. A run it knows already is not
// started again: its final event, if it has one, is delivered.
func (c *Client) Start(ctx context.Context, run runtime.Run) error {
	c.mu.Lock()
	c.inflight[run.ID] = &flight{run: &run, last: runtime.StepEvent{RunID: run.ID, WorkflowUID: run.WorkflowUID, NodeID: run.NodeID}}
	c.mu.Unlock()
	r, err := c.call(ctx, request{Op: opStart, Run: &run})
	if err != nil {
		c.mu.Lock()
		delete(c.inflight, run.ID)
		c.mu.Unlock()
		return fmt.Errorf("supervisor: start %s: %w", run.ID, err)
	}
	if r.Known && r.Event != nil && r.Event.Phase.Completed() {
		c.onEvent(identified(*r.Event, runtime.StepEvent{RunID: run.ID, WorkflowUID: run.WorkflowUID, NodeID: run.NodeID}))
	}
	return nil
}

// Kill stops the run and everything it started.
func (c *Client) Kill(ctx context.Context, runID string) error {
	if _, err := c.call(ctx, request{Op: opKill, RunID: runID}); err != nil {
		return fmt.Errorf("supervisor: kill %s: %w", runID, err)
	}
	return nil
}

// Status returns the run's latest event.
func (c *Client) Status(ctx context.Context, runID string) (runtime.StepEvent, bool, error) {
	r, err := c.call(ctx, request{Op: opStatus, RunID: runID})
	if err != nil {
		return runtime.StepEvent{}, false, fmt.Errorf("supervisor: status of %s: %w", runID, err)
	}
	if !r.Known || r.Event == nil {
		return runtime.StepEvent{}, false, nil
	}
	if !r.Event.Phase.Completed() {
		c.mu.Lock()
		if _, ok := c.inflight[runID]; !ok && !c.closed {
			c.inflight[runID] = &flight{last: *r.Event}
		}
		c.mu.Unlock()
	}
	return *r.Event, true, nil
}

// Events delivers the events of the runs started through this client.
func (c *Client) Events() <-chan runtime.StepEvent { return c.events.Out() }

// Instance is the connected supervisor's ID ("" while disconnected).
func (c *Client) Instance() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return ""
	}
	return c.instance
}

// Close disconnects. The steps go on running in the supervisor, which
// reports their results to the next client.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	cn := c.conn
	c.mu.Unlock()
	c.cancel()
	if cn != nil {
		cn.close()
	}
	c.events.Close()
	return nil
}

// errConnLost: the connection closed before the answer came.
var errConnLost = errors.New("the connection to the supervisor was lost")

// conn is one connection to a supervisor.
type conn struct {
	c       net.Conn
	onEvent func(runtime.StepEvent)
	dead    chan struct{} // closed when the connection is lost

	wmu sync.Mutex
	w   *bufio.Writer

	mu      sync.Mutex
	seq     uint64
	pending map[uint64]chan reply
	lost    bool
}

func newConn(nc net.Conn, onEvent func(runtime.StepEvent)) *conn {
	cn := &conn{c: nc, onEvent: onEvent, dead: make(chan struct{}), w: bufio.NewWriter(nc), pending: map[uint64]chan reply{}}
	go cn.read()
	return cn
}

// read delivers replies and events until the connection ends.
func (cn *conn) read() {
	defer cn.close()
	sc := bufio.NewScanner(cn.c)
	sc.Buffer(make([]byte, 64<<10), maxMessage)
	for sc.Scan() {
		var r reply
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return
		}
		if r.Seq == 0 {
			if r.Event != nil {
				cn.onEvent(*r.Event)
			}
			continue
		}
		cn.mu.Lock()
		ch := cn.pending[r.Seq]
		delete(cn.pending, r.Seq)
		cn.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
}

// close ends the connection, failing the calls that wait on it.
func (cn *conn) close() {
	cn.mu.Lock()
	if cn.lost {
		cn.mu.Unlock()
		return
	}
	cn.lost = true
	pending := cn.pending
	cn.pending = nil
	cn.mu.Unlock()
	cn.c.Close()
	for _, ch := range pending {
		close(ch)
	}
	close(cn.dead)
}

// call sends req and waits for its reply.
func (cn *conn) call(ctx context.Context, req request) (reply, error) {
	ch := make(chan reply, 1)
	cn.mu.Lock()
	if cn.lost {
		cn.mu.Unlock()
		return reply{}, errConnLost
	}
	cn.seq++
	req.Seq = cn.seq
	cn.pending[req.Seq] = ch
	cn.mu.Unlock()
	b, err := json.Marshal(req)
	if err != nil {
		return reply{}, err
	}
	cn.wmu.Lock()
	_, err = cn.w.Write(append(b, '\n'))
	if err == nil {
		err = cn.w.Flush()
	}
	cn.wmu.Unlock()
	if err != nil {
		cn.close()
		return reply{}, errConnLost
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return reply{}, errConnLost
		}
		return r, nil
	case <-ctx.Done():
		cn.mu.Lock()
		if cn.pending != nil {
			delete(cn.pending, req.Seq)
		}
		cn.mu.Unlock()
		return reply{}, ctx.Err()
	}
}
