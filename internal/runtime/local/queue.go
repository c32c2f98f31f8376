package local

import (
	"sync"

	"github.com/braidwf/braid/internal/runtime"
)

// queue delivers events in order without ever blocking the pusher. An event
// goes straight into the buffered out channel when nothing is waiting
// before it and the buffer has room (the common case: no extra goroutine
// hop). Otherwise it waits in a slice until one goroutine hands it over.
type queue struct {
	out  chan runtime.StepEvent
	wake chan struct{} // capacity 1: "the slice is not empty"
	quit chan struct{}
	done chan struct{}

	mu      sync.Mutex
	items   []runtime.StepEvent
	pending int // events pushed and not yet in out: items plus run's batch
}

func newQueue() *queue {
	q := &queue{
		out:  make(chan runtime.StepEvent, 256),
		wake: make(chan struct{}, 1),
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
	go q.run()
	return q
}

func (q *queue) push(ev runtime.StepEvent) {
	q.mu.Lock()
	if q.pending == 0 {
		select {
		case q.out <- ev:
			q.mu.Unlock()
			return
		default:
		}
	}
	q.items = append(q.items, ev)
	q.pending++
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *queue) run() {
	defer close(q.done)
	var batch []runtime.StepEvent
	for {
		q.mu.Lock()
		batch, q.items = q.items, batch[:0]
		q.mu.Unlock()
		if len(batch) == 0 {
			select {
			case <-q.wake:
				continue
			case <-q.quit:
				return
			}
		}
		for i := range batch {
			select {
			case q.out <- batch[i]:
			case <-q.quit:
				return
			}
			q.mu.Lock()
			q.pending--
			q.mu.Unlock()
		}
		clear(batch)
	}
}

// close stops delivery and closes out; undelivered events are dropped.
func (q *queue) close() {
	close(q.quit)
	<-q.done
	q.mu.Lock()
	defer q.mu.Unlock()
	// No push may send on out after this: pending > 0 sends nothing.
	q.pending = 1 << 30
	close(q.out)
}
