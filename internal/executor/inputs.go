package executor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// HasRemoteInputs reports whether the template has an input artifact that
// is not raw: loading it may take a while (a download, a clone), so a
// runtime loads it off its hot path.
func HasRemoteInputs(tmpl *v1alpha1.Template) bool {
	if tmpl == nil {
		return false
	}
	for i := range tmpl.Inputs.Artifacts {
		if l := &tmpl.Inputs.Artifacts[i].ArtifactLocation; l.HasLocation() && l.Raw == nil {
			return true
		}
	}
	return false
}

// LoadInputs places the template's input artifacts at their paths, as
// Argo's executor does before the main container starts:
//
//   - a raw artifact's data is written as a file (no driver needed);
//   - any other location is loaded with its driver from d (a key-only
//     location inherits the plan's repository first), into a temporary
//     name beside the destination; a gzipped tarball is unpacked (a single
//     top entry becomes the file or directory at the path), anything else
//     is placed as it is;
//   - subPath places only that path inside the loaded directory;
//   - mode is applied to the path (and everything under it with
//     recurseMode); raw files default to 0644;
//   - an artifact without a location, or whose location holds nothing
//     (artifact.ErrNotFound), is skipped when optional and an error
//     otherwise.
//
// Paths map as output parameters' do (Paths.Resolve). ctx bounds the
// whole load. The first artifact that fails stops the load; the error
// names it and its location and never holds credentials.
func LoadInputs(ctx context.Context, tmpl *v1alpha1.Template, plan *step.ArtifactPlan, d *artifact.Drivers, p Paths) error {
	if tmpl == nil {
		return nil
	}
	var repo *v1alpha1.ArtifactRepository
	if plan != nil {
		repo = plan.Repository
	}
	for i := range tmpl.Inputs.Artifacts {
		a := &tmpl.Inputs.Artifacts[i]
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("input artifact %q: %w", a.Name, err)
		}
		if err := loadInput(ctx, a, repo, d, p); err != nil {
			return err
		}
	}
	return nil
}

// loadInput places one input artifact.
func loadInput(ctx context.Context, in *v1alpha1.Artifact, repo *v1alpha1.ArtifactRepository, d *artifact.Drivers, p Paths) error {
	optional := in.Optional != nil && *in.Optional
	if !in.HasLocation() {
		if optional {
			return nil
		}
		if in.From != "" || in.FromExpression != "" {
			return fmt.Errorf("input artifact %q: required artifact not supplied (its from was not resolved to a location)", in.Name)
		}
		return fmt.Errorf("input artifact %q: required artifact not supplied (it has no location)", in.Name)
	}
	if in.Path == "" {
		return fmt.Errorf("input artifact %q has no path", in.Name)
	}
	dst, err := p.Target(in.Path)
	if err != nil {
		return fmt.Errorf("input artifact %q: %w", in.Name, err)
	}
	if in.Raw != nil {
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("input artifact %q: %w", in.Name, err)
		}
		mode := os.FileMode(0o644)
		if in.Mode != nil {
			mode = os.FileMode(*in.Mode) & os.ModePerm
		}
		if err := writeFileMode(dst, []byte(in.Raw.Data), mode); err != nil {
			return fmt.Errorf("input artifact %q: %w", in.Name, err)
		}
		return nil
	}
	art := *in.DeepCopy()
	art.ArtifactLocation = inherit(in.ArtifactLocation, repo)
	err = fetch(ctx, &art, d, dst, p)
	if errors.Is(err, artifact.ErrNotFound) && optional {
		return nil
	}
	return err
}

// artError is a load or save failure: a message over the driver's error.
type artError struct {
	msg string
	err error
}

func (e *artError) Error() string { return e.msg }
func (e *artError) Unwrap() error { return e.err }

// fetch loads art with its driver into a scratch directory beside dst,
// unpacks it when it is a tarball, and moves it (or its subPath) to dst.
func fetch(ctx context.Context, art *v1alpha1.Artifact, d *artifact.Drivers, dst string, p Paths) error {
	loc := where(&art.ArtifactLocation)
	fail := func(err error) error {
		return &artError{msg: fmt.Sprintf("input artifact %q (%s): %v", art.Name, loc, err), err: err}
	}
	drv, err := d.For(&art.ArtifactLocation)
	if err != nil {
		return fail(err)
	}
	parent := filepath.Dir(dst)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fail(err)
	}
	scratch, err := os.MkdirTemp(parent, "."+filepath.Base(dst)+".load-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(scratch)
	got := filepath.Join(scratch, "artifact")
	if err := drv.Load(ctx, art, got); err != nil {
		if errors.Is(err, artifact.ErrNotFound) {
			return &artError{msg: fmt.Sprintf("input artifact %q (%s): not found", art.Name, loc), err: err}
		}
		return &artError{msg: driverMessage("input", art.Name, err), err: err}
	}
	src, err := unpackIfArchived(ctx, got, &art.ArtifactLocation, filepath.Join(scratch, "unpacked"))
	if err != nil {
		return fail(err)
	}
	if art.SubPath != "" {
		if src, err = subPath(src, art.SubPath); err != nil {
			return fail(err)
		}
	}
	if err := replace(src, dst, p); err != nil {
		return fail(err)
	}
	if art.Mode != nil {
		if err := chmodTree(dst, os.FileMode(*art.Mode)&os.ModePerm, art.RecurseMode); err != nil {
			return fail(err)
		}
	}
	return nil
}

