package emissary

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/executor"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Options are what Run needs; cmd/braid passes the process's own.
type Options struct {
	// Argv is the user's command: what follows `--`.
	Argv   []string
	Getenv func(string) string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Signals are forwarded to the child's process group (SIGTERM, SIGINT).
	Signals <-chan os.Signal
	// Drivers move artifacts; nil means the pod's own (Drivers), with
	// secrets from the environment.
	Drivers *artifact.Drivers
	// KillGrace is the time between SIGTERM and SIGKILL at a deadline; 0
	// means 10 s.
	KillGrace time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// setup is what the environment says about the step.
type setup struct {
	tmpl          *v1alpha1.Template
	includeResult bool
	art           step.ArtifactPlan
	deadline      time.Time
	deadlineMsg   string
	termLog       string
	staging       string
	workDir       string
	// name is the container's name ("" outside a pod); role its EnvRole.
	name, role string
	ctrDir     string
	// set is the container's node in a containerSet (role RoleContainer).
	set *setMember
	// stopWhen, when it closes, stops the child (a sidecar's stop).
	stopWhen <-chan struct{}
}

// reportsOutputs: this container loads the inputs and reports the outputs
// (the main container, or the set's container named main).
func (s *setup) reportsOutputs() bool {
	return s.role == "" || s.name == ContainerSetMain
}

// Run runs the step around Argv and writes its result to the termination
// log. It returns the exit code the emissary exits with: the child's, or 1
// when the child could not run.
func Run(ctx context.Context, o Options) int {
	o = withDefaults(o)
	if o.Getenv(EnvRole) == RoleSidecar {
		return runSidecar(ctx, o)
	}
	s, err := readSetup(o)
	var msg *Message
	code := 1
	if err != nil {
		fmt.Fprintf(o.Stderr, "braid emissary: %v\n", err)
		msg = &Message{Phase: v1alpha1.NodeError, Message: err.Error()}
	} else {
		msg, code = runStep(ctx, o, s)
	}
	writeMessage(ctx, o, s, msg)
	markDone(o, s, msg, code)
	return code
}

func withDefaults(o Options) Options {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Stdin == nil {
		o.Stdin = strings.NewReader("")
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.KillGrace <= 0 {
		o.KillGrace = 10 * time.Second
		if d, err := time.ParseDuration(o.Getenv(EnvKillGrace)); err == nil && d > 0 {
			o.KillGrace = d
		}
	}
	if o.Drivers == nil {
		o.Drivers = Drivers(o.Getenv)
	}
	return o
}

// readSetup parses the environment. It always returns a setup whose
// termLog is usable, even with an error.
func readSetup(o Options) (*setup, error) {
	s := &setup{termLog: cmpOr(o.Getenv(EnvTerminationLog), DefaultTerminationLog),
		staging: cmpOr(o.Getenv(EnvStaging), StagingDir),
		name:    o.Getenv(EnvContainerName), role: o.Getenv(EnvRole), ctrDir: cmpOr(o.Getenv(EnvCtrDir), CtrDir)}
	wd, err := os.Getwd()
	if err != nil {
		return s, fmt.Errorf("working directory: %w", err)
	}
	s.workDir = wd
	if a := o.Getenv(EnvArtifacts); a != "" {
		if err := json.Unmarshal([]byte(a), &s.art); err != nil {
			return s, fmt.Errorf("parse %s: %w", EnvArtifacts, err)
		}
	}
	raw := o.Getenv(EnvTemplate)
	if raw == "" {
		return s, fmt.Errorf("%s is not set", EnvTemplate)
	}
	s.tmpl = &v1alpha1.Template{}
	if err := json.Unmarshal([]byte(raw), s.tmpl); err != nil {
		return s, fmt.Errorf("parse %s: %w", EnvTemplate, err)
	}
	s.includeResult, _ = strconv.ParseBool(o.Getenv(EnvIncludeResult))
	switch s.role {
	case "":
	case RoleContainer:
		m, err := setMemberOf(s.tmpl, s.name)
		if err != nil {
			return s, err
		}
		s.set = m
		s.includeResult = s.includeResult && s.name == ContainerSetMain
	default:
		return s, fmt.Errorf("%s=%q: want %q, %q or nothing", EnvRole, s.role, RoleContainer, RoleSidecar)
	}
	if len(o.Argv) == 0 {
		return s, errors.New("no command to run (usage: braid exec emissary -- COMMAND [ARG]...)")
	}
	start := o.Now()
	if d := o.Getenv(EnvActiveDeadline); d != "" {
		dur, err := time.ParseDuration(d)
		if err != nil {
			return s, fmt.Errorf("parse %s: %w", EnvActiveDeadline, err)
		}
		s.deadline, s.deadlineMsg = start.Add(dur), MsgActiveDeadline
	}
	if d := o.Getenv(EnvDeadline); d != "" {
		at, err := time.Parse(time.RFC3339Nano, d)
		if err != nil {
			return s, fmt.Errorf("parse %s: %w", EnvDeadline, err)
		}
		if s.deadline.IsZero() || at.Before(s.deadline) {
			s.deadline, s.deadlineMsg = at, MsgDeadline
		}
	}
	return s, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// runStep loads the inputs, runs the child and collects the outputs.
func runStep(ctx context.Context, o Options, s *setup) (*Message, int) {
	paths := executor.Paths{WorkDir: s.workDir, Scratch: s.staging}
	if err := os.MkdirAll(s.staging, 0o755); err != nil {
		return &Message{Phase: v1alpha1.NodeError, Message: fmt.Sprintf("staging directory: %v", err)}, 1
	}
	if !s.deadline.IsZero() && !s.deadline.After(o.Now()) {
		return &Message{Phase: v1alpha1.NodeFailed, Message: s.deadlineMsg}, 1
	}
	if s.set != nil {
		if msg, code, wait := waitDependencies(o, s); !wait {
			return msg, code
		}
	}
	if !s.reportsOutputs() {
		res, err := runAttempts(o, s, o.Argv)
		if err != nil {
			return &Message{Phase: v1alpha1.NodeError, Message: err.Error()}, 1
		}
		return containerMessage(s.name, res), res.code
	}
	if err := executor.LoadInputs(ctx, s.tmpl, &s.art, o.Drivers, paths); err != nil {
		return &Message{Phase: v1alpha1.NodeError, Message: err.Error()}, 1
	}
	argv := o.Argv
	if s.tmpl.Script != nil {
		c, err := executor.StageScript(s.tmpl.Script, s.staging)
		if err != nil {
			return &Message{Phase: v1alpha1.NodeError, Message: err.Error()}, 1
		}
		if s.tmpl.Script.Source != "" {
			argv = append(argv[:len(argv):len(argv)], c.Args[len(c.Args)-1])
		}
	}
	res, err := runAttempts(o, s, argv)
	if err != nil {
		return &Message{Phase: v1alpha1.NodeError, Message: err.Error()}, 1
	}
	return collect(ctx, o, s, paths, res), res.code
}

// collect turns the child's end into the step's result: outputs read and
// saved, the log shipped.
func collect(ctx context.Context, o Options, s *setup, paths executor.Paths, res *childResult) *Message {
	code := int32(res.code)
	m := &Message{ExitCode: &code, StartedAt: &res.started, FinishedAt: &res.finished}
	out := &v1alpha1.Outputs{ExitCode: ptr(strconv.Itoa(res.code))}
	if res.tail != nil {
		out.Result = ptr(res.tail.Result())
	}
	params, perr := executor.ReadOutputParameters(s.tmpl, paths)
	out.Parameters = params
	arts, serr := executor.SaveOutputs(ctx, s.tmpl, &s.art, o.Drivers, paths, res.logPath)
	out.Artifacts = arts
	m.Outputs = out
	m.Log = shipLog(ctx, o, s, res.logPath, arts)
	switch {
	case res.killReason != "":
		m.Phase, m.Message = v1alpha1.NodeFailed, withError(res.killReason, serr)
	case res.code != 0:
		m.Phase, m.Message = v1alpha1.NodeFailed, withError(fmt.Sprintf("main: Error (exit code %d)", res.code), serr)
	case perr != nil:
		m.Phase, m.Message = v1alpha1.NodeError, withError(perr.Error(), serr)
	case serr != nil:
		m.Phase, m.Message = v1alpha1.NodeError, serr.Error()
	default:
		m.Phase = v1alpha1.NodeSucceeded
	}
	return m
}

func withError(msg string, err error) string {
	if err == nil {
		return msg
	}
	return msg + "; " + err.Error()
}

func ptr[T any](v T) *T { return &v }

// shipLog saves the main log at <key>/main.log when the run has a
// repository (SaveOutputs did it already when logs are archived), and
// returns where it is, or nil.
func shipLog(ctx context.Context, o Options, s *setup, logPath string, saved []v1alpha1.Artifact) *v1alpha1.ArtifactLocation {
	if logPath == "" {
		return nil
	}
	for i := range saved {
		if saved[i].Name == step.LogArtifact {
			loc := saved[i].ArtifactLocation
			return &loc
		}
	}
	loc, ok := repoLocation(s, LogObject)
	if !ok {
		return nil
	}
	if err := saveFile(ctx, o.Drivers, logPath, step.LogArtifact, loc); err != nil {
		fmt.Fprintf(o.Stderr, "braid emissary: ship the main log: %v\n", err)
		return nil
	}
	return &loc
}

// repoLocation is <key>/name in the run's repository.
func repoLocation(s *setup, name string) (v1alpha1.ArtifactLocation, bool) {
	if s == nil || s.art.Repository == nil {
		return v1alpha1.ArtifactLocation{}, false
	}
	loc := artifact.OutputLocation(s.art.Repository, s.art.Key, name, false)
	return loc, artifact.Kind(&loc) != ""
}

// saveFile uploads one file as it is to loc.
func saveFile(ctx context.Context, d *artifact.Drivers, path, name string, loc v1alpha1.ArtifactLocation) error {
	drv, err := d.For(&loc)
	if err != nil {
		return err
	}
	art := &v1alpha1.Artifact{Name: name, ArtifactLocation: loc}
	return drv.Save(ctx, path, art)
}

// writeMessage writes the result to the termination log, within
// MaxMessage bytes (fit).
func writeMessage(ctx context.Context, o Options, s *setup, m *Message) {
	data := fit(ctx, o, s, m)
	if err := os.WriteFile(s.termLog, data, 0o644); err != nil {
		fmt.Fprintf(o.Stderr, "braid emissary: write the result to %s: %v\n", s.termLog, err)
	}
}

// fit encodes m within MaxMessage bytes. A larger result is saved whole at
// <key>/braid-result.json and the message keeps what fits and points to
// it; with no repository to hold it, the step fails with a message naming
// the limit.
func fit(ctx context.Context, o Options, s *setup, m *Message) []byte {
	data, err := json.Marshal(m)
	if err != nil {
		data, _ = json.Marshal(&Message{Phase: v1alpha1.NodeError, Message: fmt.Sprintf("encode the result: %v", err)})
		return data
	}
	if len(data) <= MaxMessage {
		return data
	}
	slim := *m
	slim.Outputs = nil
	if m.Outputs != nil {
		slim.Outputs = &v1alpha1.Outputs{ExitCode: m.Outputs.ExitCode}
	}
	slim.Message = truncate(slim.Message, 1024)
	if loc, ok := repoLocation(s, ResultObject); ok {
		if err := saveBytes(ctx, o.Drivers, s.staging, data, loc); err == nil {
			slim.Full = &loc
			out, _ := json.Marshal(&slim)
			if len(out) <= MaxMessage {
				return out
			}
			slim.Log = nil
			out, _ = json.Marshal(&slim)
			return out
		} else {
			slim.Message = truncate(fmt.Sprintf("the step's result is %d bytes, more than the %d bytes of a termination message, and saving it to the artifact repository failed: %v",
				len(data), MaxMessage, err), 2048)
		}
	} else {
		slim.Message = fmt.Sprintf("the step's result is %d bytes, more than the %d bytes of a termination message, and no artifact repository is configured to hold it (outputs.result or an output parameter is too big)",
			len(data), MaxMessage)
	}
	slim.Phase = v1alpha1.NodeError
	out, _ := json.Marshal(&slim)
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// saveBytes uploads data to loc through a scratch file.
func saveBytes(ctx context.Context, d *artifact.Drivers, dir string, data []byte, loc v1alpha1.ArtifactLocation) error {
	f, err := os.CreateTemp(dir, ".result-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return saveFile(ctx, d, f.Name(), ResultObject, loc)
}

// logFile is where the child's combined output is captured for shipping.
func logFile(s *setup) string { return filepath.Join(s.staging, LogObject) }
