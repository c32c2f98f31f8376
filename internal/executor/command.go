package executor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	apiv1 "k8s.io/api/core/v1"
)

// Errors a resolution returns; wrap-tested with errors.Is. Both are user
// errors: the step ends Error with the message, and is not retried.
var (
	// ErrNotFound: the executable is on neither the PATH nor the image's
	// aliases, or the container names no command and its image is unknown.
	ErrNotFound = errors.New("executable file not found")
	// ErrUnsupported: the container needs something a host does not have (a
	// secret, a config map, a resource field).
	ErrUnsupported = errors.New("not available on a host")
)

// unsupportedError is a message that wraps ErrUnsupported without
// repeating its text.
type unsupportedError struct{ msg string }

func (e *unsupportedError) Error() string { return e.msg }
func (e *unsupportedError) Unwrap() error { return ErrUnsupported }

func unsupportedf(format string, args ...any) error {
	return &unsupportedError{msg: fmt.Sprintf(format, args...)}
}

// EnvVar is one resolved environment variable.
type EnvVar struct {
	Name, Value string
}

// PodFields are the values of the downward-API fields a host can supply.
type PodFields struct {
	Name, Namespace, UID string
}

// ResolveEnv returns the container's environment, in order: the container's
// env (values expanded as Kubernetes does, $(VAR) of an earlier entry), then
// extra (the ARGO_* variables), sorted by name, each replacing an entry of
// the same name. A value taken from a secret, a config map or a resource
// field is an error wrapping ErrUnsupported; fieldRef supports
// metadata.name, metadata.namespace, metadata.uid, status.podIP and
// status.hostIP.
func ResolveEnv(c *apiv1.Container, extra map[string]string, pod PodFields) ([]EnvVar, error) {
	if len(c.EnvFrom) > 0 {
		src := c.EnvFrom[0]
		what := "a config map"
		if src.SecretRef != nil {
			what = "a secret"
		}
		return nil, unsupportedf("envFrom refers to %s, and the local runtime cannot read secrets or config maps", what)
	}
	out := make([]EnvVar, 0, len(c.Env)+len(extra))
	index := make(map[string]int, len(c.Env)+len(extra))
	set := func(name, value string) {
		if i, ok := index[name]; ok {
			out[i].Value = value
			return
		}
		index[name] = len(out)
		out = append(out, EnvVar{name, value})
	}
	lookup := func(name string) (string, bool) {
		if i, ok := index[name]; ok {
			return out[i].Value, true
		}
		return "", false
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, Expand(e.Value, lookup))
			continue
		}
		v, err := envFrom(e, pod)
		if err != nil {
			return nil, err
		}
		set(e.Name, v)
	}
	names := make([]string, 0, len(extra))
	for k := range extra {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		set(k, extra[k])
	}
	return out, nil
}

func envFrom(e apiv1.EnvVar, pod PodFields) (string, error) {
	vf := e.ValueFrom
	switch {
	case vf.SecretKeyRef != nil:
		return "", unsupportedf("env %q refers to key %q of secret %q, and the local runtime cannot read secrets",
			e.Name, vf.SecretKeyRef.Key, vf.SecretKeyRef.Name)
	case vf.ConfigMapKeyRef != nil:
		return "", unsupportedf("env %q refers to key %q of config map %q, and the local runtime cannot read config maps",
			e.Name, vf.ConfigMapKeyRef.Key, vf.ConfigMapKeyRef.Name)
	case vf.FieldRef != nil:
		switch vf.FieldRef.FieldPath {
		case "metadata.name":
			return pod.Name, nil
		case "metadata.namespace":
			return pod.Namespace, nil
		case "metadata.uid":
			return pod.UID, nil
		case "status.podIP", "status.hostIP":
			return "127.0.0.1", nil
		}
		return "", unsupportedf("env %q refers to field %q, which the local runtime does not supply",
			e.Name, vf.FieldRef.FieldPath)
	case vf.ResourceFieldRef != nil:
		return "", unsupportedf("env %q refers to resource %q, which the local runtime does not supply",
			e.Name, vf.ResourceFieldRef.Resource)
	}
	return "", unsupportedf("env %q has an empty valueFrom", e.Name)
}

// Expand replaces $(VAR) in s as the kubelet does in a container's command,
// args and env values: $(VAR) becomes VAR's value when lookup knows it and is
// left as it is otherwise, and $$ becomes $.
func Expand(s string, lookup func(string) (string, bool)) string {
	if strings.IndexByte(s, '$') < 0 {
		return s
	}
	var b strings.Builder
	checkpoint := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			continue
		}
		b.WriteString(s[checkpoint:i])
		rest := s[i+1:]
		advance := 1
		switch rest[0] {
		case '$':
			b.WriteByte('$')
		case '(':
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				b.WriteString("$(")
				break
			}
			name := rest[1:end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			advance = end + 1
		default:
			b.WriteByte('$')
			b.WriteByte(rest[0])
		}
		i += advance
		checkpoint = i + 1
	}
	b.WriteString(s[checkpoint:])
	return b.String()
}

