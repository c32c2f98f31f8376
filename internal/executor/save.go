package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// SaveOutputs saves the template's output artifacts after the main command
// ended (whether it succeeded or not, as Argo does), and returns them with
// their locations set, in the template's order, for the step's outputs:
//
//   - the path is read as output parameters' are, as the step saw it
//     (Paths.open: a link at the path resolves inside the step's root, and
//     nowhere braid does not read); a missing path is skipped when the
//     artifact is optional and an error otherwise;
//   - the location is the artifact's own (a key-only one inherits the
//     plan's repository, as Argo's key-only artifacts do), else the
//     template's archiveLocation or the plan's repository at
//     <Key>/<name>.tgz (<Key>/<name> with archive none);
//   - the file or directory is packed as a gzipped tarball into a scratch
//     file (archive none: saved as it is, a directory object by object) and
//     saved with the location's driver; everything streams. Inside a
//     directory, links are stored as links and never followed. An output
//     with archive none is staged in the scratch directory first (a hard
//     link to the file, or a copy), since drivers open paths: the driver
//     then reads what braid resolved, not what the path says by then;
//   - each artifact is bounded (Paths.Limits: 10 GiB, a million entries by
//     default); one over its bound is an error that names it;
//   - with archive logs on (the template's archiveLocation.archiveLogs, else
//     plan.ArchiveLogs), the file logPath is saved as "main-logs" at
//     <Key>/main.log; it must still be a regular file, not a link the step
//     put in its place.
//
// An artifact that fails does not stop the others; the error names every
// failure, and the artifacts saved are returned either way.
func SaveOutputs(ctx context.Context, tmpl *v1alpha1.Template, plan *step.ArtifactPlan, d *artifact.Drivers, p Paths, logPath string) ([]v1alpha1.Artifact, error) {
	if tmpl == nil {
		return nil, nil
	}
	var saved []v1alpha1.Artifact
	var problems []error
	for i := range tmpl.Outputs.Artifacts {
		out, ok, err := saveOutput(ctx, tmpl, &tmpl.Outputs.Artifacts[i], plan, d, p)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		if ok {
			saved = append(saved, out)
		}
	}
	if logPath != "" && archiveLogs(tmpl, plan) {
		out, err := saveLog(ctx, tmpl, plan, d, p, logPath)
		if err != nil {
			problems = append(problems, err)
		} else {
			saved = append(saved, out)
		}
	}
	return saved, joinProblems(problems)
}

// archiveLogs reports whether the main log is saved: the template's
// archiveLocation.archiveLogs when set, else the plan's.
func archiveLogs(tmpl *v1alpha1.Template, plan *step.ArtifactPlan) bool {
	if al := tmpl.ArchiveLocation; al != nil && al.ArchiveLogs != nil {
		return *al.ArchiveLogs
	}
	return plan != nil && plan.ArchiveLogs
}

// saveOutput saves one output artifact; ok is false for an optional one
// that does not exist.
func saveOutput(ctx context.Context, tmpl *v1alpha1.Template, a *v1alpha1.Artifact, plan *step.ArtifactPlan, d *artifact.Drivers, p Paths) (v1alpha1.Artifact, bool, error) {
	if a.Path == "" {
		return v1alpha1.Artifact{}, false, fmt.Errorf("output artifact %q has no path", a.Name)
	}
	src, err := p.openOutput(a.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && a.Optional != nil && *a.Optional {
			return v1alpha1.Artifact{}, false, nil
		}
		return v1alpha1.Artifact{}, false, fmt.Errorf("output artifact %q: %w", a.Name, err)
	}
	defer src.Close()
	archived, err := artifact.Archived(a.Archive)
	if err != nil {
		return v1alpha1.Artifact{}, false, fmt.Errorf("output artifact %q: %w", a.Name, err)
	}
	out := *a.DeepCopy()
	if err := outputLocation(tmpl, plan, &out, archived); err != nil {
		return v1alpha1.Artifact{}, false, fmt.Errorf("output artifact %q: %w", a.Name, err)
	}
	if err := upload(ctx, src, &out, archived, p, d); err != nil {
		return v1alpha1.Artifact{}, false, err
	}
	return out, true, nil
}

