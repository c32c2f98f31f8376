package artifact

import (
	"fmt"
	"strings"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Key returns the key (object name, path) of a location whose kind has
// one.
func Key(loc *v1alpha1.ArtifactLocation) (string, bool) {
	switch {
	case loc.S3 != nil:
		return loc.S3.Key, true
	case loc.File != nil:
		return loc.File.Key, true
	case loc.GCS != nil:
		return loc.GCS.Key, true
	case loc.OSS != nil:
		return loc.OSS.Key, true
	case loc.Azure != nil:
		return loc.Azure.Blob, true
	case loc.HDFS != nil:
		return loc.HDFS.Path, true
	case loc.Plugin != nil:
		return loc.Plugin.Key, true
	}
	return "", false
}

// SetKey sets the key of a location whose kind has one.
func SetKey(loc *v1alpha1.ArtifactLocation, key string) error {
	switch {
	case loc.S3 != nil:
		loc.S3.Key = key
	case loc.File != nil:
		loc.File.Key = key
	case loc.GCS != nil:
		loc.GCS.Key = key
	case loc.OSS != nil:
		loc.OSS.Key = key
	case loc.Azure != nil:
		loc.Azure.Blob = key
	case loc.HDFS != nil:
		loc.HDFS.Path = "/" + strings.TrimPrefix(key, "/")
	case loc.Plugin != nil:
		loc.Plugin.Key = key
	default:
		return fmt.Errorf("a %s location has no key", Kind(loc))
	}
	return nil
}
