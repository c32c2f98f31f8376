package sqlite

import (
	"context"
	"log/slog"
	"sync"

	"github.com/braidwf/braid/internal/store"
)

// hub fans events out to watchers in-process. Every send and every close
// of a watcher's channel happens under mu, so a channel is never sent on
// after it is closed.
type hub struct {
	buf int
	log *slog.Logger

	mu     sync.Mutex
	subs   map[*watcher]struct{}
	byKind map[store.Kind]int // watchers per kind, for wants
	closed bool
}

// pendingEvent is an event of a write not yet committed.
type pendingEvent struct {
	kind store.Kind
	store.Event
}

type watcher struct {
	kind store.Kind
	ns   string // "" matches every namespace
	ch   chan store.Event
	done chan struct{} // closed when the watcher is removed
}

func newHub(buf int, log *slog.Logger) *hub {
	return &hub{buf: buf, log: log, subs: map[*watcher]struct{}{}, byKind: map[store.Kind]int{}}
}

// subscribe adds a watcher that lives until ctx ends, it is dropped, or
// the hub closes.
func (h *hub) subscribe(ctx context.Context, kind store.Kind, ns string) (<-chan store.Event, error) {
	w := &watcher{kind: kind, ns: ns, ch: make(chan store.Event, h.buf), done: make(chan struct{})}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	h.subs[w] = struct{}{}
	h.byKind[kind]++
	h.mu.Unlock()
	go func() {
		select {
		case <-ctx.Done():
			h.mu.Lock()
			h.removeLocked(w)
			h.mu.Unlock()
		case <-w.done:
		}
	}()
	return w.ch, nil
}

// wants reports whether anyone watches kind, so that writers skip copying
// objects for events no one would receive.
func (h *hub) wants(kind store.Kind) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.byKind[kind] > 0
}

// publish delivers events to every matching watcher without blocking. A
// watcher whose buffer is full is dropped: it has missed an event, and a
// gap it cannot see would be worse than a closed channel.
func (h *hub) publish(events []pendingEvent) {
	if len(events) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range events {
		ns := ev.Object.GetNamespace()
		for w := range h.subs {
			if w.kind != ev.kind || (w.ns != "" && w.ns != ns) {
				continue
			}
			select {
			case w.ch <- ev.Event:
			default:
				h.log.Warn("dropping slow watcher", "kind", w.kind, "namespace", w.ns, "buffer", h.buf)
				h.removeLocked(w)
			}
		}
	}
}

func (h *hub) removeLocked(w *watcher) {
	if _, ok := h.subs[w]; !ok {
		return
	}
	delete(h.subs, w)
	h.byKind[w.kind]--
	close(w.ch)
	close(w.done)
}

// close closes every watcher's channel; later subscribes fail.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for w := range h.subs {
		h.removeLocked(w)
	}
}
