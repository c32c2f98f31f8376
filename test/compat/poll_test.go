package compat

import (
	"errors"
	"fmt"
	"time"
)

// errNotYet is a condition's answer when it does not hold and has nothing
// more to say.
var errNotYet = errors.New("not yet")

// poll calls cond at once and then every few milliseconds (the gap grows
// from 5 ms to 100 ms) until it returns nil, and returns nil; when timeout
// passes first it returns cond's last error. This module does not import
// braid's, so this is internal/testutil.Poll again.
func poll(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	gap := 5 * time.Millisecond
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
		gap = min(gap+gap/2, 100*time.Millisecond)
	}
}