// outputLocation sets out's location: its own, completed from the
// repository, or the default one for its name.
func outputLocation(tmpl *v1alpha1.Template, plan *step.ArtifactPlan, out *v1alpha1.Artifact, archived bool) error {
	logs := out.ArchiveLogs
	if artifact.Kind(&out.ArtifactLocation) != "" {
		if plan != nil {
			out.ArtifactLocation = inherit(out.ArtifactLocation, plan.Repository)
		}
		return nil
	}
	name := out.Name
	if archived {
		name += ".tgz"
	}
	loc, err := baseLocation(tmpl, plan, name)
	if err != nil {
		return err
	}
	out.ArtifactLocation = loc
	out.ArchiveLogs = logs
	return nil
}

// upload packs src when archived, into a file of the scratch directory,
// or else stages it there, and saves it to out's location.
func upload(ctx context.Context, src artifact.Source, out *v1alpha1.Artifact, archived bool, p Paths, d *artifact.Drivers) error {
	fail := func(err error) error {
		return fmt.Errorf("output artifact %q (%s): %w", out.Name, where(&out.ArtifactLocation), err)
	}
	drv, err := d.For(&out.ArtifactLocation)
	if err != nil {
		return fail(err)
	}
	var path string
	if archived {
		f, err := os.CreateTemp(p.Scratch, "."+out.Name+".tgz-")
		if err != nil {
			return fail(fmt.Errorf("scratch file: %w", err))
		}
		defer os.Remove(f.Name())
		perr := artifact.PackSource(src, out.Archive, ctxWriter{ctx: ctx, w: f}, p.Limits)
		if cerr := f.Close(); perr == nil {
			perr = cerr
		}
		if perr != nil {
			return fail(perr)
		}
		path = f.Name()
	} else {
		dir, err := os.MkdirTemp(p.Scratch, "."+out.Name+".out-")
		if err != nil {
			return fail(fmt.Errorf("scratch directory: %w", err))
		}
		defer os.RemoveAll(dir)
		if path, err = stage(ctx, src, dir, p.Limits); err != nil {
			return fail(err)
		}
	}
	if err := drv.Save(ctx, path, out); err != nil {
		return &artError{msg: driverMessage("output", out.Name, err), err: err}
	}
	return nil
}

// stage gives src a path in dir, which the step cannot reach: a file as a
// hard link or a copy, a directory as a copy whose links are links.
func stage(ctx context.Context, src artifact.Source, dir string, lim artifact.Limits) (string, error) {
	if src.File != nil {
		return stageFile(ctx, src.File, src.Name, dir, lim)
	}
	return artifact.CopySource(ctx, src, dir, lim)
}

// saveLog saves the main log as the artifact "main-logs". The log lies in
// the step's own directory, which the step could write: it is opened
// without following a link there, and staged as the file opened.
func saveLog(ctx context.Context, tmpl *v1alpha1.Template, plan *step.ArtifactPlan, d *artifact.Drivers, p Paths, logPath string) (v1alpha1.Artifact, error) {
	out := v1alpha1.Artifact{Name: step.LogArtifact}
	loc, err := baseLocation(tmpl, plan, "main.log")
	if err != nil {
		return out, fmt.Errorf("archive logs: %w", err)
	}
	out.ArtifactLocation = loc
	f, err := openLog(logPath)
	if err != nil {
		return out, fmt.Errorf("archive logs: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return out, fmt.Errorf("archive logs: %w", err)
	}
	src := artifact.Source{Name: "main.log", Info: info, File: f}
	p.Limits.Bytes = math.MaxInt64 // the log is braid's file already: saving it costs no disk of its own
	if err := upload(ctx, src, &out, false, p, d); err != nil {
		return out, fmt.Errorf("archive logs: %w", err)
	}
	return out, nil
}

// openLog opens braid's log file of the step: its directory is braid's,
// but the step may have put something else at its name.
func openLog(logPath string) (*os.File, error) {
	dir, err := os.Open(filepath.Dir(logPath))
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	e := entry{view: logPath, at: ref{int(dir.Fd()), filepath.Base(logPath)}}
	if err := lstatAt(e.at, &e.st); err != nil {
		return nil, &fs.PathError{Op: "open", Path: logPath, Err: err}
	}
	if isLink(&e.st) {
		return nil, &fs.PathError{Op: "open", Path: logPath, Err: errNotFollowed}
	}
	return openFile(e)
}

func joinProblems(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return &joined{msg: strings.Join(msgs, "; "), errs: errs}
}

// joined is several errors in one line ("a; b"), each still matched by
// errors.Is.
type joined struct {
	msg  string
	errs []error
}

func (j *joined) Error() string   { return j.msg }
func (j *joined) Unwrap() []error { return j.errs }

// ctxWriter stops a write loop when its context ends.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
