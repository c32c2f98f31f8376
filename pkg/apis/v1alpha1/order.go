package v1alpha1

import (
	"sort"
	"time"
)

// SortWorkflows puts wfs in argo's list order: unfinished workflows first,
// newest created first, then finished ones, latest finished first. Times
// are compared to the second, as a client of the API sees them, and ties keep
// their order. The CLI's list and the server's list stream share it.
func SortWorkflows(wfs []*Workflow) {
	sort.SliceStable(wfs, func(i, j int) bool {
		a, b := wfs[i], wfs[j]
		aDone, bDone := !a.Status.FinishedAt.IsZero(), !b.Status.FinishedAt.IsZero()
		switch {
		case !aDone && !bDone:
			return seconds(b.CreationTimestamp.Time).Before(seconds(a.CreationTimestamp.Time))
		case aDone != bDone:
			return !aDone
		default:
			return seconds(b.Status.FinishedAt.Time).Before(seconds(a.Status.FinishedAt.Time))
		}
	})
}

// seconds drops the fraction the JSON form of a time does not carry.
func seconds(t time.Time) time.Time { return t.Truncate(time.Second) }
