package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/executor"
	"github.com/braidwf/braid/internal/image"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// step is one run.
type step struct {
	id     string
	wfUID  string
	nodeID string
	dir    string
	done   chan struct{} // closed after the final event
	// recorded: the run's start is in the index (record).
	recorded atomic.Bool

	mu         sync.Mutex
	pid        int // 0 until the process has started
	exited     bool
	killReason string // the final message once a kill began
	killTimer  *time.Timer
	deadline   *time.Timer
	// cgroup holds every process of the step once it started (nil without
	// cgroups): the end of the grace period kills it whole.
	cgroup *stepCgroup
	// cancelLoad stops the loading of input artifacts; nil once the
	// process started, or when nothing is loaded in the background.
	cancelLoad context.CancelFunc
	last       runtime.StepEvent
}

// killedFor is the reason a kill began, or "".
func (s *step) killedFor() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.killReason
}

// event returns the latest event, or Pending while the step starts.
func (s *step) event() runtime.StepEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last.Phase == "" {
		ev := s.newEvent()
		ev.Phase = v1alpha1.NodePending
		return ev
	}
	return s.last
}

// newEvent is an event of this run with an empty result, for the caller
// to fill in.
func (s *step) newEvent() runtime.StepEvent {
	return runtime.StepEvent{RunID: s.id, WorkflowUID: s.wfUID, NodeID: s.nodeID}
}

// launch prepares and starts the step's process, and reports Running; or
// reports why it cannot run. A step with input artifacts to download loads
// them in a goroutine of its own, so that Start returns at once.
func (rt *Runtime) launch(s *step, run runtime.Run) {
	tmpl := run.Template
	if tmpl != nil && tmpl.Type() == v1alpha1.TemplateTypeData {
		rt.launchData(s, run)
		return
	}
	if msg := unsupported(tmpl); msg != "" {
		rt.fail(s, v1alpha1.NodeError, msg)
		return
	}
	now := rt.now()
	deadline, deadlineMsg := deadlineOf(run, now)
	if !deadline.IsZero() && !deadline.After(now) {
		rt.fail(s, v1alpha1.NodeFailed, deadlineMsg)
		return
	}
	if executor.HasRemoteInputs(tmpl) {
		rt.launchAfterLoad(s, run, deadline, deadlineMsg)
		return
	}
	rt.start(rt.ctx, s, run, deadline, deadlineMsg)
}

// start prepares the step (loading its input artifacts with ctx) and
// starts its process.
func (rt *Runtime) start(ctx context.Context, s *step, run runtime.Run, deadline time.Time, deadlineMsg string) {
	p, err := rt.prepare(ctx, s, run)
	if err != nil {
		if reason := s.killedFor(); reason != "" {
			rt.fail(s, v1alpha1.NodeFailed, reason)
			return
		}
		rt.fail(s, v1alpha1.NodeError, err.Error())
		return
	}

	logf, pr, pw, err := openStepOutput(s.dir, run.IncludeResult)
	if err != nil {
		rt.fail(s, v1alpha1.NodeError, err.Error())
		return
	}
	stdout := logf
	if pw != nil {
		stdout = pw
	}
	attr := rt.procAttr(&p, stdout, logf)

	s.mu.Lock()
	if s.killReason != "" {
		reason := s.killReason
		s.mu.Unlock()
		closeAll(logf, pr, pw)
		rt.fail(s, v1alpha1.NodeFailed, reason)
		return
	}
	// Journal the run before it starts, so that a braid killed at any
	// moment never forgets a step that ran: the next one reports it (lost
	// or finished) instead of starting it again.
	rt.record(s)
	proc, exited, err := rt.spawn(s, &p, attr)
	if err != nil {
		s.exited = true
		s.mu.Unlock()
		closeAll(logf, pr, pw)
		rt.removeCgroup(s, p.cgroup)
		rt.fail(s, v1alpha1.NodeError, fmt.Sprintf("cannot start %s: %v", p.argv[0], unwrapPathError(err)))
		return
	}
	started := rt.now()
	s.pid = proc.Pid
	s.cancelLoad = nil
	if !deadline.IsZero() && s.deadline == nil {
		s.deadline = time.AfterFunc(deadline.Sub(started), func() { rt.kill(s, deadlineMsg) })
	}
	rt.wg.Add(1)
	s.mu.Unlock()
	if pw != nil {
		pw.Close()
	} else {
		logf.Close()
		logf = nil
	}

	ev := s.newEvent()
	ev.Phase, ev.StartedAt = v1alpha1.NodeRunning, started
	rt.emit(s, ev)
	go rt.wait(s, run, p, proc, exited, started, pr, logf)
	rt.log.Debug("step started", "run", s.id, "pid", proc.Pid, "argv", p.argv)
}

