package artifact

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxLinkHops bounds symbolic link resolution when checking where links lead (Linux uses 40).
const maxLinkHops = 40

// extractor writes tar entries under root. Every file system call goes through root, so even a check
// missed here cannot write outside it; the checks exist to refuse bad archives with a clear message.
type extractor struct {
	root  *os.Root
	links []string // symbolic links created, checked once every entry is in place
}

// entry writes one tar entry.
func (x *extractor) entry(hdr *tar.Header, r io.Reader) error {
	name, err := entryName(hdr.Name)
	if err != nil {
		return err
	}
	switch hdr.Typeflag {
	case tar.TypeXGlobalHeader, tar.TypeXHeader, tar.TypeGNULongName, tar.TypeGNULongLink:
		return nil // metadata, folded into the next header by archive/tar
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return fmt.Errorf("tar entry %q is a device file or pipe, which an artifact may not hold", hdr.Name)
	}
	if name == "." {
		if hdr.Typeflag == tar.TypeDir {
			return nil
		}
		return fmt.Errorf("tar entry %q would replace the destination itself", hdr.Name)
	}
	if err := x.checkParents(hdr.Name, name); err != nil {
		return err
	}
	mode := fs.FileMode(hdr.Mode).Perm()
	switch hdr.Typeflag {
	case tar.TypeDir:
		return x.dir(hdr.Name, name, mode)
	case tar.TypeReg, tar.TypeRegA, tar.TypeGNUSparse:
		return x.file(hdr.Name, name, mode, r)
	case tar.TypeSymlink:
		return x.symlink(hdr, name)
	case tar.TypeLink:
		return x.hardlink(hdr, name)
	}
	return fmt.Errorf("tar entry %q has unsupported type %q", hdr.Name, hdr.Typeflag)
}

// entryName cleans a tar entry name and refuses one that is absolute or climbs out with "..".
func entryName(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("tar entry with an empty name")
	}
	name := path.Clean(strings.TrimSuffix(raw, "/"))
	if strings.HasPrefix(raw, "/") || !filepath.IsLocal(filepath.FromSlash(name)) && name != "." {
		return "", fmt.Errorf("tar entry %q escapes the destination", raw)
	}
	return filepath.FromSlash(name), nil
}

// checkParents refuses an entry whose parent directories include a symbolic link: writing through it
// could land somewhere else than the entry's name says.
func (x *extractor) checkParents(raw, name string) error {
	dir := filepath.Dir(name)
	if dir == "." {
		return nil
	}
	parts := strings.Split(dir, string(filepath.Separator))
	for i := range parts {
		prefix := filepath.Join(parts[:i+1]...)
		info, err := x.root.Lstat(prefix)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("tar entry %q: %w", raw, err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("tar entry %q is under the symbolic link %q, which is refused", raw,
				filepath.ToSlash(prefix))
		}
		if !info.IsDir() {
			return fmt.Errorf("tar entry %q is under %q, which is not a directory", raw, filepath.ToSlash(prefix))
		}
	}
	return nil
}

// replace removes what sits at name, unless it is a directory and keepDir is set, so an entry that appears
// again (tar appends updates) wins; a symbolic link is removed, never followed.
func (x *extractor) replace(raw, name string, keepDir bool) error {
	info, err := x.root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("tar entry %q: %w", raw, err)
	}
	if info.IsDir() && keepDir {
		return nil
	}
	if err := x.root.Remove(name); err != nil {
		return fmt.Errorf("tar entry %q replaces an existing entry: %w", raw, err)
	}
	return nil
}

// dir creates a directory (and any missing parents).
func (x *extractor) dir(raw, name string, mode fs.FileMode) error {
	if err := x.replace(raw, name, true); err != nil {
		return err
	}
	if err := x.root.MkdirAll(name, 0o755); err != nil {
		return fmt.Errorf("tar entry %q: %w", raw, err)
	}
	if err := x.root.Chmod(name, mode|0o700); err != nil { // stay writable for the entries to come
		return fmt.Errorf("tar entry %q: %w", raw, err)
	}
	return nil
}

