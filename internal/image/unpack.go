package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrUnsafe is wrapped by the error of a layer entry that would land
// outside the root file system.
var ErrUnsafe = errors.New("unsafe path")

// Whiteout names (the OCI layer format).
const (
	whiteoutPrefix = ".wh."
	whiteoutOpaque = ".wh..wh..opq"
	maxLinkHops    = 40
)

// unpacker applies layers to one root file system.
type unpacker struct {
	root   string // the host directory
	isRoot bool   // this process may chown and make device nodes
	// dirs are the modes and mtimes of directories, set once every layer
	// is applied (a read-only directory would refuse later entries).
	dirs map[string]*tar.Header
}

// unpackLayers applies layers, read from src, in order into root.
func unpackLayers(src source, layers []descriptor, root string) error {
	u := &unpacker{root: root, isRoot: os.Geteuid() == 0, dirs: map[string]*tar.Header{}}
	for i, l := range layers {
		if err := u.layer(src, l); err != nil {
			return fmt.Errorf("layer %d (%s): %w", i+1, l.Digest, err)
		}
	}
	for p, hdr := range u.dirs {
		if info, err := os.Lstat(p); err != nil || !info.IsDir() {
			continue
		}
		if err := os.Chmod(p, hdr.FileInfo().Mode()&(fs.ModePerm|fs.ModeSetgid|fs.ModeSticky|fs.ModeSetuid)); err != nil {
			return err
		}
		if !hdr.ModTime.IsZero() {
			_ = os.Chtimes(p, hdr.ModTime, hdr.ModTime)
		}
	}
	return nil
}

// layer applies one layer blob.
func (u *unpacker) layer(src source, d descriptor) error {
	if strings.HasSuffix(d.MediaType, "+zstd") {
		return fmt.Errorf("zstd layers are not supported (media type %s)", d.MediaType)
	}
	f, v, err := openBlob(src, d)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(v, 64<<10)
	var r io.Reader = br
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("gzip: %w", err)
		}
		defer gz.Close()
		r = gz
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return errors.New("zstd layers are not supported")
	}
	created := map[string]bool{}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read the layer: %w", err)
		}
		if err := u.entry(hdr, tr, created); err != nil {
			return err
		}
	}
	// Read the blob to its end, so that its size and digest are checked.
	if _, err := io.Copy(io.Discard, r); err != nil {
		return fmt.Errorf("read the layer: %w", err)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return err
	}
	return nil
}

// entryName cleans a layer entry's name into a path relative to the root;
// one that leaves the root is refused.
func entryName(name string) (string, error) {
	clean := path.Clean("/" + name)
	if strings.Contains(name, "\x00") || !path.IsAbs(clean) || hasDotDotEscape(name) {
		return "", fmt.Errorf("%w: %q leaves the root file system", ErrUnsafe, name)
	}
	return strings.TrimPrefix(clean, "/"), nil
}

