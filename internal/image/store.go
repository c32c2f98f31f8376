package image

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrNotFound is returned by Store.Get when no image of the reference is
// kept: the caller falls back to the host's root.
var ErrNotFound = errors.New("image not found")

// maxDepth bounds how far below the images directory layouts are looked
// for.
const maxDepth = 4

// Image is an image found and unpacked.
type Image struct {
	// Ref is the reference asked for; Source the layout or archive that
	// holds it; Digest its manifest's digest.
	Ref, Source, Digest string
	// Root is the unpacked root file system (never changed once made).
	Root string
	// Config is what the image's config says about running it.
	Config Config
}

// Store finds images in a directory and unpacks their roots into a cache
// directory. It is safe for concurrent use.
type Store struct {
	dir, cache string

	mu       sync.Mutex
	layouts  map[string]*layout  // by path
	unpacks  map[string]*unpack  // by manifest digest, while in progress
	resolved map[string]resolved // by source path and descriptor digest
	// unpacked counts the unpacks this Store started (for tests).
	unpacked atomic.Int64
}

// layout is what a layout's index.json names, read while its stamp holds.
type layout struct {
	stamp   stamp
	entries []named
	err     error
}

type named struct {
	ref  reference
	desc descriptor
}

// stamp tells a changed file from the one read before.
type stamp struct {
	ino, size int64
	mtime     time.Time
}

// unpack is one root being unpacked; done is closed when err is set.
type unpack struct {
	done chan struct{}
	err  error
}

// NewStore returns a Store of the images in dir (which need not exist)
// that unpacks roots under cache.
func NewStore(dir, cache string) *Store {
	return &Store{dir: dir, cache: cache, layouts: map[string]*layout{}, unpacks: map[string]*unpack{}, resolved: map[string]resolved{}}
}

// Get returns the image ref, unpacked. It returns an error wrapping
// ErrNotFound when the images directory holds no such image, and any other
// error (naming the image) when the image is there but cannot be used. ctx
// bounds the wait for an unpack that another caller started; an unpack,
// once started, runs to its end.
func (s *Store) Get(ctx context.Context, ref string) (*Image, error) {
	want := parseReference(ref)
	if want.name == "" {
		return nil, fmt.Errorf("image %q: %w", ref, ErrNotFound)
	}
	src, n, err := s.find(want)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", ref, err)
	}
	if src == "" {
		return nil, fmt.Errorf("image %s: %w", ref, ErrNotFound)
	}
	img, err := s.get(ctx, src, n)
	if err != nil {
		return nil, fmt.Errorf("image %s (%s): %w", ref, src, err)
	}
	img.Ref = ref
	return img, nil
}

// find returns the layout or archive holding want, and its entry; src is
// "" when none does. An unreadable index.json is an error only when its
// layout is named as want is.
func (s *Store) find(want reference) (src string, n named, err error) {
	sources, err := s.scan()
	if err != nil {
		return "", named{}, err
	}
	var broken error
	for _, c := range sources {
		l := s.layout(c.path)
		if l.err != nil {
			if c.name == want.name {
				broken = l.err
			}
			continue
		}
		for _, e := range l.entries {
			if want.matches(e.ref, e.desc.Digest) {
				return c.path, e, nil
			}
		}
	}
	return "", named{}, broken
}

// candidate is a layout or an archive under the images directory.
type candidate struct {
	path string
	name string // its path below the images directory, less ".tar"
}

// scan lists the layouts and archives under the images directory.
func (s *Store) scan() ([]candidate, error) {
	var out []candidate
	if isLayout(s.dir) {
		out = append(out, candidate{path: s.dir})
	}
	err := s.walk(s.dir, "", 0, &out)
	return out, err
}

func (s *Store) walk(dir, rel string, depth int, out *[]candidate) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list the images directory: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || (rel == "" && name == "blobs") {
			continue
		}
		p, r := filepath.Join(dir, name), filepath.ToSlash(filepath.Join(rel, name))
		typ := e.Type()
		if typ&fs.ModeSymlink != 0 {
			if info, err := os.Stat(p); err == nil {
				typ = info.Mode().Type()
			}
		}
		switch {
		case typ.IsDir() && isLayout(p):
			*out = append(*out, candidate{path: p, name: r})
		case typ.IsDir() && depth+1 < maxDepth:
			if err := s.walk(p, r, depth+1, out); err != nil {
				return err
			}
		case typ.IsRegular() && strings.HasSuffix(name, tarSuffix):
			*out = append(*out, candidate{path: p, name: strings.TrimSuffix(r, tarSuffix)})
		}
	}
	return nil
}

func isLayout(dir string) bool {
	info, err := os.Stat(filepath.Join(dir, indexFile))
	return err == nil && info.Mode().IsRegular()
}

// layout returns what the layout or archive at p names, reading its
// index.json again when it changed.
func (s *Store) layout(p string) *layout {
	archive := strings.HasSuffix(p, tarSuffix)
	stampOf := p
	if !archive {
		stampOf = filepath.Join(p, indexFile)
	}
	st, err := statStamp(stampOf)
	s.mu.Lock()
	l := s.layouts[p]
	s.mu.Unlock()
	if l != nil && err == nil && l.stamp == st {
		return l
	}
	l = &layout{stamp: st, err: err}
	if err == nil {
		l.entries, l.err = readNames(p, s.nameOf(p), archive)
	}
	s.mu.Lock()
	s.layouts[p] = l
	s.mu.Unlock()
	return l
}

