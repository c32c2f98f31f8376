package kubeauth

import (
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestTTLCacheExpires(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	c := newTTLCache[string, int](10*time.Second, 10, clk.now)
	c.put("a", 1)
	clk.t = clk.t.Add(9 * time.Second)
	if v, ok := c.get("a"); !ok || v != 1 {
		t.Fatalf("get a after 9s = %d, %v; want 1, true", v, ok)
	}
	clk.t = clk.t.Add(time.Second)
	if _, ok := c.get("a"); ok {
		t.Fatal("get a after 10s: still there, want expired")
	}
	if n := c.len(); n != 0 {
		t.Fatalf("len after expiry = %d, want 0", n)
	}
}

func TestTTLCacheBounded(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	c := newTTLCache[int, int](time.Minute, 3, clk.now)
	for i := range 5 {
		c.put(i, i)
		clk.t = clk.t.Add(time.Second)
	}
	if n := c.len(); n != 3 {
		t.Fatalf("len = %d, want 3", n)
	}
	for i := range 5 {
		_, ok := c.get(i)
		if want := i >= 2; ok != want {
			t.Errorf("get %d: present %v, want %v (the oldest go first)", i, ok, want)
		}
	}
	// Putting a key again renews it: it is then the newest.
	c.put(2, 20)
	c.put(5, 5)
	if v, ok := c.get(2); !ok || v != 20 {
		t.Errorf("get 2 after renewal = %d, %v; want 20, true", v, ok)
	}
	if _, ok := c.get(3); ok {
		t.Error("get 3: present, want evicted as the oldest")
	}
}

func TestTTLCacheEvictsExpiredFirst(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	c := newTTLCache[int, int](time.Second, 100, clk.now)
	for i := range 50 {
		c.put(i, i)
	}
	clk.t = clk.t.Add(2 * time.Second)
	c.put(100, 100)
	if n := c.len(); n != 1 {
		t.Fatalf("len = %d, want 1: a put drops the expired entries", n)
	}
}

func TestTTLCacheOff(t *testing.T) {
	c := newTTLCache[int, int](-1, 10, time.Now)
	c.put(1, 1)
	if _, ok := c.get(1); ok || c.len() != 0 {
		t.Fatal("a cache with ttl < 0 keeps nothing")
	}
}
