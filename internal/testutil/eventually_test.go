package testutil

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestPollReturnsOnceTheConditionHolds(t *testing.T) {
	var calls atomic.Int32
	err := Poll(10*time.Second, func() error {
		if calls.Add(1) < 3 {
			return ErrNotYet
		}
		return nil
	})
	if err != nil || calls.Load() != 3 {
		t.Fatalf("Poll = %v after %d calls, want nil after 3", err, calls.Load())
	}
}

func TestPollGivesTheLastError(t *testing.T) {
	last := errors.New("phase Running")
	start := time.Now()
	err := Poll(30*time.Millisecond, func() error { return last })
	if !errors.Is(err, last) || !strings.Contains(err.Error(), "not within 30ms") {
		t.Fatalf("Poll = %v, want the last error after 30ms", err)
	}
	if took := time.Since(start); took < 30*time.Millisecond || took > 5*time.Second {
		t.Errorf("Poll gave up after %v", took)
	}
}
