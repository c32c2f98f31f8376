package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Driver stores artifacts under a root directory.
type Driver struct {
	root string
}

var _ artifact.Driver = (*Driver)(nil)

// New returns a driver for the repository rooted at root, which is created on the first Save.
func New(root string) *Driver {
	return &Driver{root: root}
}

// Root is the repository's root directory.
func (d *Driver) Root() string { return d.root }

// Load copies the file or directory at art's key to path.
func (d *Driver) Load(ctx context.Context, art *v1alpha1.Artifact, path string) error {
	key, err := d.key(art)
	if err != nil {
		return err
	}
	repo, err := d.open(false)
	if err != nil {
		return d.missing(art, key, "load", err)
	}
	defer repo.Close()
	if _, err := repo.Stat(key); err != nil {
		return d.missing(art, key, "load", err)
	}
	local, name, err := openParent(path)
	if err != nil {
		return d.fail(art, key, "load", err)
	}
	defer local.Close()
	if err := place(ctx, repo, key, local, name); err != nil {
		return d.fail(art, key, "load to "+path, err)
	}
	return nil
}

// Save copies the file or directory at path to art's key, replacing what was there.
func (d *Driver) Save(ctx context.Context, path string, art *v1alpha1.Artifact) error {
	key, err := d.key(art)
	if err != nil {
		return err
	}
	src, err := filepath.EvalSymlinks(path)
	if err != nil {
		return d.fail(art, key, "save "+path, err)
	}
	local, name, err := openParent(src)
	if err != nil {
		return d.fail(art, key, "save "+path, err)
	}
	defer local.Close()
	repo, err := d.open(true)
	if err != nil {
		return d.fail(art, key, "save", err)
	}
	defer repo.Close()
	if err := place(ctx, local, name, repo, key); err != nil {
		return d.fail(art, key, "save "+path, err)
	}
	return nil
}

// OpenStream opens the file at art's key.
func (d *Driver) OpenStream(ctx context.Context, art *v1alpha1.Artifact) (io.ReadCloser, error) {
	key, err := d.key(art)
	if err != nil {
		return nil, err
	}
	repo, err := d.open(false)
	if err != nil {
		return nil, d.missing(art, key, "open", err)
	}
	defer repo.Close()
	if err := noLinks(repo, key); err != nil {
		return nil, d.missing(art, key, "open", err)
	}
	f, err := repo.Open(key)
	if err != nil {
		return nil, d.missing(art, key, "open", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, d.fail(art, key, "open", err)
	}
	if info.IsDir() {
		f.Close()
		return nil, d.fail(art, key, "open", artifact.ErrIsDirectory)
	}
	return f, nil
}

// noLinks refuses a key that is, or passes through, a symbolic link: a directory artifact keeps its links
// as links, and a download of a file inside it never follows one, not even to elsewhere in the repository
// (another workflow's artifacts). The refusal wraps artifact.ErrUnsupported.
func noLinks(repo *os.Root, key string) error {
	parts := strings.Split(key, string(filepath.Separator))
	for i := range parts { // from the top: a link is found before anything is looked up through it
		p := filepath.Join(parts[:i+1]...)
		info, err := repo.Lstat(p)
		if err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link: following one is %w", filepath.ToSlash(p), artifact.ErrUnsupported)
		}
	}
	return nil
}

// Delete removes art's key and the directories it leaves empty. A missing key is not an error.
func (d *Driver) Delete(ctx context.Context, art *v1alpha1.Artifact) error {
	key, err := d.key(art)
	if err != nil {
		return err
	}
	repo, err := d.open(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return d.fail(art, key, "delete", err)
	}
	defer repo.Close()
	if err := repo.RemoveAll(key); err != nil {
		return d.fail(art, key, "delete", err)
	}
	for dir := filepath.Dir(key); dir != "."; dir = filepath.Dir(dir) {
		if repo.Remove(dir) != nil { // not empty, or already gone: stop
			break
		}
	}
	return nil
}

// key returns art's cleaned key, refusing one that leaves the root.
func (d *Driver) key(art *v1alpha1.Artifact) (string, error) {
	if art == nil || art.File == nil {
		return "", errors.New("file artifact driver: the artifact has no file location")
	}
	raw := art.File.Key
	key := filepath.Clean(filepath.FromSlash(raw))
	if raw == "" || strings.HasPrefix(raw, "/") || !filepath.IsLocal(key) {
		return "", fmt.Errorf("artifact %q: file repository key %q must be a relative path inside the repository",
			art.Name, raw)
	}
	return key, nil
}

// open opens the repository root, creating it when create is set.
func (d *Driver) open(create bool) (*os.Root, error) {
	if create {
		if err := os.MkdirAll(d.root, 0o755); err != nil {
			return nil, err
		}
	}
	return os.OpenRoot(d.root)
}

// fail wraps err with the artifact and its location.
func (d *Driver) fail(art *v1alpha1.Artifact, key, op string, err error) error {
	return fmt.Errorf("artifact %q: %s key %q in file repository %s: %w", art.Name, op, key, d.root, err)
}

// missing is fail for reading the key itself: a missing key also wraps artifact.ErrNotFound.
func (d *Driver) missing(art *v1alpha1.Artifact, key, op string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return d.fail(art, key, op, fmt.Errorf("%w: %w", artifact.ErrNotFound, err))
	}
	return d.fail(art, key, op, err)
}

// openParent opens the directory holding path and returns it with path's base name.
func openParent(path string) (*os.Root, string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, "", err
	}
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", err
	}
	return r, filepath.Base(abs), nil
}
