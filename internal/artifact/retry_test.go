package artifact

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRetry(t *testing.T) {
	fail := errors.New("boom")
	tests := []struct {
		name      string
		failFirst int  // calls that fail before one succeeds
		retryable bool // whether failures are retryable
		wantCalls int
		wantErr   string
	}{
		{"first try", 0, true, 1, ""},
		{"succeeds on the third", 2, true, 3, ""},
		{"gives up", 10, true, 4, "boom (gave up after 4 attempts)"},
		{"permanent", 10, false, 1, "boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := Retry(context.Background(), Backoff{Attempts: 4, Initial: time.Millisecond},
				func(context.Context) (bool, error) {
					calls++
					if calls <= tc.failFirst {
						return tc.retryable, fail
					}
					return false, nil
				})
			if calls != tc.wantCalls {
				t.Errorf("calls = %d, want %d", calls, tc.wantCalls)
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, fail) {
				t.Errorf("err %v does not wrap the last error", err)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Retry(ctx, DefaultBackoff(), func(context.Context) (bool, error) { return true, fail })
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "boom") {
		t.Errorf("cancelled retry = %v", err)
	}
}
