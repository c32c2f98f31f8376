package artifact

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Driver moves one kind of location (s3, git, http, raw, file).
type Driver interface {
	// Load writes the artifact at art's location to path: a file, or a directory when the location is one
	// (a git checkout; an S3 "directory" key whose objects share the prefix key + "/").
	Load(ctx context.Context, art *v1alpha1.Artifact, path string) error
	// Save uploads path (a file, or a directory uploaded object by object under key/ when archive is none)
	// to art's location. The caller has already packed it (tar+gzip) when the archive strategy says so.
	Save(ctx context.Context, path string, art *v1alpha1.Artifact) error
	// OpenStream reads the stored object (a file location) as a stream.
	OpenStream(ctx context.Context, art *v1alpha1.Artifact) (io.ReadCloser, error)
	// Delete removes the stored object(s) (artifact GC). Deleting what is absent is not an error.
	Delete(ctx context.Context, art *v1alpha1.Artifact) error
}

// Secrets resolves a Kubernetes SecretKeySelector (accessKeySecret, passwordSecret, sshPrivateKeySecret, ...).
type Secrets interface {
	Secret(ctx context.Context, namespace, name, key string) (string, error)
}

// ErrNotFound is returned (wrapped) by Load and OpenStream when the location holds nothing: a missing key,
// an HTTP 404. Callers test it with errors.Is to honour an input's `optional`.
var ErrNotFound = errors.New("artifact not found")

// ErrUnsupported is returned (wrapped) when a driver cannot do what is asked: saving to a raw or git
// location, a location kind with no driver, an archive strategy or auth method braid does not implement.
var ErrUnsupported = errors.New("not supported")

// ErrIsDirectory is returned (wrapped) by OpenStream when the location holds a directory, not a file: an
// output directory saved with archive none. It has no single stream; OpenDir lists it and streams it as a tar.
var ErrIsDirectory = errors.New("the location holds a directory, not a file")

// Location kinds, as named by the ArtifactLocation JSON fields.
const (
	KindS3          = "s3"
	KindGit         = "git"
	KindHTTP        = "http"
	KindRaw         = "raw"
	KindFile        = "file"
	KindArtifactory = "artifactory"
	KindHDFS        = "hdfs"
	KindOSS         = "oss"
	KindGCS         = "gcs"
	KindAzure       = "azure"
	KindPlugin      = "plugin"
)

// Kind names the location kind set in loc ("s3", "git", ...), or "" when none is set.
func Kind(loc *v1alpha1.ArtifactLocation) string {
	switch {
	case loc == nil:
		return ""
	case loc.S3 != nil:
		return KindS3
	case loc.Git != nil:
		return KindGit
	case loc.HTTP != nil:
		return KindHTTP
	case loc.Raw != nil:
		return KindRaw
	case loc.File != nil:
		return KindFile
	case loc.Artifactory != nil:
		return KindArtifactory
	case loc.HDFS != nil:
		return KindHDFS
	case loc.OSS != nil:
		return KindOSS
	case loc.GCS != nil:
		return KindGCS
	case loc.Azure != nil:
		return KindAzure
	case loc.Plugin != nil:
		return KindPlugin
	}
	return ""
}

// Drivers holds one driver per supported location kind. A nil field means the kind is not supported
// in this process. It is built once at start-up and read-only afterwards.
type Drivers struct {
	S3   Driver
	Git  Driver
	HTTP Driver
	Raw  Driver
	File Driver
}

// For returns the driver for the location kind set in loc. It fails when loc has no location or the kind
// has no driver; the latter error wraps ErrUnsupported.
func (d *Drivers) For(loc *v1alpha1.ArtifactLocation) (Driver, error) {
	kind := Kind(loc)
	if kind == "" {
		return nil, errors.New("the artifact has no location (none of s3, git, http, raw, file, ... is set)")
	}
	var drv Driver
	if d != nil {
		switch kind {
		case KindS3:
			drv = d.S3
		case KindGit:
			drv = d.Git
		case KindHTTP:
			drv = d.HTTP
		case KindRaw:
			drv = d.Raw
		case KindFile:
			drv = d.File
		}
	}
	if drv == nil {
		return nil, fmt.Errorf("artifact location kind %q is %w", kind, ErrUnsupported)
	}
	return drv, nil
}

type namespaceKey struct{}

// WithNamespace returns ctx carrying the namespace of the workflow whose
// artifact is moved: a driver built without a namespace of its own (the
// one shared by every workflow of a cluster) resolves secret references
// there.
func WithNamespace(ctx context.Context, namespace string) context.Context {
	return context.WithValue(ctx, namespaceKey{}, namespace)
}

// SecretNamespace is where a driver built for namespace resolves a secret
// reference: namespace when set, else the one ctx carries (WithNamespace).
func SecretNamespace(ctx context.Context, namespace string) string {
	if namespace != "" {
		return namespace
	}
	ns, _ := ctx.Value(namespaceKey{}).(string)
	return ns
}
