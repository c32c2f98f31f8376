package cli

import (
	"slices"
	"testing"
)

// A stream opened again after the server went away prints each line once.
func TestLogResume(t *testing.T) {
	cases := []struct {
		name  string
		first []string // lines the first stream printed (a tail, maybe)
		again []string // the whole log, read again
		want  []string
	}{
		{"from the start", []string{"a", "b"}, []string{"a", "b", "c", "d"}, []string{"c", "d"}},
		{"a tail", []string{"c", "d"}, []string{"a", "b", "c", "d", "e"}, []string{"e"}},
		{"nothing new", []string{"a"}, []string{"a"}, nil},
		{"nothing printed yet", nil, []string{"a", "b"}, []string{"a", "b"}},
		{"repeated lines print again rather than get lost", []string{"x", "x"}, []string{"x", "x", "x", "y"}, []string{"x", "y"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &logResume{seen: map[string]*podLines{}}
			r.request(nil) // the first stream
			for _, l := range tc.first {
				if !r.take("p", l) {
					t.Fatalf("first stream skipped %q", l)
				}
			}
			r.resumed = true
			for _, p := range r.seen {
				p.skip, p.looking = 0, p.printed > 0
			}
			var got []string
			for _, l := range tc.again {
				if r.take("p", l) {
					got = append(got, l)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("printed %q, want %q", got, tc.want)
			}
		})
	}
}
