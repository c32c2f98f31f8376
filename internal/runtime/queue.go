package runtime

import "sync"

// Queue delivers events in order without ever blocking the pusher. An event
// goes straight into the buffered out channel when nothing is waiting
// before it and the buffer has room (the common case: no extra goroutine
// hop). Otherwise it waits in a slice until one goroutine hands it over;
// that goroutine starts with the first event that waits, so an idle queue
// costs no goroutine (a server holds one queue per workflow).
type Queue struct {
	out  chan StepEvent
	wake chan struct{} // capacity 1: "the slice is not empty"
	quit chan struct{}
	done chan struct{}

	mu      sync.Mutex
	items   []StepEvent
	pending int  // events pushed and not yet in out: items plus run's batch
	started bool // run was started (or Close ran: none may start)
}

// NewQueue returns a running Queue whose out channel holds up to buffer
// events (more wait in the slice); Close stops it. A runtime's one queue
// wants a large buffer; a queue per workflow a small one, since a
// StepEvent is large and a server may hold thousands of workflows.
func NewQueue(buffer int) *Queue {
	q := &Queue{
		out:  make(chan StepEvent, buffer),
		wake: make(chan struct{}, 1),
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
	return q
}

// Push queues ev; it never blocks.
func (q *Queue) Push(ev StepEvent) {
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
	if !q.started {
		q.started = true
		go q.run()
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *Queue) run() {
	defer close(q.done)
	var batch []StepEvent
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

// Out delivers the events in the order they were pushed.
func (q *Queue) Out() <-chan StepEvent { return q.out }

// Close stops delivery and closes Out; undelivered events are dropped.
func (q *Queue) Close() {
	q.mu.Lock()
	close(q.quit)
	started := q.started
	q.started = true // no run starts after this
	// No push may send on out after this: pending > 0 sends nothing.
	q.pending = 1 << 30
	q.mu.Unlock()
	if started {
		<-q.done
	}
	close(q.out)
}
