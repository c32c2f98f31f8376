package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/braidwf/braid/internal/artifact"
)

// viewTree is a directory of the view as an artifact.Tree: its entries
// are the union of its layers', as the step saw them, and nothing is
// followed.
type viewTree struct {
	p    Paths
	d    *vdir
	ents map[string]entry
}

func (t *viewTree) Close() error {
	t.d.close()
	return nil
}

// ReadDir lists the union of the layers: the upper layer's entries but its
// whiteouts, the lower layer's that the upper does not hide, and the
// directories the view binds here. The data directory shows only the way
// to the pod directory; /proc, /sys and /dev are left out.
func (t *viewTree) ReadDir(max int) ([]fs.FileInfo, error) {
	names, err := t.p.names(t.d, max)
	if err != nil {
		return nil, err
	}
	t.ents = make(map[string]entry, len(names))
	infos := make([]fs.FileInfo, 0, len(names))
	for _, n := range names {
		e, err := t.p.lookup(t.d, n)
		var re *refusedError
		if errors.Is(err, fs.ErrNotExist) || errors.As(err, &re) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(t.d.view, n), err)
		}
		t.ents[n] = e
		infos = append(infos, statInfo{name: n, st: e.st})
	}
	return infos, nil
}

// names lists the names the directory d may show, sorted; more than max
// in one layer is over the bound (artifact.ErrTooLarge).
func (p Paths) names(d *vdir, max int) ([]string, error) {
	seen := map[string]bool{}
	if d.way {
		if rel, err := filepath.Rel(d.view, p.Visible); err == nil && filepath.IsLocal(rel) {
			seen[strings.Split(rel, "/")[0]] = true
		}
	}
	for _, fd := range []int{d.upper, d.lower} {
		if fd == noFD {
			continue
		}
		names, err := readNames(fd, max)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.view, err)
		}
		if len(names) > max { // some are left unread: the directory is over the bound
			return nil, artifact.ErrTooLarge
		}
		for _, n := range names {
			seen[n] = true
		}
	}
	for _, bound := range []string{"/tmp", p.Hidden} {
		if bound != "" && bound != "/" && path.Dir(bound) == d.view && !d.way {
			seen[path.Base(bound)] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// readNames reads up to max+1 names of the directory fd, through a
// descriptor of its own so that fd's offset stays where it is.
func readNames(fd, max int) ([]string, error) {
	own, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(own), "dir")
	defer f.Close()
	var names []string
	for len(names) <= max {
		batch, err := f.Readdirnames(1024)
		names = append(names, batch...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return names, nil
}

// entry returns the entry name as ReadDir found it, or looks it up.
func (t *viewTree) entry(name string) (entry, error) {
	if e, ok := t.ents[name]; ok {
		return e, nil
	}
	return t.p.lookup(t.d, name)
}

func (t *viewTree) Sub(name string) (artifact.Tree, error) {
	e, err := t.entry(name)
	if err != nil {
		return nil, err
	}
	if !isDir(&e.st) {
		return nil, fmt.Errorf("%s is not a directory", e.view)
	}
	d, err := openEntryDir(e)
	if err != nil {
		return nil, err
	}
	return &viewTree{p: t.p, d: d}, nil
}

func (t *viewTree) Open(name string) (*os.File, error) {
	e, err := t.entry(name)
	if err != nil {
		return nil, err
	}
	return openFile(e)
}

func (t *viewTree) Readlink(name string) (string, error) {
	e, err := t.entry(name)
	if err != nil {
		return "", err
	}
	if !isLink(&e.st) {
		return "", fmt.Errorf("%s is not a symbolic link", e.view)
	}
	return readlinkAt(e.at)
}

// openOutput opens an output artifact's path as the step saw it (a link
// at its end followed inside the view) as an artifact.Source named after
// the path's last element.
func (p Paths) openOutput(stepPath string) (artifact.Source, error) {
	o, err := p.open(stepPath, "stat")
	if err != nil {
		return artifact.Source{}, err
	}
	name := path.Base(p.stepAbs(stepPath))
	if name == "/" {
		name = "root"
	}
	src := artifact.Source{Name: name, Info: o.info, File: o.file}
	if o.dir != nil {
		src.Tree = &viewTree{p: p, d: o.dir}
	}
	return src, nil
}

// stageFile gives the open regular file f a path in the directory dir that
// the step cannot reach, for a driver that opens files by path: a hard link
// to the very file (no copy), or a copy where the file system refuses the
// link.
func stageFile(ctx context.Context, f *os.File, name, dir string, lim artifact.Limits) (string, error) {
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	bound := lim.Bytes
	if bound <= 0 {
		bound = artifact.MaxBytes
	}
	if info.Size() > bound {
		return "", fmt.Errorf("holds more than %d bytes (%w)", bound, artifact.ErrTooLarge)
	}
	dst := filepath.Join(dir, name)
	proc := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	if unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, dst, unix.AT_SYMLINK_FOLLOW) == nil {
		return dst, nil
	}
	return artifact.CopySource(ctx, artifact.Source{Name: name, Info: info, File: f}, dir, lim)
}