// nameOf is the layout's path below the images directory ("" for the
// images directory itself).
func (s *Store) nameOf(p string) string {
	rel, err := filepath.Rel(s.dir, p)
	if err != nil || rel == "." {
		return ""
	}
	return strings.TrimSuffix(filepath.ToSlash(rel), tarSuffix)
}

func statStamp(p string) (stamp, error) {
	info, err := os.Stat(p)
	if err != nil {
		return stamp{}, err
	}
	st := stamp{size: info.Size(), mtime: info.ModTime()}
	if sys, ok := info.Sys().(*syscall.Stat_t); ok {
		st.ino = int64(sys.Ino)
	}
	return st, nil
}

// readNames reads the images an index.json names.
func readNames(p, name string, archive bool) ([]named, error) {
	src, err := openSource(p, archive)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	idx, err := readIndex(src)
	if err != nil {
		return nil, err
	}
	var out []named
	for _, d := range idx.Manifests {
		if ref, ok := indexEntryName(d.Annotations, name, len(idx.Manifests) == 1); ok {
			out = append(out, named{ref: ref, desc: d})
		}
	}
	return out, nil
}

// get resolves the entry n of the layout src and unpacks its root.
func (s *Store) get(ctx context.Context, src string, n named) (*Image, error) {
	key := src + "@" + n.desc.Digest
	s.mu.Lock()
	r, ok := s.resolved[key]
	s.mu.Unlock()
	if !ok {
		source, err := openSource(src, strings.HasSuffix(src, tarSuffix))
		if err != nil {
			return nil, err
		}
		r, err = resolve(source, n.desc)
		source.Close()
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.resolved[key] = r
		s.mu.Unlock()
	}
	root, err := s.root(ctx, src, r)
	if err != nil {
		return nil, err
	}
	return &Image{Source: src, Digest: r.digest, Root: root, Config: r.config}, nil
}

// rootDir is where the root of the manifest digest d is kept.
func (s *Store) rootDir(d string) string {
	return filepath.Join(s.cache, strings.Replace(d, ":", "-", 1))
}

// root returns the unpacked root of r, unpacking it first when no one has.
func (s *Store) root(ctx context.Context, src string, r resolved) (string, error) {
	if _, err := blobPath(r.digest); err != nil {
		return "", err
	}
	final := filepath.Join(s.rootDir(r.digest), "rootfs")
	if _, err := os.Stat(final); err == nil {
		return final, nil
	}
	s.mu.Lock()
	u, running := s.unpacks[r.digest]
	if !running {
		u = &unpack{done: make(chan struct{})}
		s.unpacks[r.digest] = u
	}
	s.mu.Unlock()
	if !running {
		go func() {
			u.err = s.unpackRoot(src, r)
			s.mu.Lock()
			delete(s.unpacks, r.digest)
			s.mu.Unlock()
			close(u.done)
		}()
	}
	select {
	case <-u.done:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if u.err != nil {
		return "", u.err
	}
	return final, nil
}

// unpackRoot unpacks r's layers into a temporary directory, then renames
// it into place; a directory another process put there first wins.
func (s *Store) unpackRoot(src string, r resolved) error {
	s.unpacked.Add(1)
	if err := os.MkdirAll(s.cache, 0o755); err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	dir := s.rootDir(r.digest)
	tmp, err := os.MkdirTemp(s.cache, ".unpack-"+filepath.Base(dir)+"-")
	if err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	defer os.RemoveAll(tmp) // nothing left once renamed
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	rootfs := filepath.Join(tmp, "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	source, err := openSource(src, strings.HasSuffix(src, tarSuffix))
	if err != nil {
		return err
	}
	err = unpackLayers(source, r.layers, rootfs)
	source.Close()
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "rootfs")); serr == nil {
			return nil // another braid unpacked it first
		}
		return fmt.Errorf("unpack: %w", err)
	}
	return nil
}

// LookPath finds name (a command without a slash) on pathEnv inside the
// image's root, as the image would: symbolic links are followed inside the
// root. host lists directories that the step's view binds from the host at
// their own paths; they are looked at on the host. It returns the path as
// the step sees it.
func (img *Image) LookPath(name, pathEnv string, host ...string) (string, error) {
	for dir := range strings.SplitSeq(pathEnv, ":") {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		at := p
		if !slices.Contains(host, filepath.Clean(dir)) {
			var err error
			if at, err = resolveAll(img.Root, strings.TrimPrefix(p, "/")); err != nil {
				continue
			}
		}
		if info, err := os.Stat(at); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q is not on the PATH of image %s (%s)", name, img.Ref, pathEnv)
}

// IsDir reports whether the directory p (absolute, as the image sees it)
// exists in the image's root.
func (img *Image) IsDir(p string) bool {
	at, err := resolveAll(img.Root, strings.TrimPrefix(filepath.Clean(p), "/"))
	if err != nil {
		return false
	}
	info, err := os.Stat(at)
	return err == nil && info.IsDir()
}
