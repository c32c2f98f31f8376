package store

import (
	"context"
	"errors"
	"fmt"
)

// DefaultModifyAttempts is how many times Modify tries when its caller
// gives no bound.
const DefaultModifyAttempts = 5

// Modify is a read-modify-write of one object under optimistic
// concurrency. It reads the object with get, lets change decide what to
// write, and writes that with update. When update fails with ErrConflict
// (another writer changed the object since it was read), it starts over
// from a fresh read, at most attempts times in all (DefaultModifyAttempts
// when attempts < 1).
//
// change may edit the object it is given and return it, or return a
// changed copy; it also says whether there is anything to write. Modify
// returns what was written, or what change returned when it wrote
// nothing.
//
// The errors of get, change and update come back as they are, so that
// the caller can map them to its own (an API status, a log line). Only
// when every attempt conflicts does Modify return an error of its own; it
// wraps the last ErrConflict, so errors.Is(err, ErrConflict) tells it.
func Modify[T Object](ctx context.Context, attempts int,
	get func(context.Context) (T, error),
	change func(T) (T, bool, error),
	update func(context.Context, T) error,
) (T, error) {
	var zero T
	if attempts < 1 {
		attempts = DefaultModifyAttempts
	}
	var err error
	for range attempts {
		var obj T
		if obj, err = get(ctx); err != nil {
			return zero, err
		}
		var write bool
		if obj, write, err = change(obj); err != nil {
			return zero, err
		}
		if !write {
			return obj, nil
		}
		if err = update(ctx, obj); err == nil {
			return obj, nil
		}
		if !errors.Is(err, ErrConflict) {
			return zero, err
		}
	}
	return zero, fmt.Errorf("gave up after %d attempts: the object changed under each: %w", attempts, err)
}
