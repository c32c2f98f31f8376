package synclock

import (
	"slices"
	"testing"
	"time"
)

func TestThrottlerParallelism(t *testing.T) {
	var n notes
	th := NewThrottler(2, 0, n.add)
	if !th.Admit("a/1", "a", 0, t0) || !th.Admit("b/2", "b", 0, t0) {
		t.Fatal("the first two were refused")
	}
	if th.Admit("a/3", "a", 0, t0.Add(time.Second)) {
		t.Fatal("a third was admitted")
	}
	if th.Admit("a/4", "a", 9, t0.Add(time.Hour)) {
		t.Fatal("a fourth was admitted")
	}
	th.Remove("a/1")
	if got := n.take(); !slices.Equal(got, []string{"a/4"}) {
		t.Errorf("notified %q, want the higher priority", got)
	}
	if th.Admit("a/3", "a", 0, t0.Add(time.Second)) {
		t.Error("a/3 jumped ahead of a/4")
	}
	if !th.Admit("a/4", "a", 9, t0.Add(time.Hour)) || !th.Admit("a/4", "a", 9, t0.Add(time.Hour)) {
		t.Error("a/4 was refused")
	}
	th.Remove("b/2")
	if !th.Admit("a/3", "a", 0, t0.Add(time.Second)) {
		t.Error("a/3 was refused")
	}
}

func TestThrottlerNamespaceParallelism(t *testing.T) {
	th := NewThrottler(0, 1, nil)
	if !th.Admit("a/1", "a", 0, t0) {
		t.Fatal("a/1 refused")
	}
	if th.Admit("a/2", "a", 0, t0) {
		t.Fatal("a/2 admitted beside a/1")
	}
	// A waiter of a full namespace does not hold up another namespace.
	if !th.Admit("b/1", "b", 0, t0.Add(time.Second)) {
		t.Fatal("b/1 refused")
	}
	th.Started("a/9", "a") // restored: counts, whatever the limit
	th.Remove("a/1")
	if th.Admit("a/2", "a", 0, t0) {
		t.Error("a/2 admitted beside the restored a/9")
	}
	th.Remove("a/9")
	if !th.Admit("a/2", "a", 0, t0) {
		t.Error("a/2 refused")
	}
	if NewThrottler(0, 0, nil).Enabled() {
		t.Error("no limits, yet enabled")
	}
}
