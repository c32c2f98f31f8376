package printer

import (
	"errors"
	"fmt"

	"github.com/braidwf/braid/pkg/nodeselector"
)

// newNodeFilter builds the filter of o: the parsed --node-field-selector
// (nil when there is none, keeping every node) or the phases of --status.
// --status S is the selector "phase=S"; braid also accepts several
// statuses, any of which matches. As in the CLI, the two options cannot be
// combined. As argo get does, any field name is accepted; one a node never
// has reads as "".
func newNodeFilter(o Options) (*nodeselector.Selector, []string, error) {
	if len(o.StatusFilter) > 0 {
		if o.NodeFieldSelector != "" {
			return nil, nil, errors.New("cannot use both --status and --node-field-selector")
		}
		return nil, o.StatusFilter, nil
	}
	if o.NodeFieldSelector == "" {
		return nil, nil, nil
	}
	sel, err := nodeselector.Parse(o.NodeFieldSelector)
	if err != nil {
		return nil, nil, fmt.Errorf("selector is invalid: %w", err)
	}
	return &sel, nil, nil
}
