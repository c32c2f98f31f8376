package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

var _ artifact.Lister = (*Driver)(nil)

// List returns the keys of the regular files under art's key (a directory), recursively and in lexical
// order, each as a whole key ("key/sub/name"); an empty key lists the whole repository. As with an S3
// prefix, a key that is missing or names a file gives an empty list, and so does a repository that has
// never been saved to. Symbolic links and the temporary names of saves in progress are left out.
func (d *Driver) List(ctx context.Context, art *v1alpha1.Artifact) ([]string, error) {
	key, err := d.listKey(art)
	if err != nil {
		return nil, err
	}
	keys := []string{}
	repo, err := d.open(false)
	if errors.Is(err, fs.ErrNotExist) {
		return keys, nil
	}
	if err != nil {
		return nil, d.fail(art, key, "list", err)
	}
	defer repo.Close()
	start := "."
	if key != "" {
		start = filepath.ToSlash(key)
	}
	err = fs.WalkDir(repo.FS(), start, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == start && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
				return fs.SkipAll // nothing under the key
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		switch {
		case p == start:
			if !e.IsDir() {
				return fs.SkipAll // a file is not a directory of objects
			}
		case saving(e.Name()):
			if e.IsDir() {
				return fs.SkipDir
			}
		case e.Type().IsRegular():
			keys = append(keys, path.Clean(p))
		}
		return nil
	})
	if err != nil {
		return nil, d.fail(art, key, "list", err)
	}
	return keys, nil
}

// listKey returns art's cleaned key for listing: "" (the whole repository) or a relative path inside it.
func (d *Driver) listKey(art *v1alpha1.Artifact) (string, error) {
	if art == nil || art.File == nil {
		return "", errors.New("file artifact driver: the artifact has no file location")
	}
	raw := strings.TrimSuffix(art.File.Key, "/")
	if raw == "" {
		return "", nil
	}
	key := filepath.Clean(filepath.FromSlash(raw))
	if strings.HasPrefix(raw, "/") || !filepath.IsLocal(key) {
		return "", fmt.Errorf("artifact %q: file repository key %q must be a relative path inside the repository",
			art.Name, art.File.Key)
	}
	return key, nil
}

// saving reports whether name is the temporary name of a save in progress (see tempName).
func saving(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
}
