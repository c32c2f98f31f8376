package artifact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Tree is a directory to pack or copy, read without ever following a symbolic link: ReadDir describes each
// entry as Lstat does (a link is a link), and Sub and Open never go through one. internal/executor gives
// the directory of a step's output as the step saw it (its root view); OpenHost gives a directory of the
// host.
type Tree interface {
	// ReadDir returns the directory's entries sorted by name. It reads at most max+1 of them, so that a
	// directory of millions costs no more memory than the bound allows: more than max (or an error wrapping
	// ErrTooLarge, when it cannot tell exactly) is over the bound.
	ReadDir(max int) ([]fs.FileInfo, error)
	// Sub opens the entry name as a directory, never through a link.
	Sub(name string) (Tree, error)
	// Open opens the entry name as a regular file for reading, never through a link.
	Open(name string) (*os.File, error)
	// Readlink returns the target of the link name, as it is written.
	Readlink(name string) (string, error)
	Close() error
}

// Source is a file or a directory to pack or copy, already open: File when Info is a regular file, Tree
// when it is a directory. Name is the top entry's name.
type Source struct {
	Name string
	Info fs.FileInfo
	File *os.File
	Tree Tree
}

// Close closes the file or the tree.
func (s Source) Close() error {
	if s.File != nil {
		return s.File.Close()
	}
	if s.Tree != nil {
		return s.Tree.Close()
	}
	return nil
}

// The bounds of one output artifact, so that a step cannot fill braid's disk or memory through its
// outputs: a directory of links to "/" or a file of 100 GiB is refused, not packed.
const (
	MaxBytes   = 10 << 30  // the regular files' total size
	MaxEntries = 1_000_000 // files, directories and links
	MaxDepth   = 256       // directories inside each other; each holds a descriptor while it is read
)

// ErrTooLarge marks an artifact over its Limits.
var ErrTooLarge = errors.New("over the bound of an artifact")

// Limits bound what PackSource and CopySource read. A zero field is the default (MaxBytes, MaxEntries).
type Limits struct {
	Bytes   int64
	Entries int
}

func (l Limits) orDefault() Limits {
	if l.Bytes <= 0 {
		l.Bytes = MaxBytes
	}
	if l.Entries <= 0 {
		l.Entries = MaxEntries
	}
	return l
}

// OpenHost opens the file or directory at path on the host (followed if it is a link) as a Source named
// after its last element. Inside a directory, links are links and never followed (os.Root keeps every
// access inside it). It is for paths braid trusts; a step's outputs are opened by internal/executor.
func OpenHost(path string) (Source, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Source{}, err
	}
	info, err := os.Stat(abs)
	if err != nil {
		return Source{}, err
	}
	src := Source{Name: filepath.Base(abs), Info: info}
	switch {
	case info.Mode().IsRegular():
		src.File, err = os.Open(abs)
	case info.IsDir():
		var root *os.Root
		root, err = os.OpenRoot(abs)
		if err == nil {
			src.Tree = hostTree{root: root}
		}
	default:
		return Source{}, fmt.Errorf("%s is not a regular file or a directory", path)
	}
	if err != nil {
		return Source{}, err
	}
	return src, nil
}

// hostTree is a directory of the host.
type hostTree struct{ root *os.Root }

