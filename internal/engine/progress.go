package engine

import (
	"fmt"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// setProgress sets status.progress to "completed pods/all pods", as Argo
// sums the progress of its pod nodes (each 0/1 until it completes, then 1/1).
func (r *run) setProgress() {
	done, total := 0, 0
	for _, n := range r.nodes {
		if n.Type != v1alpha1.NodeTypePod {
			continue
		}
		total++
		if n.Phase.Completed() {
			done++
		}
	}
	if total == 0 {
		return
	}
	r.wf.Status.Progress = v1alpha1.Progress(fmt.Sprintf("%d/%d", done, total))
}
