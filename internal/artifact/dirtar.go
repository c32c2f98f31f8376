package artifact

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Dir is a directory artifact: an output directory saved with archive none, which the file repository
// keeps as a directory and S3 as the objects under key + "/". It has no single stream; WriteTar streams it
// as an uncompressed tar, one object at a time.
type Dir struct {
	drv    Driver
	art    *v1alpha1.Artifact
	prefix string   // what each key starts with: the directory's key + "/"
	keys   []string // the objects under it, in lexical order
}

// OpenDir lists the directory at art's location. A driver that cannot list (git, http, raw) fails with
// ErrUnsupported. A location with nothing under it gives a Dir of no files: whether that is an empty
// directory or nothing at all is for the caller to say (the file repository tells them apart, S3 cannot).
func OpenDir(ctx context.Context, drv Driver, art *v1alpha1.Artifact) (*Dir, error) {
	key, ok := Key(&art.ArtifactLocation)
	if !ok {
		return nil, fmt.Errorf("artifact %q: a %s location is %w as a directory", art.Name, Kind(&art.ArtifactLocation), ErrUnsupported)
	}
	keys, err := List(ctx, drv, art)
	if err != nil {
		return nil, fmt.Errorf("artifact %q: %w", art.Name, err)
	}
	prefix := strings.TrimSuffix(path.Clean("/" + key)[1:], "/")
	if prefix != "" {
		prefix += "/"
	}
	return &Dir{drv: drv, art: art, prefix: prefix, keys: keys}, nil
}

// Files is how many files the directory holds.
func (d *Dir) Files() int { return len(d.keys) }

// WriteTar writes the directory to w as a tar whose entries are top/ followed by top/<path> for each file,
// streaming each object as it is read: no object is held in memory. Only regular files are listed, so
// symbolic links are left out and never followed (the file repository also opens every key inside its root).
// An object that changed size since it was listed fails the write, which leaves w an incomplete tar.
func (d *Dir) WriteTar(ctx context.Context, w io.Writer, top string) error {
	tw := tar.NewWriter(w)
	dirs := map[string]bool{}
	if err := writeDirs(tw, dirs, top+"/"); err != nil {
		return err
	}
	buf := make([]byte, 256<<10)
	for _, key := range d.keys {
		rel, ok := strings.CutPrefix(key, d.prefix)
		if !ok || rel == "" || !fs.ValidPath(rel) {
			return fmt.Errorf("artifact %q: object %q is not a path under %q; refused", d.art.Name, key, d.prefix)
		}
		name := top + "/" + rel
		if err := writeDirs(tw, dirs, path.Dir(name)+"/"); err != nil {
			return err
		}
		if err := d.writeFile(ctx, tw, key, name, buf); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("artifact %q: end the tar: %w", d.art.Name, err)
	}
	return nil
}

// writeDirs writes a directory entry for dir and each of its parents not yet written.
func writeDirs(tw *tar.Writer, done map[string]bool, dir string) error {
	if dir == "./" || dir == "/" || done[dir] {
		return nil
	}
	if parent := path.Dir(strings.TrimSuffix(dir, "/")); parent != "." {
		if err := writeDirs(tw, done, parent+"/"); err != nil {
			return err
		}
	}
	done[dir] = true
	return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755})
}

// writeFile streams the object at key into the tar as name.
func (d *Dir) writeFile(ctx context.Context, tw *tar.Writer, key, name string, buf []byte) error {
	obj := d.art.DeepCopy()
	if err := SetKey(&obj.ArtifactLocation, key); err != nil {
		return fmt.Errorf("artifact %q: %w", d.art.Name, err)
	}
	rc, err := d.drv.OpenStream(ctx, obj)
	if err != nil {
		return err
	}
	defer rc.Close()
	st, ok := rc.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return fmt.Errorf("artifact %q: a %s stream does not tell its size: %w", d.art.Name, Kind(&obj.ArtifactLocation), ErrUnsupported)
	}
	info, err := st.Stat()
	if err != nil {
		return fmt.Errorf("artifact %q: object %q: %w", d.art.Name, key, err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("artifact %q: object %q is not a regular file; refused", d.art.Name, key)
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: info.Size(), Mode: int64(info.Mode().Perm()), ModTime: info.ModTime()}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("artifact %q: %w", d.art.Name, err)
	}
	if _, err := io.CopyBuffer(tw, io.LimitReader(rc, info.Size()), buf); err != nil {
		return fmt.Errorf("artifact %q: object %q: %w", d.art.Name, key, err)
	}
	if err := tw.Flush(); err != nil { // fewer bytes than its size: it shrank
		return fmt.Errorf("artifact %q: object %q: %w", d.art.Name, key, errors.Join(err, io.ErrUnexpectedEOF))
	}
	return nil
}