// openStepOutput opens the step's log in dir and, with includeResult, a
// pipe to capture its stdout (pr reads it, pw is the process's end).
func openStepOutput(dir string, includeResult bool) (logf, pr, pw *os.File, err error) {
	logf, err = openLog(filepath.Join(dir, logFile))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open the step's log: %w", err)
	}
	if includeResult {
		if pr, pw, err = os.Pipe(); err != nil {
			logf.Close()
			return nil, nil, nil, fmt.Errorf("capture stdout: %w", err)
		}
	}
	return logf, pr, pw, nil
}

// procAttr is how the step's process starts: in its working directory
// with its environment (never braid's), stdin from /dev/null, stdout to
// stdout and stderr to logf, in a process group of its own.
func (rt *Runtime) procAttr(p *prepared, stdout, logf *os.File) *os.ProcAttr {
	if p.env == nil {
		p.env = []string{} // nil would make the process inherit braid's environment
	}
	attr := &os.ProcAttr{
		Dir:   p.workDir,
		Env:   p.env,
		Files: []*os.File{rt.devNull, stdout, logf},
		// Pdeathsig: a step does not outlive a braid that was killed; the
		// next braid reports it lost (MsgLost) instead of racing it.
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	}
	if p.unshare {
		attr.Sys.Unshareflags = syscall.CLONE_NEWNS
	}
	return attr
}

// spawn makes the step's cgroup (p.cgroup, where cgroups are available)
// and starts its process: in its root view, in the cgroup, or plainly.
// exited, when not nil, is closed once the process has exited (the thread
// that started it waits for it). s.mu is held.
func (rt *Runtime) spawn(s *step, p *prepared, attr *os.ProcAttr) (proc *os.Process, exited <-chan struct{}, err error) {
	if p.cgroup, err = rt.newCgroup(s, p.limits); err != nil {
		return nil, nil, err
	}
	s.cgroup = p.cgroup
	switch {
	case p.view != nil:
		attr.Sys.Chroot = p.view.merged
		return rt.startInView(*p.view, p.cgroup, p.argv, attr)
	case p.cgroup != nil:
		return rt.startInCgroup(p.cgroup, p.argv, attr)
	default:
		proc, err = os.StartProcess(p.argv[0], p.argv, attr)
		return proc, nil, err
	}
}

// prepared is what a step needs to start.
type prepared struct {
	argv    []string
	env     []string
	workDir string
	// tmp is the step's private /tmp on the host, when it has one.
	tmp string
	// unshare starts the step in a new mount namespace.
	unshare bool
	// view is the step's root view, when it has one; workDir is then the
	// working directory inside it.
	view *view
	// image is the image whose root the view shows, when the images
	// directory holds the step's image (image.go); nil: the host's root.
	image *image.Image
	// limits are the main container's resources.limits; cgroup holds the
	// step's processes and enforces them once the step starts (nil: no
	// cgroups here).
	limits limits
	cgroup *stepCgroup
}

