package printer

import (
	"strconv"
	"time"
)

// Calendar units of the relative formats. A month is 30 days and a year 12
// such months, so a "year" is 360 days, as in the argo CLI.
const (
	day   = 24 * time.Hour
	week  = 7 * day
	month = 30 * day
	year  = 12 * month
)

// ShortDuration renders d in the one-unit short form of the argo CLI's AGE
// and DURATION columns: 0s, 7s, 15m, 3h, 2d. The value is truncated, never
// rounded, and the sign is dropped.
func ShortDuration(d time.Duration) string {
	d = abs(d)
	switch {
	case d < time.Minute:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	case d < time.Hour:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d < day:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	default:
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
}

// HumanDuration renders d in the long form of `argo get`'s Duration and
// EstimatedDuration lines: the largest unit, then the remainder in the next
// smaller unit once d reaches a minute: "20 seconds", "1 minute 5 seconds",
// "16 minutes 5 seconds", "3 hours 0 minutes", "2 days 4 hours". The
// remainder is always plural, as in the CLI. Below a minute (including any
// negative d) only the magnitude is shown.
func HumanDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return unitPhrase(abs(d))
	case d < time.Hour:
		return unitPhrase(d) + " " + strconv.FormatInt(int64(d%time.Minute/time.Second), 10) + " seconds"
	case d < day:
		return unitPhrase(d) + " " + strconv.FormatInt(int64(d%time.Hour/time.Minute), 10) + " minutes"
	default:
		return unitPhrase(d) + " " + strconv.FormatInt(int64(d%day/time.Hour), 10) + " hours"
	}
}

// unitPhrase names a non-negative span in its single largest unit, in the
// coarse steps the CLI uses: "0 seconds", "1 second", "42 seconds",
// "1 minute", ..., "1 week", "3 weeks", "1 month", "11 months", "1 year",
// "2 years", "N years", and "a long while" past 37 (360-day) years.
func unitPhrase(d time.Duration) string {
	n := func(unit time.Duration, name string) string {
		return strconv.FormatInt(int64(d/unit), 10) + " " + name
	}
	switch {
	case d < time.Second:
		return "0 seconds"
	case d < 2*time.Second:
		return "1 second"
	case d < time.Minute:
		return n(time.Second, "seconds")
	case d < 2*time.Minute:
		return "1 minute"
	case d < time.Hour:
		return n(time.Minute, "minutes")
	case d < 2*time.Hour:
		return "1 hour"
	case d < day:
		return n(time.Hour, "hours")
	case d < 2*day:
		return "1 day"
	case d < week:
		return n(day, "days")
	case d < 2*week:
		return "1 week"
	case d < month:
		return n(week, "weeks")
	case d < 2*month:
		return "1 month"
	case d < year:
		return n(month, "months")
	case d < 18*month:
		return "1 year"
	case d < 2*year:
		return "2 years"
	case d < 37*year:
		return n(year, "years")
	default:
		return "a long while"
	}
}

// relativeTime says how far t is from now: "now" within a second, otherwise
// "15 minutes ago" or "2 hours from now".
func relativeTime(t, now time.Time) string {
	d := now.Sub(t)
	label := "ago"
	if t.After(now) {
		d = t.Sub(now)
		label = "from now"
	}
	if d < time.Second {
		return "now"
	}
	return unitPhrase(d) + " " + label
}

// Timestamp renders a header time as the argo CLI does:
// "Mon Nov 30 09:00:00 +0000 (15 minutes ago)".
func Timestamp(t, now time.Time) string {
	return t.Format("Mon Jan 02 15:04:05 -0700") + " (" + relativeTime(t, now) + ")"
}

// spanShort is the short duration from start to finish, where a zero finish
// of a started span means "still going" and is replaced by now.
func spanShort(start, finish, now time.Time) string {
	if finish.IsZero() && !start.IsZero() {
		finish = now
	}
	return ShortDuration(finish.Sub(start))
}

// spanLong is spanShort in the long form.
func spanLong(start, finish, now time.Time) string {
	if finish.IsZero() && !start.IsZero() {
		finish = now
	}
	return HumanDuration(finish.Sub(start))
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
