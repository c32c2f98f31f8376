package file

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// place copies srcName (a file or a directory tree) from src to dstName in dst atomically: it copies to a
// temporary name beside dstName, then renames over dstName, replacing a directory that was there.
func place(ctx context.Context, src *os.Root, srcName string, dst *os.Root, dstName string) error {
	if dir := filepath.Dir(dstName); dir != "." {
		if err := dst.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	tmp, err := tempName(dstName)
	if err != nil {
		return err
	}
	if err := copyTree(ctx, src, srcName, dst, tmp); err != nil {
		_ = dst.RemoveAll(tmp)
		return err
	}
	// rename replaces a file with a file atomically, but not a directory, nor a file with a directory.
	newInfo, err := dst.Lstat(tmp)
	if err != nil {
		_ = dst.RemoveAll(tmp)
		return err
	}
	if info, err := dst.Lstat(dstName); err == nil && (info.IsDir() || newInfo.IsDir()) {
		if err := dst.RemoveAll(dstName); err != nil {
			_ = dst.RemoveAll(tmp)
			return fmt.Errorf("replace %s: %w", dstName, err)
		}
	}
	if err := dst.Rename(tmp, dstName); err != nil {
		_ = dst.RemoveAll(tmp)
		return err
	}
	return nil
}

// tempName is a fresh hidden name beside name.
func tempName(name string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp-"+hex.EncodeToString(b[:])), nil
}

// copyTree copies srcName (followed if it is a symbolic link) to the new name dstName. Inside a directory,
// symbolic links are copied as links and sockets, pipes and devices are skipped.
func copyTree(ctx context.Context, src *os.Root, srcName string, dst *os.Root, dstName string) error {
	top, err := src.Stat(srcName)
	if err != nil {
		return err
	}
	if !top.IsDir() {
		if !top.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file or a directory", srcName)
		}
		return copyFile(ctx, src, srcName, dst, dstName, top.Mode().Perm())
	}
	sfs := src.FS()
	return fs.WalkDir(sfs, filepath.ToSlash(srcName), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel := path.Clean(p[len(filepath.ToSlash(srcName)):])
		target := filepath.Join(dstName, filepath.FromSlash(rel))
		info, err := d.Info()
		if err != nil {
			return err
		}
		if p == filepath.ToSlash(srcName) {
			info = top
		}
		switch mode := info.Mode(); {
		case mode.IsDir():
			if err := dst.Mkdir(target, 0o700); err != nil {
				return err
			}
			return dst.Chmod(target, mode.Perm()|0o700)
		case mode&fs.ModeSymlink != 0:
			link, err := src.Readlink(filepath.FromSlash(p))
			if err != nil {
				return err
			}
			return dst.Symlink(link, target)
		case mode.IsRegular():
			return copyFile(ctx, src, filepath.FromSlash(p), dst, target, mode.Perm())
		}
		return nil
	})
}

// copyFile streams one regular file to a new file.
func copyFile(ctx context.Context, src *os.Root, srcName string, dst *os.Root, dstName string, perm fs.FileMode) error {
	in, err := src.Open(srcName)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := dst.OpenFile(dstName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, ctxReader{ctx: ctx, r: in}); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return dst.Chmod(dstName, perm) // exact, whatever the umask
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