// prepare stages the script and input artifacts, and resolves the command,
// the environment and the working directory. Its errors are the user's:
// the step ends Error with the message.
func (rt *Runtime) prepare(ctx context.Context, s *step, run runtime.Run) (prepared, error) {
	tmpl := run.Template
	c, err := executor.MainContainer(tmpl, s.dir)
	if err != nil {
		return prepared{}, err
	}
	env, err := executor.ResolveEnv(c, run.Env, executor.PodFields{Name: run.PodName, Namespace: run.Namespace, UID: run.ID})
	if err != nil {
		return prepared{}, err
	}
	img, err := rt.stepImage(ctx, c.Image)
	if err != nil {
		return prepared{}, err
	}
	var p prepared
	if img != nil {
		p, err = rt.imageCommand(c, env, img)
	} else {
		p, err = rt.hostCommand(c, env)
	}
	if err != nil {
		return prepared{}, err
	}
	if rt.sandbox != nil {
		if err := rt.withView(s, &p); err != nil {
			return prepared{}, err
		}
	} else if p.workDir == "" {
		p.workDir = s.dir
	} else if err := os.MkdirAll(p.workDir, 0o755); err != nil {
		return prepared{}, fmt.Errorf("workingDir: %w", err)
	}
	if rt.sandbox == nil && rt.privateTmp && executor.UsesTmp(tmpl) {
		if err := rt.withPrivateTmp(s, &p); err != nil {
			return prepared{}, err
		}
	}
	if len(tmpl.Inputs.Artifacts) > 0 {
		err := executor.LoadInputs(ctx, tmpl, run.Artifacts, rt.cfg.Artifacts, p.paths())
		if err != nil {
			return prepared{}, err
		}
	}
	return p, nil
}

// hostCommand resolves the command, the environment and the working
// directory of container c, whose resolved env is env, on the host's root,
// with the image table.
func (rt *Runtime) hostCommand(c *apiv1.Container, env []executor.EnvVar) (prepared, error) {
	pathEnv := rt.basePath
	for _, e := range env {
		if e.Name == "PATH" {
			pathEnv = e.Value
		}
	}
	argv, err := executor.ResolveCommand(c, rt.images, env, pathEnv, rt.paths.LookPath)
	if err != nil {
		return prepared{}, err
	}
	if img, key, ok := rt.images.Lookup(c.Image); ok && len(img.Aliases) > 0 {
		dir, err := rt.shimDir(key, img)
		if err != nil {
			return prepared{}, err
		}
		if pathEnv == "" {
			pathEnv = dir
		} else {
			pathEnv += ":" + dir
		}
		env = append(env, executor.EnvVar{Name: "PATH", Value: pathEnv})
	}
	return prepared{argv: argv, env: mergeEnv(rt.cfg.Environ, env), workDir: c.WorkingDir, limits: limitsOf(c)}, nil
}

// withPrivateTmp gives a step that reads its outputs from /tmp a /tmp of its
// own, so that steps running side by side do not overwrite each other's
// files: the step starts in a new mount namespace (Go makes / private in
// it), and a shell binds the step's directory over /tmp before it execs
// the command. Full isolation of every step is the sandbox's job.
func (rt *Runtime) withPrivateTmp(s *step, p *prepared) error {
	p.tmp = filepath.Join(s.dir, "tmp")
	if err := os.MkdirAll(p.tmp, 0o1777); err != nil {
		return fmt.Errorf("private /tmp: %w", err)
	}
	// When the step's own directory (its script, its log, its default
	// working directory) lies under /tmp, it is bound back at the same path
	// inside the private /tmp before that one covers the host's.
	keep := s.dir
	back := filepath.Join(p.tmp, "keep")
	if rel, ok := strings.CutPrefix(s.dir, "/tmp/"); ok {
		back = filepath.Join(p.tmp, rel)
		if err := os.MkdirAll(back, 0o755); err != nil {
			return fmt.Errorf("private /tmp: %w", err)
		}
	} else {
		keep = back // nothing to keep: bind the mount point onto itself
		if err := os.MkdirAll(back, 0o755); err != nil {
			return fmt.Errorf("private /tmp: %w", err)
		}
	}
	const shim = `mount --bind "$1" "$2" && mount --rbind "$0" /tmp && shift 2 && exec "$@"`
	p.argv = append([]string{"/bin/sh", "-c", shim, p.tmp, keep, back}, p.argv...)
	p.unshare = true
	return nil
}