// unpackIfArchived unpacks the file at got into to when it is a gzipped
// tarball, and returns where the artifact now is. A file that starts as
// gzip does and either holds a tar header or sits at a .tgz/.tar.gz key is
// taken for a tarball, so that a corrupt or truncated one is an error
// rather than a file placed as it is.
func unpackIfArchived(ctx context.Context, got string, loc *v1alpha1.ArtifactLocation, to string) (string, error) {
	info, err := os.Lstat(got)
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() || !(artifact.IsTarGz(got) || isGzip(got) && tgzKey(loc)) {
		return got, nil
	}
	f, err := os.Open(got)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := artifact.UnpackInput(ctxReader{ctx: ctx, r: bufio.NewReaderSize(f, 64<<10)}, to); err != nil {
		return "", err
	}
	return to, nil
}

// isGzip reports whether the file starts with the gzip magic bytes.
func isGzip(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [2]byte
	_, err = io.ReadFull(f, b[:])
	return err == nil && b[0] == 0x1f && b[1] == 0x8b
}

// tgzKey reports whether the location's key or URL names a tarball.
func tgzKey(loc *v1alpha1.ArtifactLocation) bool {
	name, ok := artifact.Key(loc)
	if !ok && loc.HTTP != nil {
		name = strings.SplitN(loc.HTTP.URL, "?", 2)[0]
	}
	return strings.HasSuffix(name, ".tgz") || strings.HasSuffix(name, ".tar.gz")
}

// subPath returns where sub lies inside the directory src, refusing a sub
// path that leaves it, by name or through a symbolic link.
func subPath(src, sub string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(strings.TrimPrefix(sub, "/")))
	if !filepath.IsLocal(clean) {
		return "", fmt.Errorf("subPath %q leaves the artifact", sub)
	}
	info, err := os.Stat(src)
	if err != nil {
		return "", err
	}
	if !info.IsDir() {
		return "", fmt.Errorf("subPath %q: the artifact is a file, not a directory", sub)
	}
	root, err := filepath.EvalSymlinks(src)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, clean))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("subPath %q does not exist in the artifact", sub)
	}
	if err != nil {
		return "", fmt.Errorf("subPath %q: %w", sub, err)
	}
	if rel, err := filepath.Rel(root, real); err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("subPath %q leaves the artifact through a symbolic link", sub)
	}
	return real, nil
}

// replace moves src to dst (both on one file system), replacing what is at
// dst, as a container's fresh file system would not have it: a file, a
// symbolic link, or a directory (an earlier run's). A directory that holds
// the system or the step itself (/, /etc, /tmp, the working directory, ...)
// is refused rather than deleted.
func replace(src, dst string, p Paths) error {
	info, err := os.Lstat(dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case info.IsDir():
		if os.Remove(dst) == nil { // empty
			break
		}
		if protected(dst, p) {
			return fmt.Errorf("the path %s is a directory that is not empty and will not be replaced", dst)
		}
		if err := os.RemoveAll(dst); err != nil {
			return fmt.Errorf("replace %s: %w", dst, err)
		}
	default:
		if err := os.Remove(dst); err != nil {
			return err
		}
	}
	if err := os.Rename(src, dst); err != nil {
		return fmt.Errorf("place the artifact at %s: %w", dst, err)
	}
	p.hideLower(dst)
	return nil
}

// protected reports whether dir must never be deleted to make room for an
// input: the root, a top-level system directory, the home directory, or the
// step's working directory or private /tmp (or a directory above them).
func protected(dir string, p Paths) bool {
	dir = filepath.Clean(dir)
	switch dir {
	case "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/media", "/mnt", "/opt",
		"/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var":
		return true
	}
	if home, err := os.UserHomeDir(); err == nil && filepath.Clean(home) == dir {
		return true
	}
	for _, keep := range []string{p.WorkDir, p.Tmp} {
		if keep == "" {
			continue
		}
		if rel, err := filepath.Rel(dir, keep); err == nil && (rel == "." || filepath.IsLocal(rel)) {
			return true
		}
	}
	return false
}

// chmodTree sets mode on path, and on everything under it when recurse is
// set (symbolic links are left alone).
func chmodTree(path string, mode os.FileMode, recurse bool) error {
	if err := os.Chmod(path, mode); err != nil {
		return err
	}
	info, err := os.Lstat(path)
	if err != nil || !recurse || !info.IsDir() {
		return err
	}
	return filepath.WalkDir(path, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == path || e.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		return os.Chmod(p, mode)
	})
}

// driverMessage words a driver's error for an input or output (dir):
// driver errors name the artifact ("artifact \"x\": load ...", "s3 artifact
// \"x\": ...") and its location already, so they only gain the direction.
func driverMessage(dir, name string, err error) string {
	msg := err.Error()
	if strings.Contains(msg, fmt.Sprintf("artifact %q", name)) {
		return dir + " " + msg
	}
	return fmt.Sprintf("%s artifact %q: %s", dir, name, msg)
}

// ctxReader stops a read loop when its context ends.
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
