package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// recoveryConcurrency is how many drivers of the start-up recovery load and
// first reconcile their workflows at once. The others wait their turn: ten
// thousand drivers decoding and reconciling together gain nothing on a few
// cores, and their garbage at once doubled the server's peak memory.
const recoveryConcurrency = 16

// Start-up recovery: the Manager's first listing of the stored workflows
// starts a driver for each one that is not completed. Each of those
// drivers has recovered once it first waits (its workflow loaded, its
// steps in flight looked up, its first reconcile persisted and acted on)
// or ends. Until the listing is over and every one of them has, the
// Manager is not Ready: an API server in front of it should not yet take
// traffic, which would wait behind the recovery.

// errListing is Ready's answer before the first listing is over.
var errListing = errors.New("recovering: listing the stored workflows")

// Ready returns nil once the Manager has finished its start-up recovery,
// else an error that says how much is left ("recovering N workflows").
// It is safe to call from any goroutine, before and during Run.
func (m *Manager) Ready() error {
	if !m.listed.Load() {
		return errListing
	}
	if n := m.recovering.Load(); n > 0 {
		return fmt.Errorf("recovering %d workflows", n)
	}
	return nil
}

// trackRecovery counts a driver started by the first listing until it
// settles. It runs on the watch goroutine, before the driver starts.
func (m *Manager) trackRecovery(h *handle) {
	if !m.listing {
		return
	}
	m.recovering.Add(1)
	h.settle = sync.OnceFunc(func() { m.recovering.Add(-1) })
}

// settled marks the driver's start-up recovery over (once; a no-op for a
// driver started after the first listing).
func (h *handle) settled() {
	if h.settle != nil {
		h.settle()
	}
}

// recoverySlot waits, for a driver of the start-up recovery, for one of the
// recoverySlots; settling gives it back. Other drivers go at once. It
// returns false when ctx ends first.
func (m *Manager) recoverySlot(ctx context.Context, h *handle) bool {
	if h.settle == nil {
		return true
	}
	select {
	case m.recoverySlots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	settle := h.settle
	h.settle = sync.OnceFunc(func() { settle(); <-m.recoverySlots })
	return true
}