// hasDotDotEscape reports whether the relative name climbs above its
// start at any point ("a/../../b").
func hasDotDotEscape(name string) bool {
	depth := 0
	for part := range strings.SplitSeq(strings.TrimLeft(name, "/"), "/") {
		switch part {
		case "", ".":
		case "..":
			depth--
			if depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

// entry applies one entry of a layer.
func (u *unpacker) entry(hdr *tar.Header, r io.Reader, created map[string]bool) error {
	rel, err := entryName(hdr.Name)
	if err != nil {
		return err
	}
	if rel == "" || rel == "." {
		return nil
	}
	dir, base := path.Split(rel)
	switch {
	case base == whiteoutOpaque:
		return u.opaque(path.Clean(dir), created)
	case strings.HasPrefix(base, whiteoutPrefix):
		host, err := resolveIn(u.root, path.Join(dir, base[len(whiteoutPrefix):]))
		if err != nil {
			return err
		}
		return os.RemoveAll(host)
	}
	host, err := resolveIn(u.root, rel)
	if err != nil {
		return err
	}
	created[rel] = true
	if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
		return err
	}
	if info, err := os.Lstat(host); err == nil && !(info.IsDir() && hdr.Typeflag == tar.TypeDir) {
		if err := os.RemoveAll(host); err != nil {
			return err
		}
	}
	made, err := u.create(hdr, r, host)
	if err != nil || !made {
		return err
	}
	return u.attributes(hdr, host)
}

// create makes the file of one entry; made is false for one skipped.
func (u *unpacker) create(hdr *tar.Header, r io.Reader, host string) (made bool, err error) {
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := os.Mkdir(host, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return false, err
		}
		u.dirs[host] = hdr
		return true, nil
	case tar.TypeReg, tar.TypeRegA:
		f, err := os.OpenFile(host, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return false, err
		}
		_, err = io.Copy(f, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return true, err
	case tar.TypeSymlink:
		return true, os.Symlink(hdr.Linkname, host)
	case tar.TypeLink:
		target, err := entryName(hdr.Linkname)
		if err != nil {
			return false, fmt.Errorf("hard link %s: %w", hdr.Name, err)
		}
		from, err := resolveIn(u.root, target)
		if err != nil {
			return false, err
		}
		return false, os.Link(from, host) // the link shares its target's attributes
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		if hdr.Typeflag != tar.TypeFifo && !u.isRoot {
			return false, nil
		}
		mode := uint32(hdr.Mode & 0o7777)
		switch hdr.Typeflag {
		case tar.TypeChar:
			mode |= syscall.S_IFCHR
		case tar.TypeBlock:
			mode |= syscall.S_IFBLK
		default:
			mode |= syscall.S_IFIFO
		}
		dev := int((hdr.Devmajor&0xfff)<<8 | hdr.Devminor&0xff | (hdr.Devminor&^0xff)<<12)
		return true, syscall.Mknod(host, mode, dev)
	}
	return false, nil // other types (sparse, extended headers) carry no file
}

// attributes sets an entry's owner, mode and mtime.
func (u *unpacker) attributes(hdr *tar.Header, host string) error {
	if u.isRoot {
		if err := os.Lchown(host, hdr.Uid, hdr.Gid); err != nil {
			return err
		}
	}
	if hdr.Typeflag == tar.TypeSymlink || hdr.Typeflag == tar.TypeDir {
		return nil // a directory's mode is set at the end; a link has none
	}
	mode := hdr.FileInfo().Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	if err := os.Chmod(host, mode); err != nil {
		return err
	}
	if !hdr.ModTime.IsZero() {
		_ = os.Chtimes(host, time.Time{}, hdr.ModTime)
	}
	return nil
}

// opaque empties the directory dir of what lower layers made in it.
func (u *unpacker) opaque(dir string, created map[string]bool) error {
	if dir == "." {
		dir = ""
	}
	host, err := resolveIn(u.root, path.Join(dir, "x"))
	if err != nil {
		return err
	}
	host = filepath.Dir(host)
	entries, err := os.ReadDir(host)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if created[path.Join(dir, e.Name())] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(host, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// resolveIn returns the host path of rel (clean, relative) in the root
// file system root, with the symbolic links among its parent directories
// followed as they would be inside the root (an absolute target starts at
// root; ".." stops at root). The last element is not followed.
func resolveIn(root, rel string) (string, error) {
	parts := strings.Split(rel, "/")
	cur := ""
	hops := 0
	for i := 0; i < len(parts)-1; i++ {
		if parts[i] == "" || parts[i] == "." {
			continue
		}
		next := path.Join(cur, parts[i])
		info, err := os.Lstat(filepath.Join(root, next))
		if errors.Is(err, fs.ErrNotExist) {
			cur = next
			continue
		}
		if err != nil {
			return "", err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			if hops++; hops > maxLinkHops {
				return "", fmt.Errorf("%s: too many levels of symbolic links", rel)
			}
			target, err := os.Readlink(filepath.Join(root, next))
			if err != nil {
				return "", err
			}
			if !path.IsAbs(target) {
				target = path.Join("/", cur, target)
			}
			cur = ""
			parts = append(strings.Split(strings.TrimPrefix(path.Clean(target), "/"), "/"), parts[i+1:]...)
			i = -1
			continue
		}
		if !info.IsDir() {
			return "", fmt.Errorf("%s: %s is not a directory", rel, next)
		}
		cur = next
	}
	return filepath.Join(root, filepath.FromSlash(cur), parts[len(parts)-1]), nil
}

// resolveAll is resolveIn that follows a last element that is a symbolic
// link too.
func resolveAll(root, rel string) (string, error) {
	for range maxLinkHops {
		host, err := resolveIn(root, rel)
		if err != nil {
			return "", err
		}
		target, err := os.Readlink(host)
		if err != nil {
			return host, nil // not a link (or missing)
		}
		if !path.IsAbs(target) {
			parent, _ := filepath.Rel(root, filepath.Dir(host))
			target = path.Join("/", filepath.ToSlash(parent), target)
		}
		rel = strings.TrimPrefix(path.Clean(target), "/")
		if rel == "" {
			return root, nil
		}
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", rel)
}