// file streams a regular file's content.
func (x *extractor) file(raw, name string, mode fs.FileMode, r io.Reader) error {
	if err := x.mkParent(raw, name); err != nil {
		return err
	}
	if err := x.replace(raw, name, false); err != nil {
		return err
	}
	f, err := x.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("tar entry %q: %w", raw, err)
	}
	src := &readErr{r: r}
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		if src.err != nil {
			return notTarGz(src.err)
		}
		return fmt.Errorf("tar entry %q: %w", raw, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("tar entry %q: %w", raw, err)
	}
	return nil
}

// symlink creates a symbolic link whose target must stay inside the destination.
func (x *extractor) symlink(hdr *tar.Header, name string) error {
	target := hdr.Linkname
	if target == "" || filepath.IsAbs(target) ||
		!filepath.IsLocal(filepath.Join(filepath.Dir(name), filepath.FromSlash(target))) {
		return fmt.Errorf("tar entry %q is a symbolic link to %q, which escapes the destination", hdr.Name, target)
	}
	if err := x.mkParent(hdr.Name, name); err != nil {
		return err
	}
	if err := x.replace(hdr.Name, name, false); err != nil {
		return err
	}
	if err := x.root.Symlink(target, name); err != nil {
		return fmt.Errorf("tar entry %q: %w", hdr.Name, err)
	}
	x.links = append(x.links, name)
	return nil
}

// hardlink links to an earlier entry, which must be inside the destination and not reached through a
// symbolic link.
func (x *extractor) hardlink(hdr *tar.Header, name string) error {
	target, err := entryName(hdr.Linkname)
	if err != nil || target == "." {
		return fmt.Errorf("tar entry %q is a hard link to %q, which escapes the destination", hdr.Name, hdr.Linkname)
	}
	if err := x.checkParents(hdr.Name, target); err != nil {
		return err
	}
	info, err := x.root.Lstat(target)
	if err != nil {
		return fmt.Errorf("tar entry %q is a hard link to %q: %w", hdr.Name, hdr.Linkname, err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("tar entry %q is a hard link to %q, which is not a regular file", hdr.Name, hdr.Linkname)
	}
	if err := x.mkParent(hdr.Name, name); err != nil {
		return err
	}
	if err := x.replace(hdr.Name, name, false); err != nil {
		return err
	}
	if err := x.root.Link(target, name); err != nil {
		return fmt.Errorf("tar entry %q: %w", hdr.Name, err)
	}
	return nil
}

// mkParent creates the directories an entry sits in (tarballs may omit directory entries).
func (x *extractor) mkParent(raw, name string) error {
	if dir := filepath.Dir(name); dir != "." {
		if err := x.root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("tar entry %q: %w", raw, err)
		}
	}
	return nil
}

// checkLinks follows every symbolic link created, through the links it meets, and refuses one that leads
// outside the destination. Each link's own target was checked by name when it was created, but a chain
// (a -> b/.., b -> c/d, c -> .) can still climb out once resolved.
func (x *extractor) checkLinks() error {
	for _, l := range x.links {
		if err := x.resolve(l); err != nil {
			return err
		}
	}
	return nil
}

// resolve walks the symbolic link at name component by component, expanding links, as the kernel would.
func (x *extractor) resolve(name string) error {
	escapes := func() error {
		return fmt.Errorf("tar entry %q is a symbolic link that escapes the destination once resolved",
			filepath.ToSlash(name))
	}
	var cur []string // the resolved path so far, free of links
	todo := splitPath(name)
	hops := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return escapes()
			}
			cur = cur[:len(cur)-1]
			continue
		}
		cur = append(cur, c)
		p := filepath.Join(cur...)
		info, err := x.root.Lstat(p)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 {
			continue // missing parts resolve by name; directories and files are what they say
		}
		if hops++; hops > maxLinkHops {
			return fmt.Errorf("tar entry %q: too many levels of symbolic links", filepath.ToSlash(name))
		}
		target, err := x.root.Readlink(p)
		if err != nil {
			return fmt.Errorf("tar entry %q: %w", filepath.ToSlash(name), err)
		}
		if filepath.IsAbs(target) {
			return escapes()
		}
		cur = cur[:len(cur)-1]
		todo = append(splitPath(target), todo...)
	}
	return nil
}

// splitPath splits a relative path into its components.
func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// readErr remembers its reader's error, to tell a bad archive from a failed write.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		e.err = err
	}
	return n, err
}
