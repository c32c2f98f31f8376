package artifact

import (
	"context"
	"fmt"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Lister is implemented by the drivers that can list a location: the source of a data template's
// artifactPaths. The file and s3 drivers implement it.
type Lister interface {
	// List returns the keys of the objects under art's location, recursively, in lexical order: every
	// object whose key starts with key + "/" (all of them when the location names no key). Keys are
	// whole keys, as they would be given back in a location, not relative to art's key. Directory
	// markers (S3 objects whose key ends in "/") are left out. A location that holds nothing gives an
	// empty list, not an error; a bucket or repository that does not exist is an error.
	List(ctx context.Context, art *v1alpha1.Artifact) ([]string, error)
}

// List lists art's location with drv. A driver that is not a Lister fails with an error that names the
// location kind (not the artifact: the caller adds it) and wraps ErrUnsupported.
func List(ctx context.Context, drv Driver, art *v1alpha1.Artifact) ([]string, error) {
	if art == nil {
		return nil, fmt.Errorf("list: no artifact")
	}
	l, ok := drv.(Lister)
	if !ok {
		kind := Kind(&art.ArtifactLocation)
		return nil, fmt.Errorf("cannot list a %s location: listing is %w for it (only file and s3 locations can be listed)",
			kind, ErrUnsupported)
	}
	return l.List(ctx, art)
}
