package executor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/braidwf/braid/internal/artifact"
)

// Paths says where a step's paths are on the host: relative paths are under
// WorkDir; when the step had a private /tmp, paths under /tmp are under Tmp;
// and when it had a root view of its own (an overlay whose lower layer is the
// host's root or an image's, Lower), what it wrote anywhere else is under
// Root, the view's upper layer. Outputs are read through it as the step saw
// them (viewfs.go): links resolve inside the step's root and never out of it.
type Paths struct {
	WorkDir string
	Tmp     string
	// Root is the upper layer of the step's root view, or "" when the step
	// saw the host's file system. With a Root, WorkDir is the working
	// directory as the step saw it ("/" when its container sets none).
	Root string
	// Lower is the view's lower layer: "" for the host's root, or an
	// image's unpacked root file system.
	Lower string
	// Scratch is a directory for the tarballs packed before upload, and the
	// outputs staged for their drivers; "" means os.TempDir(). It should be
	// on a disk, not in memory, and out of the step's reach: a step that can
	// change it can change what is uploaded.
	Scratch string
	// Hidden is a directory the step does not see, though it lies in its
	// root (braid's data directory): the view shows it empty, but for
	// Visible, a directory under it that the view binds at its own path (the
	// step's pod directory). Both are clean absolute paths without links;
	// "" for none. No output is read from under Hidden but from Visible.
	Hidden  string
	Visible string
	// Limits bound each output artifact; zero fields are artifact.MaxBytes
	// and artifact.MaxEntries.
	Limits artifact.Limits
}

// lower is where the view's path is in the lower layer, on the host.
func (p Paths) lower(view string) string {
	if p.Lower == "" {
		return view
	}
	return filepath.Join(p.Lower, view)
}

// maxLinks bounds the symbolic links followed while a path is resolved in a
// root view, as the kernel's ELOOP does.
const maxLinks = 40

// Resolve returns where path, as the step saw it, is on the host. In a root
// view, that is the upper layer when the step wrote the file there, and the
// host's own path otherwise (the lower layer, or a directory bound into the
// view at its own path). It is for placing inputs, before the step runs:
// the path it returns is the host's to follow, so outputs, which the step
// made, are never read through it (Paths.open).
func (p Paths) Resolve(path string) string {
	if p.Root == "" {
		if !filepath.IsAbs(path) {
			if p.WorkDir == "" {
				return path
			}
			return filepath.Join(p.WorkDir, path)
		}
		if host, ok := p.inTmp(filepath.Clean(path)); ok {
			return host
		}
		return path
	}
	view := p.canonical(p.abs(path), 0)
	if host, ok := p.inTmp(view); ok {
		return host
	}
	if up := filepath.Join(p.Root, view); exists(up) {
		return up
	}
	return p.lower(view)
}

// Target returns where a file must be written on the host for the step to
// see it at path. In a root view that is the upper layer, whose parent
// directories it creates with the modes and owners of the host's; outside
// one it is Resolve(path), and the caller creates what it needs.
func (p Paths) Target(path string) (string, error) {
	if p.Root == "" {
		return p.Resolve(path), nil
	}
	view := p.canonical(p.abs(path), 0)
	if host, ok := p.inTmp(view); ok {
		return host, nil
	}
	if err := p.mirrorDirs(filepath.Dir(view)); err != nil {
		return "", err
	}
	return filepath.Join(p.Root, view), nil
}

// MakeDir makes sure the directory path exists as the step sees it.
func (p Paths) MakeDir(path string) error {
	if p.Root == "" {
		return os.MkdirAll(p.Resolve(path), 0o755)
	}
	view := p.canonical(p.abs(path), 0)
	if host, ok := p.inTmp(view); ok {
		return os.MkdirAll(host, 0o755)
	}
	if info, err := os.Stat(p.lower(view)); err == nil && info.IsDir() {
		return nil
	}
	return p.mirrorDirs(view)
}

