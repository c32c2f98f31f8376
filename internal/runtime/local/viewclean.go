package local

import (
	"os"
)

// dropView removes what a finished step's root view left on disk: the
// overlay's upper layer (everything the step wrote), its work directory and
// the private /tmp. Output parameters and artifacts are read and saved
// before, and the step's log and result stay; nothing else needs them, and
// a step that writes gigabytes must not keep them on the host. Errors are
// logged, not returned: the step's outcome does not depend on them.
func (rt *Runtime) dropView(v *view) {
	if v == nil {
		return
	}
	for _, dir := range []string{v.upper, v.work, v.tmp, v.merged} {
		if err := os.RemoveAll(dir); err != nil {
			rt.log.Warn("remove a finished step's files", "dir", dir, "err", err)
		}
	}
}