// ResolveCommand returns the argv that runs container c, whose environment
// is env, with argv[0] an absolute path (or a path with a slash, used as it
// is):
//
//   - command and args as Kubernetes combines them with the image's
//     entrypoint and default args from table (a container without a command
//     uses the image's);
//   - $(VAR) expanded from env, as the kubelet does;
//   - argv[0] looked up on pathEnv (the step's PATH); when it is not there,
//     the image's alias for it replaces it.
//
// look finds executables; nil means LookPath (a PathCache's LookPath saves
// the PATH walk of every step). Failures wrap ErrNotFound with a message
// that says what to add to the config file.
func ResolveCommand(c *apiv1.Container, table ImageTable, env []EnvVar, pathEnv string, look LookPathFunc) ([]string, error) {
	if look == nil {
		look = LookPath
	}
	img, _, known := table.Lookup(c.Image)
	if len(c.Command) == 0 && !known {
		return nil, fmt.Errorf("%w: the container has no command, and image %q is not in the image table (set command, or add the image to the images of the config file)", ErrNotFound, c.Image)
	}
	argv := ContainerArgv(c, img.Command, img.Args, env)
	if len(argv) == 0 {
		return nil, fmt.Errorf("%w: the container has no command, and image %q has no entrypoint in the image table", ErrNotFound, c.Image)
	}
	p, err := look(argv[0], pathEnv)
	if err == nil {
		argv[0] = p
		return argv, nil
	}
	if strings.Contains(argv[0], "/") {
		return nil, err
	}
	if alias, ok := img.Aliases[argv[0]]; ok && len(alias) > 0 {
		p, err := look(alias[0], pathEnv)
		if err != nil {
			return nil, fmt.Errorf("%w: %q, the alias of %q for image %q", ErrNotFound, alias[0], argv[0], c.Image)
		}
		return append(append([]string{p}, alias[1:]...), argv[1:]...), nil
	}
	if !known {
		return nil, fmt.Errorf("%w: %q (image %q is not in the image table; add it to the images of the config file)", ErrNotFound, argv[0], c.Image)
	}
	return nil, fmt.Errorf("%w: %q (not on PATH, and image %q has no alias for it; add one to the images of the config file)", ErrNotFound, argv[0], c.Image)
}

// LookPathFunc finds an executable on a PATH; LookPath is one.
type LookPathFunc func(name, pathEnv string) (string, error)

// PathCache remembers where names were found on a PATH, as a shell's hash
// table does: a hit costs one stat (to notice a deleted file) instead of a
// walk of the PATH. A program installed later in a directory earlier on the
// PATH is not noticed. The zero value is ready; it is safe for concurrent
// use.
type PathCache struct {
	m sync.Map // pathEnv + "\x00" + name -> string
}

// LookPath is LookPath with the cache.
func (c *PathCache) LookPath(name, pathEnv string) (string, error) {
	if strings.Contains(name, "/") {
		return LookPath(name, pathEnv)
	}
	key := pathEnv + "\x00" + name
	if p, ok := c.m.Load(key); ok {
		if executable(p.(string)) == nil {
			return p.(string), nil
		}
		c.m.Delete(key)
	}
	p, err := LookPath(name, pathEnv)
	if err == nil && filepath.IsAbs(p) {
		c.m.Store(key, p)
	}
	return p, err
}

// LookPath finds an executable as a shell does: a name with a slash is
// returned as it is if it is an executable file; otherwise each directory
// of pathEnv is tried in order. An empty directory means ".".
func LookPath(name, pathEnv string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%w: empty command", ErrNotFound)
	}
	if strings.Contains(name, "/") {
		if err := executable(name); err != nil {
			return "", fmt.Errorf("%w: %q: %w", ErrNotFound, name, err)
		}
		return name, nil
	}
	for dir := range strings.SplitSeq(pathEnv, ":") {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if executable(p) == nil {
			if !filepath.IsAbs(p) {
				if abs, err := filepath.Abs(p); err == nil {
					p = abs
				}
			}
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %q", ErrNotFound, name)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fs.ErrPermission
	}
	return nil
}

// ContainerArgv combines a container's command and args with its image's
// entrypoint and default args as Kubernetes does (command replaces the
// entrypoint, args replace the default args), and expands $(VAR) from env
// in what the container gave; the image's part is taken literally, as the
// kubelet does. It is empty when neither gives a command.
func ContainerArgv(c *apiv1.Container, entrypoint, defaultArgs []string, env []EnvVar) []string {
	var argv []string
	switch {
	case len(c.Command) > 0:
		argv = append(slices.Clone(c.Command), c.Args...)
	case len(c.Args) > 0:
		argv = append(slices.Clone(entrypoint), c.Args...)
	default:
		argv = append(slices.Clone(entrypoint), defaultArgs...)
	}
	lookup := func(name string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			if env[i].Name == name {
				return env[i].Value, true
			}
		}
		return "", false
	}
	for i := max(0, len(argv)-len(c.Command)-len(c.Args)); i < len(argv); i++ {
		argv[i] = Expand(argv[i], lookup)
	}
	return argv
}