// abs makes a path of the step absolute against its working directory.
func (p Paths) abs(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	wd := p.WorkDir
	if wd == "" {
		wd = "/"
	}
	return filepath.Join(wd, path)
}

// inTmp maps a clean absolute path under /tmp to the private /tmp.
func (p Paths) inTmp(clean string) (string, bool) {
	if p.Tmp == "" {
		return "", false
	}
	if clean == "/tmp" {
		return p.Tmp, true
	}
	if rest, ok := strings.CutPrefix(clean, "/tmp/"); ok {
		return filepath.Join(p.Tmp, rest), true
	}
	return "", false
}

// canonical resolves the symbolic links among the parent directories of
// the clean absolute path as the step's view has them (the upper layer
// first, then the host), so that /bin/x is found at /usr/bin/x where /bin
// is a link. The last element is left as it is.
func (p Paths) canonical(path string, hops int) string {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	cur := "/"
	for i := 0; i < len(parts)-1; i++ {
		next := filepath.Join(cur, parts[i])
		if target, ok := p.link(next); ok && hops < maxLinks {
			if !filepath.IsAbs(target) {
				target = filepath.Join(cur, target)
			}
			rest := filepath.Join(parts[i+1:]...)
			return p.canonical(filepath.Join(filepath.Clean(target), rest), hops+1)
		}
		cur = next
	}
	return filepath.Join(cur, parts[len(parts)-1])
}

// link returns the target of the view's path when it is a symbolic link.
func (p Paths) link(view string) (string, bool) {
	if _, ok := p.inTmp(view); ok {
		return "", false
	}
	at := filepath.Join(p.Root, view)
	info, err := os.Lstat(at)
	if err != nil {
		at = p.lower(view)
		if info, err = os.Lstat(at); err != nil {
			return "", false
		}
	}
	if info.Mode()&fs.ModeSymlink == 0 {
		return "", false
	}
	target, err := os.Readlink(at)
	return target, err == nil
}

// mirrorDirs creates the directory dir (a clean absolute path of the view)
// and its parents in the upper layer, each with the mode and owner of the
// host's directory of the same path (0755 and root when the host has none),
// so that the view's directories look as the host's do.
func (p Paths) mirrorDirs(dir string) error {
	if dir == "/" {
		return nil
	}
	up := filepath.Join(p.Root, dir)
	if info, err := os.Lstat(up); err == nil {
		if info.IsDir() {
			return nil
		}
		return fmt.Errorf("%s is not a directory in the step's view", dir)
	}
	if err := p.mirrorDirs(filepath.Dir(dir)); err != nil {
		return err
	}
	mode, uid, gid := os.FileMode(0o755), 0, 0
	if info, err := os.Stat(p.lower(dir)); err == nil && info.IsDir() {
		mode = info.Mode().Perm() | info.Mode()&(fs.ModeSticky|fs.ModeSetgid)
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(st.Uid), int(st.Gid)
		}
	}
	if err := os.Mkdir(up, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s in the step's view: %w", dir, err)
	}
	if err := os.Lchown(up, uid, gid); err != nil && !errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("create %s in the step's view: %w", dir, err)
	}
	if err := os.Chmod(up, mode); err != nil {
		return fmt.Errorf("create %s in the step's view: %w", dir, err)
	}
	return nil
}

// hideLower makes the directory dst of the upper layer opaque when the
// host has a directory at the same path, so that the step sees only what
// was placed there, as a volume mounted over an image's directory hides
// it. Outside a root view it does nothing.
func (p Paths) hideLower(dst string) {
	if p.Root == "" {
		return
	}
	rel, err := filepath.Rel(p.Root, dst)
	if err != nil || !filepath.IsLocal(rel) {
		return
	}
	if info, err := os.Stat(p.lower(filepath.Join("/", rel))); err != nil || !info.IsDir() {
		return
	}
	if info, err := os.Lstat(dst); err != nil || !info.IsDir() {
		return
	}
	_ = syscall.Setxattr(dst, "trusted.overlay.opaque", []byte("y"), 0)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