func (t hostTree) ReadDir(max int) ([]fs.FileInfo, error) {
	d, err := t.root.Open(".")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := readNames(d, max)
	if err != nil {
		return nil, err
	}
	infos := make([]fs.FileInfo, 0, len(names))
	for _, n := range names {
		info, err := t.root.Lstat(n)
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// readNames returns up to max+1 names of the open directory d, sorted.
func readNames(d *os.File, max int) ([]string, error) {
	var names []string
	for len(names) <= max {
		batch, err := d.Readdirnames(1024)
		names = append(names, batch...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(names)
	return names, nil
}

func (t hostTree) Sub(name string) (Tree, error) {
	if info, err := t.root.Lstat(name); err != nil {
		return nil, err
	} else if !info.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", name)
	}
	r, err := t.root.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return hostTree{root: r}, nil
}

func (t hostTree) Open(name string) (*os.File, error) {
	if info, err := t.root.Lstat(name); err != nil {
		return nil, err
	} else if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	return t.root.Open(name)
}

func (t hostTree) Readlink(name string) (string, error) { return t.root.Readlink(name) }
func (t hostTree) Close() error                         { return t.root.Close() }

// visitor is what walk calls for each entry, parents first, in lexical order; name is slash-separated and
// starts with the top's name.
type visitor interface {
	dir(name string, info fs.FileInfo) error
	file(name string, info fs.FileInfo, f *os.File) error
	link(name string, info fs.FileInfo, target string) error
}

// walker visits a Source within its limits.
type walker struct {
	lim     Limits
	bytes   int64
	entries int
	v       visitor
}

// walk visits src and, when it is a directory, everything under it. Sockets, pipes and devices are left
// out: they are not artifact content.
func walk(src Source, lim Limits, v visitor) error {
	w := &walker{lim: lim.orDefault(), v: v}
	switch {
	case src.File != nil:
		return w.file(src.Name, src.File)
	case src.Tree != nil:
		return w.dir(src.Tree, src.Name, src.Info, 0)
	}
	return fmt.Errorf("%s is not a regular file or a directory", src.Name)
}

func (w *walker) count(size int64) error {
	w.entries++
	if w.entries > w.lim.Entries {
		return fmt.Errorf("holds more than %d files, directories and links (%w)", w.lim.Entries, ErrTooLarge)
	}
	w.bytes += size
	if w.bytes > w.lim.Bytes {
		return fmt.Errorf("holds more than %s of files (%w)", sizeString(w.lim.Bytes), ErrTooLarge)
	}
	return nil
}

// file visits an open regular file, described by the file itself (not by the listing that found it).
func (w *walker) file(name string, f *os.File) error {
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", name)
	}
	if err := w.count(info.Size()); err != nil {
		return err
	}
	return w.v.file(name, info, f)
}

func (w *walker) dir(t Tree, name string, info fs.FileInfo, depth int) error {
	if depth >= MaxDepth {
		return fmt.Errorf("%s is deeper than %d directories (%w)", name, MaxDepth, ErrTooLarge)
	}
	if err := w.count(0); err != nil {
		return err
	}
	if err := w.v.dir(name, info); err != nil {
		return err
	}
	ents, err := t.ReadDir(w.lim.Entries - w.entries)
	if errors.Is(err, ErrTooLarge) || err == nil && len(ents) > w.lim.Entries-w.entries {
		return fmt.Errorf("holds more than %d files, directories and links (%w)", w.lim.Entries, ErrTooLarge)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, e := range ents {
		if err := w.entry(t, name+"/"+e.Name(), e, depth); err != nil {
			return err
		}
	}
	return nil
}

// entry visits one entry of the directory t.
func (w *walker) entry(t Tree, name string, info fs.FileInfo, depth int) error {
	base := name[strings.LastIndexByte(name, '/')+1:]
	switch mode := info.Mode(); {
	case mode.IsDir():
		sub, err := t.Sub(base)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer sub.Close()
		return w.dir(sub, name, info, depth+1)
	case mode&fs.ModeSymlink != 0:
		target, err := t.Readlink(base)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := w.count(0); err != nil {
			return err
		}
		return w.v.link(name, info, target)
	case mode.IsRegular():
		f, err := t.Open(base)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer f.Close()
		return w.file(name, f)
	}
	return nil
}

// sizeString writes a bound in the largest binary unit that divides it.
func sizeString(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// CopySource copies src into the existing directory dir, as dir/<src.Name>, within lim: what an output
// saved with archive none is staged as before its driver saves it. Inside a directory, links are copied as
// links, never followed; sockets, pipes and devices are left out. It stops when ctx ends. It returns the
// copy's path.
func CopySource(ctx context.Context, src Source, dir string, lim Limits) (string, error) {
	c := copier{ctx: ctx, root: dir}
	if err := walk(src, lim, c); err != nil {
		return "", err
	}
	return filepath.Join(dir, src.Name), nil
}

// copier writes what walk visits under dir.
type copier struct {
	ctx  context.Context
	root string
}

func (c copier) dir(name string, info fs.FileInfo) error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	p := filepath.Join(c.root, filepath.FromSlash(name))
	if err := os.Mkdir(p, 0o700); err != nil {
		return err
	}
	return os.Chmod(p, info.Mode().Perm()|0o700) // braid must be able to read it back
}

func (c copier) file(name string, info fs.FileInfo, f *os.File) error {
	p := filepath.Join(c.root, filepath.FromSlash(name))
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	// CopyN: a file that grows while it is copied must not overrun the size counted against the bound.
	if _, err := io.CopyN(out, ctxReader{ctx: c.ctx, r: f}, info.Size()); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", name, err)
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(p, info.Mode().Perm()|0o400) // braid must be able to read it back
}

func (c copier) link(name string, _ fs.FileInfo, target string) error {
	return os.Symlink(target, filepath.Join(c.root, filepath.FromSlash(name)))
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
