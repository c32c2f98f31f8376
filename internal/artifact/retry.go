package artifact

import (
	"context"
	"fmt"
	"time"
)

// Backoff bounds the retries of a transient failure: Attempts tries in all, sleeping Initial, then twice
// that, and so on, between them.
type Backoff struct {
	Attempts int
	Initial  time.Duration
}

// DefaultBackoff is what network drivers use: 5 attempts, 100 ms doubling (1.5 s of sleep in all).
func DefaultBackoff() Backoff {
	return Backoff{Attempts: 5, Initial: 100 * time.Millisecond}
}

// Retry calls op until it succeeds, returns a non-retryable error, the attempts run out, or ctx ends. It
// returns op's last error, saying how many attempts were made when more than one was.
func Retry(ctx context.Context, b Backoff, op func(ctx context.Context) (retryable bool, err error)) error {
	attempts := max(b.Attempts, 1)
	delay := b.Initial
	for i := 1; ; i++ {
		retryable, err := op(ctx)
		if err == nil || !retryable {
			return err
		}
		if i == attempts {
			if attempts == 1 {
				return err
			}
			return fmt.Errorf("%w (gave up after %d attempts)", err, attempts)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (stopped retrying: %w)", err, ctx.Err())
		case <-t.C:
		}
		delay *= 2
	}
}
