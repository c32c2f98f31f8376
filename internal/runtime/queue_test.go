package runtime

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestQueue pushes from several goroutines, with a reader that lags far
// behind and then catches up, and checks that nothing is lost, nothing is
// duplicated and each pusher's events keep their order.
func TestQueue(t *testing.T) {
	q := NewQueue(256)
	const pushers, each = 4, 5000
	var wg sync.WaitGroup
	for p := range pushers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				q.Push(StepEvent{RunID: strconv.Itoa(p), NodeID: strconv.Itoa(i)})
			}
		}()
	}
	wg.Wait() // every push returned before anything was read: push never blocks
	next := make([]int, pushers)
	for range pushers * each {
		select {
		case ev := <-q.Out():
			p, _ := strconv.Atoi(ev.RunID)
			i, _ := strconv.Atoi(ev.NodeID)
			if i != next[p] {
				t.Fatalf("pusher %d: got event %d, want %d", p, i, next[p])
			}
			next[p]++
		case <-time.After(10 * time.Second):
			t.Fatalf("events lost: got %v", next)
		}
	}
	select {
	case ev := <-q.Out():
		t.Fatalf("extra event %+v", ev)
	case <-time.After(50 * time.Millisecond):
	}
	q.Close()
	if _, ok := <-q.Out(); ok {
		t.Fatal("out not closed")
	}
	q.Push(StepEvent{}) // after close: dropped, no panic
}
