package s3

import (
	"context"
	"path"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

var _ artifact.Lister = (*Driver)(nil)

// List returns the keys of the objects under art's key + "/", recursively and in lexical order (every
// key of the bucket when the location names no key), leaving out directory markers (keys ending in
// "/"). An empty prefix gives an empty list; a bucket that does not exist is an error, as in Argo.
func (d *Driver) List(ctx context.Context, art *v1alpha1.Artifact) ([]string, error) {
	c, err := d.connect(ctx, art)
	if err != nil {
		return nil, err
	}
	defer c.close()
	prefix := listPrefix(c.loc.Key)
	listCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	keys := []string{}
	for obj := range c.client.ListObjects(listCtx, c.loc.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, c.wrap("list the objects under "+quotedPrefix(prefix)+" of", obj.Err)
		}
		if strings.HasSuffix(obj.Key, "/") {
			continue // a "directory marker" object
		}
		keys = append(keys, obj.Key)
	}
	if err := ctx.Err(); err != nil {
		return nil, c.wrap("list", err)
	}
	return keys, nil
}

// listPrefix is the prefix of the objects under key: "" for no key (the whole bucket), else the cleaned
// key followed by "/" ("a/./b//" lists "a/b/"), as Argo lists.
func listPrefix(key string) string {
	if key == "" {
		return ""
	}
	clean := path.Clean(key)
	if clean == "." || clean == "/" {
		return ""
	}
	return clean + "/"
}

func quotedPrefix(prefix string) string {
	if prefix == "" {
		return "the whole bucket"
	}
	return `"` + prefix + `"`
}