// wait waits for the process, ends its group and everything else in its
// cgroup, collects the outputs and reports the final event.
func (rt *Runtime) wait(s *step, run runtime.Run, p prepared, proc *os.Process, exited <-chan struct{}, started time.Time, pr, logf *os.File) {
	defer rt.wg.Done()
	var tail *executor.Tail
	var copied chan struct{}
	if pr != nil {
		tail = executor.NewResultTail()
		copied = make(chan struct{})
		go func() {
			defer close(copied)
			copyTee(logf, tail, pr)
		}()
	}

	// Wait for the exit without reaping, so that the group's ID cannot be
	// reused while the rest of the group is killed.
	if exited != nil {
		<-exited // the thread that started it waits (startInView)
	} else {
		waitExited(proc.Pid)
	}
	s.mu.Lock()
	s.exited = true
	if s.deadline != nil {
		s.deadline.Stop()
	}
	if s.killTimer != nil {
		s.killTimer.Stop()
	}
	reason := s.killReason
	_ = syscall.Kill(-proc.Pid, syscall.SIGKILL)
	s.mu.Unlock()
	// And whatever left the group: everything else in the step's cgroup.
	rt.killCgroup(s, p.cgroup)
	state, err := proc.Wait()
	finished := rt.now()

	if pr != nil {
		// The group is dead, so the pipe ends soon; a process that left the
		// group may still hold it, so do not wait for it long.
		_ = pr.SetReadDeadline(time.Now().Add(time.Second))
		<-copied
		closeAll(pr, logf)
	}

	ev := s.newEvent()
	ev.StartedAt, ev.FinishedAt = started, finished
	if err != nil {
		ev.Phase, ev.Message = v1alpha1.NodeError, fmt.Sprintf("wait for the step's process: %v", err)
		rt.finish(s, ev)
		rt.removeCgroup(s, p.cgroup)
		rt.dropView(p.view)
		return
	}
	rt.endEvent(&ev, s, run, p, exitCode(state), tail, reason)
	rt.finish(s, ev)
	rt.removeCgroup(s, p.cgroup)
	rt.dropView(p.view)
}

// endEvent fills ev with the exit code, the outputs and the phase of a
// step whose process ended with code; reason is why braid killed it, ""
// when it did not.
func (rt *Runtime) endEvent(ev *runtime.StepEvent, s *step, run runtime.Run, p prepared, code int, tail *executor.Tail, reason string) {
	code32 := int32(code)
	ev.ExitCode = &code32
	out := &v1alpha1.Outputs{ExitCode: ptr(strconv.Itoa(code))}
	if tail != nil {
		out.Result = ptr(tail.Result())
	}
	params, perr := executor.ReadOutputParameters(run.Template, rt.outputPaths(s, p))
	out.Parameters = params
	arts, serr := rt.saveOutputs(s, run, p)
	out.Artifacts = arts
	ev.Outputs = out
	switch {
	case reason != "":
		ev.Phase, ev.Message = v1alpha1.NodeFailed, withSaveError(reason, serr)
	case code == 128+int(syscall.SIGKILL) && p.cgroup.oomKilled():
		ev.Phase, ev.Message = v1alpha1.NodeFailed, withSaveError(MsgOOMKilled, serr)
	case code != 0:
		ev.Phase, ev.Message = v1alpha1.NodeFailed, withSaveError(fmt.Sprintf("main: Error (exit code %d)", code), serr)
	case perr != nil:
		ev.Phase, ev.Message = v1alpha1.NodeError, withSaveError(perr.Error(), serr)
	case serr != nil:
		ev.Phase, ev.Message = v1alpha1.NodeError, serr.Error()
	default:
		ev.Phase = v1alpha1.NodeSucceeded
	}
}

