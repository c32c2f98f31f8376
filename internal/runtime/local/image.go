package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/executor"
	"github.com/braidwf/braid/internal/image"
)

// Images on this machine. With a root view (sandbox.go) and
// Config.ImagesDir set, a step whose image the images directory holds (an
// OCI image layout or archive; see package image) runs on the image's root
// file system: the overlay's lower layer is the image's unpacked root
// (<DataDir>/rootfs/<algorithm>-<manifest digest hex>/rootfs, unpacked on
// first use) instead of the host's root. The view then binds from the host
// only /dev, /sys, the step's own /proc (or the host's), the private /tmp,
// the step's directory, the image shims, the braid executable, and
// /etc/resolv.conf and /etc/hosts (read-only, unless the image has a
// symbolic link there); not /run nor the host's other file systems.
//
// The command follows Kubernetes against the image's config: the
// container's command replaces the Entrypoint and its args the Cmd; with
// neither, Entrypoint and Cmd run. The image's Env is the base of the
// step's environment (the container's env on top; braid's own environment
// is not passed); PATH defaults to the usual one when the image sets none,
// and the image table's aliases still apply (their shims are appended to
// PATH). The image's WorkingDir is the working directory when the
// container sets none ("/" when neither does). The command is looked up
// on PATH inside the image. The image's User is not applied yet: the step
// runs as braid's user.
//
// An image that is not there leaves the step on the host's root, with the
// image table, as without an images directory. One that is there but
// cannot be used (a bad digest, an unreadable layer, an unsafe path) ends
// the step Error with a message naming the image and the problem.

// rootfsDir holds the unpacked roots, under the data directory.
const rootfsDir = "rootfs"

// defaultPath is the PATH of a step whose image sets none, as container
// runtimes give it.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// stepImage returns the unpacked image of the step, or nil when the step
// runs on the host's root (no root view, no images directory, or an image
// it does not hold).
func (rt *Runtime) stepImage(ctx context.Context, ref string) (*image.Image, error) {
	if rt.imageStore == nil || rt.sandbox == nil || ref == "" {
		return nil, nil
	}
	img, err := rt.imageStore.Get(ctx, ref)
	if errors.Is(err, image.ErrNotFound) {
		return nil, nil
	}
	return img, err
}

// imageCommand resolves the command, the environment and the working
// directory of container c, whose resolved env is env, on the root of img.
func (rt *Runtime) imageCommand(c *apiv1.Container, env []executor.EnvVar, img *image.Image) (prepared, error) {
	base := slices.Clone(img.Config.Env)
	if envValue(base, "PATH") == "" {
		base = append(base, "PATH="+defaultPath)
	}
	if envValue(base, "HOME") == "" {
		base = append(base, "HOME=/root")
	}
	pathEnv := envValue(base, "PATH")
	for _, e := range env {
		if e.Name == "PATH" {
			pathEnv = e.Value
		}
	}
	entry, key, known := rt.images.Lookup(c.Image)
	if known && len(entry.Aliases) > 0 {
		dir, err := rt.shimDir(key, entry)
		if err != nil {
			return prepared{}, err
		}
		pathEnv += ":" + dir
		env = append(env, executor.EnvVar{Name: "PATH", Value: pathEnv})
	}
	argv, err := imageArgv(c, img.Config, env)
	if err != nil {
		return prepared{}, fmt.Errorf("image %s: %w", c.Image, err)
	}
	if !strings.Contains(argv[0], "/") {
		p, err := img.LookPath(argv[0], pathEnv, rt.shimsDir)
		if alias, ok := entry.Aliases[argv[0]]; err != nil && ok && len(alias) > 0 {
			p, err = alias[0], nil
			if !filepath.IsAbs(p) {
				p, err = img.LookPath(p, pathEnv, rt.shimsDir)
			}
			argv = append(slices.Clone(alias), argv[1:]...)
		}
		if err != nil {
			return prepared{}, fmt.Errorf("%w: %w", executor.ErrNotFound, err)
		}
		argv[0] = p
	}
	workDir := c.WorkingDir
	if workDir == "" {
		workDir = img.Config.WorkingDir
	}
	return prepared{argv: argv, env: mergeEnv(base, env), workDir: workDir, image: img, limits: limitsOf(c)}, nil
}

