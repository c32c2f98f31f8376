package runtime

import "sync"

// Queue delivers events in order without ever blocking the pusher. An event
// goes straight into the buffered out channel when nothing is waiting
// before it and the buffer has room (the common case: no extra goroutine
// hop). Otherwise it waits in a slice until one goroutine hands it over.
type Queue struct {
	out  chan StepEvent
	wake chan struct{} // capacity 1: "the slice is not empty"
	quit chan struct{}
	done chan struct{}

	mu      sync.Mutex
	items   []StepEvent
	pending int // events pushed and not yet in out: items plus run's batch
}

// NewQueue returns a running Queue; Close stops it.
func NewQueue() *Queue {
	q := &Queue{
		out:  make(chan StepEvent, 256),
		wake: make(chan struct{}, 1),
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
	go q.run()
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
	close(q.quit)
	<-q.done
	q.mu.Lock()
	defer q.mu.Unlock()
	// No push may send on out after this: pending > 0 sends nothing.
	q.pending = 1 << 30
	close(q.out)
}
