package cron

import (
	"time"

	robfig "github.com/robfig/cron/v3"
)

// nextAfter is the earliest time after t at which one of the schedules is
// due; zero when none ever is.
func nextAfter(scheds []robfig.Schedule, t time.Time) time.Time {
	var next time.Time
	for _, s := range scheds {
		n := s.Next(t)
		if !n.IsZero() && (next.IsZero() || n.Before(next)) {
			next = n
		}
	}
	return next
}

// latestIn is the latest time in (a, b] at which one of the schedules is
// due; zero when there is none. It looks back from b in windows that
// double, so a long gap (a server down for a month) costs a few steps
// rather than one per scheduled time.
func latestIn(scheds []robfig.Schedule, a, b time.Time) time.Time {
	if !b.After(a) {
		return time.Time{}
	}
	const widest = 100 * 365 * 24 * time.Hour
	for w := time.Minute; ; w *= 2 {
		lo := b.Add(-w)
		if !lo.After(a) || w > widest {
			lo = a
		}
		if t := lastBetween(scheds, lo, b); !t.IsZero() || lo.Equal(a) {
			return t
		}
	}
}

// lastBetween walks the schedules forward from lo and returns the last
// time that is <= b.
func lastBetween(scheds []robfig.Schedule, lo, b time.Time) time.Time {
	var last time.Time
	for _, s := range scheds {
		for t := s.Next(lo); !t.IsZero() && !t.After(b); t = s.Next(t) {
			if t.After(last) {
				last = t
			}
		}
	}
	return last
}

// ScheduledTimes lists the times in (a, b] at which one of the schedules is
// due, in order and without duplicates, up to limit+1 of them (so that a
// caller can tell "more than limit").
func ScheduledTimes(scheds []robfig.Schedule, a, b time.Time, limit int) []time.Time {
	var out []time.Time
	for t := nextAfter(scheds, a); !t.IsZero() && !t.After(b) && len(out) <= limit; t = nextAfter(scheds, t) {
		out = append(out, t)
	}
	return out
}