// imageArgv combines the container's command and args with the image's
// Entrypoint and Cmd as Kubernetes does, expanding $(VAR) in what the
// container gave.
func imageArgv(c *apiv1.Container, cfg image.Config, env []executor.EnvVar) ([]string, error) {
	argv := executor.ContainerArgv(c, cfg.Entrypoint, cfg.Cmd, env)
	if len(argv) == 0 {
		return nil, errors.New("the container has no command, and the image has neither Entrypoint nor Cmd")
	}
	return argv, nil
}

// imageWorkDir makes the working directory of a step on an image's root
// (a clean absolute path) in the view's upper layer when the image lacks
// it.
func imageWorkDir(v view, img *image.Image, workDir string) error {
	if workDir == "/" || img.IsDir(workDir) {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(v.upper, workDir), 0o755); err != nil {
		return fmt.Errorf("workingDir: %w", err)
	}
	return nil
}

// mkdirIn makes sure the directory p (absolute, as the step sees it) exists
// in the mounted view root, where the view will mount something: each
// missing element is made; one that is a symbolic link (which would lead
// the mount out of the view) or not a directory is an error.
func mkdirIn(root, p string) error { return walkViewDirs(root, p, true) }

// checkImagePath fails when a directory on the way to p in the image's
// root is a symbolic link or not a directory, as mkdirIn does, but makes
// nothing: missing ones are fine (braid-nsinit makes them in the view).
func checkImagePath(root, p string) error { return walkViewDirs(root, p, false) }

// walkViewDirs checks each element of the path p under root, making the
// missing ones when mkdir is set, else stopping at the first missing one.
func walkViewDirs(root, p string, mkdir bool) error {
	cur := root
	for part := range strings.SplitSeq(strings.Trim(filepath.Clean(p), "/"), "/") {
		if part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		info, err := os.Lstat(cur)
		switch {
		case errors.Is(err, os.ErrNotExist) && !mkdir:
			return nil
		case errors.Is(err, os.ErrNotExist):
			if err := os.Mkdir(cur, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				return fmt.Errorf("the step's view: make %s: %w", p, err)
			}
		case err != nil:
			return fmt.Errorf("the step's view: %w", err)
		case info.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("the image has a symbolic link at %s, where the step's view mounts %s", strings.TrimPrefix(cur, root), p)
		case !info.IsDir():
			return fmt.Errorf("the image has a file at %s, where the step's view mounts %s", strings.TrimPrefix(cur, root), p)
		}
	}
	return nil
}

// makeDirIn makes the directory p of the view rooted at root: as it is on
// the host's root, checked (mkdirIn) on an image's.
func makeDirIn(v view, p string) error {
	if v.lower == "" {
		if err := os.MkdirAll(filepath.Join(v.merged, p), 0o755); err != nil {
			return fmt.Errorf("the step's view: %w", err)
		}
		return nil
	}
	return mkdirIn(v.merged, p)
}

// bindImageExtras binds into a view of an image's root the braid
// executable (which the shims call) and the host's name resolution files.
func (sb *sandbox) bindImageExtras(v view) error {
	if sb.braid == "" && sb.self != "" {
		if err := mkdirIn(v.merged, filepath.Dir(sb.self)); err != nil {
			return err
		}
		if err := bindFile(sb.self, filepath.Join(v.merged, sb.self)); err != nil {
			return err
		}
	}
	// The host's name resolution, as a container runtime provides it.
	for _, f := range []string{"/etc/resolv.conf", "/etc/hosts"} {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		at := filepath.Join(v.merged, f)
		if info, err := os.Lstat(at); err == nil && !info.Mode().IsRegular() {
			continue // the image's own link or directory stays
		}
		if err := mkdirIn(v.merged, filepath.Dir(f)); err != nil {
			continue
		}
		if err := bindFile(f, at); err != nil {
			return err
		}
	}
	return nil
}