// kill starts stopping a step's group, once: SIGTERM now, SIGKILL after the
// grace period. A step that has not started yet will not start.
func (rt *Runtime) kill(s *step, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exited || s.killReason != "" {
		return
	}
	s.killReason = reason
	if s.pid == 0 {
		if s.cancelLoad != nil {
			s.cancelLoad() // inputs being loaded: the step will not start
		}
		return
	}
	pid := s.pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	s.killTimer = time.AfterFunc(rt.cfg.KillGrace, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.exited {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			s.cgroup.signal() // and what left the group
		}
	})
	rt.log.Debug("killing step", "run", s.id, "reason", reason)
}

// unsupported says why the local runtime cannot run tmpl, or "".
func unsupported(tmpl *v1alpha1.Template) string {
	if tmpl == nil {
		return "the run has no template"
	}
	switch typ := tmpl.Type(); typ {
	case v1alpha1.TemplateTypeContainer, v1alpha1.TemplateTypeScript:
	case v1alpha1.TemplateTypeUnknown:
		return "the template must set exactly one of container, script, resource, suspend, http, plugin, containerSet, steps, dag and data"
	default:
		return fmt.Sprintf("the local runtime cannot run %s templates yet", typeName(typ))
	}
	switch {
	case len(tmpl.InitContainers) > 0:
		return "the local runtime cannot run initContainers yet"
	case len(tmpl.Sidecars) > 0:
		return "the local runtime cannot run sidecars yet"
	}
	return ""
}

// typeName is the template type as a spec spells its field.
func typeName(t v1alpha1.TemplateType) string {
	switch t {
	case v1alpha1.TemplateTypeHTTP:
		return "http"
	case v1alpha1.TemplateTypeDAG:
		return "dag"
	case v1alpha1.TemplateTypeContainerSet:
		return "containerSet"
	}
	s := string(t)
	return strings.ToLower(s[:1]) + s[1:]
}

// deadlineOf returns when the step must be killed and the message then, or
// the zero time when it has no deadline.
func deadlineOf(run runtime.Run, start time.Time) (time.Time, string) {
	var at time.Time
	var msg string
	if run.ActiveDeadline > 0 {
		at, msg = start.Add(run.ActiveDeadline), MsgActiveDeadline
	}
	if !run.Deadline.IsZero() && (at.IsZero() || run.Deadline.Before(at)) {
		at, msg = run.Deadline, MsgDeadline
	}
	return at, msg
}

// exitCode is the process's exit code, or 128+N when signal N killed it (as
// a container runtime reports it).
func exitCode(state *os.ProcessState) int {
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return state.ExitCode()
}

// waitExited blocks until the process pid has exited, leaving it a zombie
// (waitid with WNOWAIT); os.Process.Wait reaps it afterwards.
func waitExited(pid int) {
	const pPID = 1 // P_PID
	var info [128]byte
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			return
		}
	}
}

// copyTee copies src to both w and t until EOF or an error (a read deadline).
func copyTee(w io.Writer, t *executor.Tail, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
			_, _ = t.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// mergeEnv returns base with vars set, each replacing an entry of the same
// name.
func mergeEnv(base []string, vars []executor.EnvVar) []string {
	if len(vars) == 0 {
		return base
	}
	set := make(map[string]string, len(vars))
	for _, v := range vars {
		set[v.Name] = v.Value
	}
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := set[name]; !ok {
			out = append(out, kv)
		}
	}
	for _, v := range vars {
		if value, ok := set[v.Name]; ok {
			out = append(out, v.Name+"="+value)
			delete(set, v.Name)
		}
	}
	return out
}

// envValue returns the value of name in env ("" if absent; the last wins).
func envValue(env []string, name string) string {
	value := ""
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			value = v
		}
	}
	return value
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// openLog creates a step's log file. It is os.OpenFile without the
// attempt to register a regular file with the poller (three system calls
// fewer on every step).
func openLog(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC|syscall.O_APPEND|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

func ptr[T any](v T) *T { return &v }
