package artifact

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Archived reports whether an output saved with strategy is packed as a tar.gz: true for no strategy, tar
// or an empty strategy (Argo's default), false for none. Zip is not supported.
func Archived(strategy *v1alpha1.ArchiveStrategy) (bool, error) {
	switch {
	case strategy == nil, strategy.Tar != nil:
		return true, nil
	case strategy.Zip != nil:
		return false, fmt.Errorf("archive strategy zip is %w (use tar or none)", ErrUnsupported)
	case strategy.None != nil:
		return false, nil
	}
	return true, nil
}

// Pack writes src, a file or a directory of the host (followed if it is a symbolic link), to dst as
// PackSource does, within the default Limits.
func Pack(src string, strategy *v1alpha1.ArchiveStrategy, dst io.Writer) error {
	s, err := OpenHost(src)
	if err != nil {
		return fmt.Errorf("pack %s: %w", src, err)
	}
	defer s.Close()
	return PackSource(s, strategy, dst, Limits{})
}

// PackSource writes src to dst as strategy says, within lim. With tar (the default) it streams a gzipped
// tarball whose entries are relative: a file x is stored as "x", a directory d as "d/" followed by
// "d/...". Symbolic links inside a directory are stored as links (tar.TypeSymlink) and never followed;
// sockets, pipes and devices are skipped. With none, a file is copied as it is and a directory is an error
// (the caller saves it object by object). Zip is not supported.
func PackSource(src Source, strategy *v1alpha1.ArchiveStrategy, dst io.Writer, lim Limits) error {
	archived, err := Archived(strategy)
	if err != nil {
		return err
	}
	if !archived {
		return copyFile(src, dst, lim.orDefault())
	}
	level := gzip.DefaultCompression
	if strategy != nil && strategy.Tar != nil && strategy.Tar.CompressionLevel != nil {
		level = int(*strategy.Tar.CompressionLevel)
	}
	gz, err := gzip.NewWriterLevel(dst, level)
	if err != nil {
		return fmt.Errorf("archive tar compressionLevel %d: %w", level, err)
	}
	tw := tar.NewWriter(gz)
	if err := walk(src, lim, tarVisitor{tw: tw}); err != nil {
		return fmt.Errorf("pack %s: %w", src.Name, err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("pack %s: %w", src.Name, err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("pack %s: %w", src.Name, err)
	}
	return nil
}

// copyFile streams the regular file of src to dst (archive none).
func copyFile(src Source, dst io.Writer, lim Limits) error {
	if src.File == nil {
		if src.Info != nil && src.Info.IsDir() {
			return fmt.Errorf("output %s is a directory: with archive none it is saved object by object, not packed", src.Name)
		}
		return fmt.Errorf("output %s is not a regular file", src.Name)
	}
	info, err := src.File.Stat()
	if err != nil {
		return fmt.Errorf("stat output %s: %w", src.Name, err)
	}
	if info.Size() > lim.Bytes {
		return fmt.Errorf("output %s holds more than %s (%w)", src.Name, sizeString(lim.Bytes), ErrTooLarge)
	}
	if _, err := io.CopyN(dst, src.File, info.Size()); err != nil {
		return fmt.Errorf("copy output %s: %w", src.Name, err)
	}
	return nil
}

// tarVisitor writes what walk visits as tar entries.
type tarVisitor struct{ tw *tar.Writer }

func (v tarVisitor) dir(name string, info fs.FileInfo) error { return v.header(name+"/", info, "") }

func (v tarVisitor) link(name string, info fs.FileInfo, target string) error {
	return v.header(name, info, target)
}

func (v tarVisitor) file(name string, info fs.FileInfo, f *os.File) error {
	if err := v.header(name, info, ""); err != nil {
		return err
	}
	// CopyN: a file that grows while packed must not overrun its header's size.
	if _, err := io.CopyN(v.tw, f, info.Size()); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// header writes one entry's header, owned by root: the step's users mean nothing where it is unpacked.
func (v tarVisitor) header(name string, info fs.FileInfo, link string) error {
	hdr, err := tar.FileInfoHeader(info, link)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	hdr.Name = name
	hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
	if err := v.tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// IsTarGz reports whether the file at path is a gzipped tarball: the gzip magic bytes followed by a
// valid tar header.
func IsTarGz(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	br := bufio.NewReader(f)
	magic, err := br.Peek(2)
	if err != nil || magic[0] != 0x1f || magic[1] != 0x8b {
		return false
	}
	gz, err := gzip.NewReader(br)
	if err != nil {
		return false
	}
	_, err = tar.NewReader(gz).Next()
	return err == nil
}

// UnpackInput places the tarball read from r at path as Argo loads an input artifact: a tarball holding a
// single top entry (a file x, or a directory d/...) becomes that file or directory at path; a tarball with
// several top entries becomes a directory at path holding them. It unpacks into a temporary directory
// beside path first, so a refused or corrupt tarball leaves nothing behind.
func UnpackInput(r io.Reader, path string) error {
	parent := filepath.Dir(path)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("unpack to %s: %w", path, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(path)+".unpack-")
	if err != nil {
		return fmt.Errorf("unpack to %s: %w", path, err)
	}
	defer os.RemoveAll(tmp)
	if err := Unpack(r, tmp); err != nil {
		return err
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return fmt.Errorf("unpack to %s: %w", path, err)
	}
	from := tmp
	if len(entries) == 1 {
		from = filepath.Join(tmp, entries[0].Name())
	} else if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp made it 0700
		return fmt.Errorf("unpack to %s: %w", path, err)
	}
	if err := os.Rename(from, path); err != nil {
		return fmt.Errorf("unpack to %s: %w", path, err)
	}
	return nil
}

// Unpack extracts the gzipped tarball read from r into the directory dst, creating it if needed. It
// refuses, naming the entry, anything that would land outside dst: an absolute or ".." path, a symbolic
// or hard link whose target leaves dst, an entry under a symbolic link, and device files and pipes. A
// corrupt or truncated archive is an error that says so. On error dst may hold part of the archive.
func Unpack(r io.Reader, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("unpack to %s: %w", dst, err)
	}
	root, err := os.OpenRoot(dst)
	if err != nil {
		return fmt.Errorf("unpack to %s: %w", dst, err)
	}
	defer root.Close()
	gz, err := gzip.NewReader(r)
	if err != nil {
		return notTarGz(err)
	}
	x := extractor{root: root}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return notTarGz(err)
		}
		if err := x.entry(hdr, tr); err != nil {
			return err
		}
	}
	// Read the gzip stream to its end so its checksum and length are verified.
	if _, err := io.Copy(io.Discard, gz); err != nil {
		return notTarGz(err)
	}
	return x.checkLinks()
}

// notTarGz wraps a read error of the archive itself.
func notTarGz(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("the artifact is not a valid tar.gz: %w", err)
}
