package cron

import (
	"testing"
	"time"

	robfig "github.com/robfig/cron/v3"
)

func TestLatestIn(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	parse := func(specs ...string) []robfig.Schedule {
		var out []robfig.Schedule
		for _, s := range specs {
			v, err := robfig.ParseStandard(s)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		scheds []string
		a, b   string
		want   string // "" for none
	}{
		{"one minute", []string{"* * * * *"}, "2030-01-01T00:00:30Z", "2030-01-01T00:01:00Z", "2030-01-01T00:01:00Z"},
		{"exclusive start", []string{"* * * * *"}, "2030-01-01T00:01:00Z", "2030-01-01T00:01:59Z", ""},
		{"latest of many", []string{"* * * * *"}, "2030-01-01T00:00:00Z", "2030-03-01T12:34:56Z", "2030-03-01T12:34:00Z"},
		{"yearly over years", []string{"0 0 1 1 *"}, "2020-06-01T00:00:00Z", "2030-06-01T00:00:00Z", "2030-01-01T00:00:00Z"},
		{"none in range", []string{"0 0 1 1 *"}, "2030-01-02T00:00:00Z", "2030-06-01T00:00:00Z", ""},
		{"two schedules", []string{"0 * * * *", "30 * * * *"}, "2030-01-01T00:00:00Z", "2030-01-01T02:45:00Z", "2030-01-01T02:30:00Z"},
		{"empty range", []string{"* * * * *"}, "2030-01-01T00:05:00Z", "2030-01-01T00:01:00Z", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := latestIn(parse(tc.scheds...), at(tc.a), at(tc.b))
			if tc.want == "" {
				if !got.IsZero() {
					t.Fatalf("got %v, want none", got)
				}
				return
			}
			if !got.Equal(at(tc.want)) {
				t.Fatalf("got %v, want %s", got, tc.want)
			}
		})
	}
	times := ScheduledTimes(parse("0 * * * *", "30 * * * *"), at("2030-01-01T00:00:00Z"), at("2030-01-01T02:00:00Z"), 10)
	if len(times) != 4 || !times[0].Equal(at("2030-01-01T00:30:00Z")) || !times[3].Equal(at("2030-01-01T02:00:00Z")) {
		t.Fatalf("ScheduledTimes = %v", times)
	}
	if n := len(ScheduledTimes(parse("* * * * *"), at("2030-01-01T00:00:00Z"), at("2030-01-02T00:00:00Z"), 5)); n != 6 {
		t.Fatalf("ScheduledTimes stops at limit+1: got %d", n)
	}
}
