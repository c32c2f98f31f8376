package testutil

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// The gap between two calls of a condition starts at firstGap and grows by
// half each time up to maxGap.
const (
	firstGap = 5 * time.Millisecond
	maxGap   = 100 * time.Millisecond
)

// ErrNotYet is a condition's answer when it does not hold and has nothing
// more to say.
var ErrNotYet = errors.New("not yet")

// Poll calls cond at once and then every few milliseconds until it returns
// nil, and returns nil; when timeout passes first it returns cond's last
// error, wrapped with the time it waited.
func Poll(timeout time.Duration, cond func() error) error {
	return poll(timeout, firstGap, func(gap time.Duration) time.Duration { return min(gap+gap/2, maxGap) }, cond)
}

// PollEvery is Poll with a fixed gap, for a condition that must be seen
// soon after it starts to hold (a bound about to be crossed).
func PollEvery(timeout, every time.Duration, cond func() error) error {
	return poll(timeout, every, func(gap time.Duration) time.Duration { return gap }, cond)
}

func poll(timeout, gap time.Duration, next func(time.Duration) time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("not within %v: %w", timeout, err)
		}
		t := time.NewTimer(min(gap, left))
		<-t.C
		gap = next(gap)
	}
}

// Eventually is Poll that fails t, saying what it waited for and cond's
// last error. cond runs on the test's goroutine, so it may call t.Fatal.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	if err := Poll(timeout, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Until is Eventually for a condition that has no error to tell.
func Until(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	Eventually(t, timeout, what, func() error {
		if cond() {
			return nil
		}
		return ErrNotYet
	})
}
