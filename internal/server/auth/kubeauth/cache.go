package kubeauth

import (
	"container/list"
	"sync"
	"time"
)

// ttlCache is a map whose entries expire ttl after they were put, holding
// at most max entries. Every entry lives the same ttl, so insertion order
// is expiry order: the oldest entry is evicted first, whether it expired or
// the cache is full. Safe for concurrent use.
type ttlCache[K comparable, V any] struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu    sync.Mutex
	items map[K]*list.Element // of *ttlEntry[K, V]
	order *list.List          // oldest first
}

type ttlEntry[K comparable, V any] struct {
	key     K
	val     V
	expires time.Time
}

func newTTLCache[K comparable, V any](ttl time.Duration, max int, now func() time.Time) *ttlCache[K, V] {
	return &ttlCache[K, V]{ttl: ttl, max: max, now: now, items: map[K]*list.Element{}, order: list.New()}
}

// get returns the live value of k.
func (c *ttlCache[K, V]) get(k K) (V, bool) {
	var zero V
	if c.ttl <= 0 {
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		return zero, false
	}
	e := el.Value.(*ttlEntry[K, V])
	if !c.now().Before(e.expires) {
		c.remove(el)
		return zero, false
	}
	return e.val, true
}

// put stores v under k for ttl, evicting expired entries and, when the
// cache is full, the oldest one.
func (c *ttlCache[K, V]) put(k K, v V) {
	if c.ttl <= 0 || c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if el, ok := c.items[k]; ok {
		c.remove(el)
	}
	for el := c.order.Front(); el != nil; el = c.order.Front() {
		if c.order.Len() < c.max && now.Before(el.Value.(*ttlEntry[K, V]).expires) {
			break
		}
		c.remove(el)
	}
	c.items[k] = c.order.PushBack(&ttlEntry[K, V]{key: k, val: v, expires: now.Add(c.ttl)})
}

func (c *ttlCache[K, V]) remove(el *list.Element) {
	delete(c.items, el.Value.(*ttlEntry[K, V]).key)
	c.order.Remove(el)
}

// len is the number of entries held, live or not yet evicted.
func (c *ttlCache[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
