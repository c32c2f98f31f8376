package emissary

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// markerPoll is how often markers are looked for: a dependency's end, or
// the end of the containers a sidecar outlives.
const markerPoll = 50 * time.Millisecond

// setMember is one container of a containerSet, as its emissary sees it.
type setMember struct {
	deps      []string
	retries   int
	retryWait time.Duration
}

// setMemberOf finds the container name in tmpl's containerSet.
func setMemberOf(tmpl *v1alpha1.Template, name string) (*setMember, error) {
	cs := tmpl.ContainerSet
	if cs == nil {
		return nil, fmt.Errorf("%s=%s but the template has no containerSet", EnvRole, RoleContainer)
	}
	names := map[string]bool{}
	var m *setMember
	for i := range cs.Containers {
		c := &cs.Containers[i]
		names[c.Name] = true
		if c.Name == name {
			m = &setMember{deps: c.Dependencies}
		}
	}
	if m == nil {
		return nil, fmt.Errorf("container %q is not in the template's containerSet", name)
	}
	for _, d := range m.deps {
		if !names[d] || d == name {
			return nil, fmt.Errorf("container %q depends on %q, which is not another container of the set", name, d)
		}
	}
	if rs := cs.RetryStrategy; rs != nil {
		if rs.Retries != nil {
			n, err := strconv.Atoi(rs.Retries.String())
			if err != nil || n < 0 {
				return nil, fmt.Errorf("containerSet.retryStrategy.retries %q is not a number of retries", rs.Retries.String())
			}
			m.retries = n
		}
		if rs.Duration != "" {
			d, err := parseWait(rs.Duration)
			if err != nil {
				return nil, fmt.Errorf("containerSet.retryStrategy.duration: %w", err)
			}
			m.retryWait = d
		}
	}
	return m, nil
}

// parseWait reads a Go duration or a number of seconds.
func parseWait(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is neither a duration nor a number of seconds", s)
	}
	return d, nil
}

// marker is the path of a container's marker.
func marker(dir, name string) string { return filepath.Join(dir, name+".done") }

// waitDependencies waits for the markers of the container's dependencies.
// It returns wait=true when the child may run; otherwise the container's
// result: skipped (Omitted, exit 0) when a dependency did not succeed,
// Failed when the deadline passes or a signal arrives first.
func waitDependencies(o Options, s *setup) (msg *Message, code int, run bool) {
	if len(s.set.deps) == 0 {
		return nil, 0, true
	}
	var deadline <-chan time.Time
	if !s.deadline.IsZero() {
		t := time.NewTimer(s.deadline.Sub(o.Now()))
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(markerPoll)
	defer tick.Stop()
	for {
		failed, all := readDeps(s.ctrDir, s.set.deps)
		switch {
		case len(failed) > 0 && all:
			now := o.Now()
			return &Message{Phase: v1alpha1.NodeOmitted, StartedAt: &now, FinishedAt: &now,
				Message: fmt.Sprintf("%s: skipped: dependency %s did not succeed", s.name, strings.Join(failed, ", "))}, 0, false
		case all:
			return nil, 0, true
		}
		select {
		case <-tick.C:
		case <-deadline:
			return &Message{Phase: v1alpha1.NodeFailed, Message: s.deadlineMsg}, 1, false
		case sig := <-o.Signals:
			return &Message{Phase: v1alpha1.NodeFailed, Message: fmt.Sprintf("%s: %v while waiting for its dependencies", s.name, sig)}, 1, false
		}
	}
}

// readDeps reports the dependencies whose marker says they did not
// succeed, and whether every marker is there.
func readDeps(dir string, deps []string) (failed []string, all bool) {
	all = true
	for _, d := range deps {
		data, err := os.ReadFile(marker(dir, d))
		if err != nil {
			all = false
			continue
		}
		if strings.TrimSpace(string(data)) != "0" {
			failed = append(failed, d)
		}
	}
	return failed, all
}

// runAttempts runs the child, again after a non-zero exit as long as the
// containerSet's retryStrategy allows (not after a deadline or a
// forwarded signal).
func runAttempts(o Options, s *setup, argv []string) (*childResult, error) {
	retries := 0
	var wait time.Duration
	if s.set != nil {
		retries, wait = s.set.retries, s.set.retryWait
	}
	var first time.Time
	for attempt := 0; ; attempt++ {
		res, err := runChild(o, s, argv)
		if err != nil {
			return nil, err
		}
		if attempt == 0 {
			first = res.started
		}
		res.started = first
		if res.code == 0 || res.killReason != "" || res.signalled || attempt >= retries {
			return res, nil
		}
		fmt.Fprintf(o.Stderr, "braid emissary: %s exited with code %d; retry %d of %d in %v\n", nameOr(s.name), res.code, attempt+1, retries, wait)
		if !pause(o, s, wait) {
			return res, nil
		}
	}
}

// pause waits d between attempts; false when a signal or the deadline
// comes first.
func pause(o Options, s *setup, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	var deadline <-chan time.Time
	if !s.deadline.IsZero() {
		dt := time.NewTimer(s.deadline.Sub(o.Now()))
		defer dt.Stop()
		deadline = dt.C
	}
	select {
	case <-t.C:
		return true
	case <-deadline:
		return false
	case <-o.Signals:
		return false
	}
}

func nameOr(name string) string { return cmpOr(name, "main") }

// containerMessage is the result of a container of a set other than main:
// no outputs, the exit code and the phase.
func containerMessage(name string, res *childResult) *Message {
	code := int32(res.code)
	m := &Message{ExitCode: &code, StartedAt: &res.started, FinishedAt: &res.finished, Phase: v1alpha1.NodeSucceeded}
	switch {
	case res.killReason != "":
		m.Phase, m.Message = v1alpha1.NodeFailed, res.killReason
	case res.code != 0:
		m.Phase, m.Message = v1alpha1.NodeFailed, fmt.Sprintf("%s: Error (exit code %d)", name, res.code)
	}
	return m
}

// markDone writes the container's marker, through a temporary name so
// that a reader never sees half of it: "0" when it succeeded,
// MarkerSkipped when it did not run, else its exit code (1 for an error
// with exit code 0). Nothing is written outside a pod (no container name).
func markDone(o Options, s *setup, msg *Message, code int) {
	if s == nil || s.name == "" {
		return
	}
	content := strconv.Itoa(code)
	switch phase := msg.FinalPhase(); {
	case phase == v1alpha1.NodeOmitted:
		content = MarkerSkipped
	case phase == v1alpha1.NodeSucceeded:
		content = "0"
	case code == 0:
		content = "1"
	}
	if err := writeMarker(s.ctrDir, s.name, content); err != nil {
		fmt.Fprintf(o.Stderr, "braid emissary: %v\n", err)
	}
}

func writeMarker(dir, name, content string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("marker directory: %w", err)
	}
	tmp := marker(dir, name) + ".tmp"
	if err := os.WriteFile(tmp, []byte(content+"\n"), 0o644); err != nil {
		return fmt.Errorf("write the marker of %s: %w", name, err)
	}
	if err := os.Rename(tmp, marker(dir, name)); err != nil {
		return fmt.Errorf("write the marker of %s: %w", name, err)
	}
	return nil
}

// runSidecar runs a sidecar's command until the containers it outlives
// (EnvStopAfter) have all written their markers, then stops it: SIGTERM,
// SIGKILL after the kill grace. A stop by the emissary is a success (exit
// 0); a sidecar that ends by itself reports its own exit code.
func runSidecar(ctx context.Context, o Options) int {
	name := cmpOr(o.Getenv(EnvContainerName), "sidecar")
	s := &setup{termLog: cmpOr(o.Getenv(EnvTerminationLog), DefaultTerminationLog), name: name, role: RoleSidecar,
		ctrDir: cmpOr(o.Getenv(EnvCtrDir), CtrDir)}
	if len(o.Argv) == 0 {
		err := errors.New("no command to run (usage: braid exec emissary -- COMMAND [ARG]...)")
		fmt.Fprintf(o.Stderr, "braid emissary: %v\n", err)
		writeMessage(ctx, o, s, &Message{Phase: v1alpha1.NodeError, Message: err.Error()})
		return 1
	}
	after := splitList(o.Getenv(EnvStopAfter))
	stop, done := make(chan struct{}), make(chan struct{})
	if len(after) > 0 {
		s.stopWhen = stop
		go watchMarkers(s.ctrDir, after, stop, done)
	}
	res, err := runChild(o, s, o.Argv)
	close(done)
	if err != nil {
		fmt.Fprintf(o.Stderr, "braid emissary: %v\n", err)
		writeMessage(ctx, o, s, &Message{Phase: v1alpha1.NodeError, Message: err.Error()})
		return 1
	}
	if res.killReason == MsgSidecarStopped {
		zero := int32(0)
		writeMessage(ctx, o, s, &Message{Phase: v1alpha1.NodeSucceeded, ExitCode: &zero, Message: MsgSidecarStopped,
			StartedAt: &res.started, FinishedAt: &res.finished})
		return 0
	}
	writeMessage(ctx, o, s, containerMessage(name, res))
	return res.code
}

// watchMarkers closes stop once every named marker is there; it returns
// early when done closes.
func watchMarkers(dir string, names []string, stop chan<- struct{}, done <-chan struct{}) {
	tick := time.NewTicker(markerPoll)
	defer tick.Stop()
	for {
		if allMarkers(dir, names) {
			close(stop)
			return
		}
		select {
		case <-tick.C:
		case <-done:
			return
		}
	}
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// allMarkers reports whether every named container has written its
// marker, whatever it says.
func allMarkers(dir string, names []string) bool {
	for _, n := range names {
		if _, err := os.Stat(marker(dir, n)); err != nil {
			return false
		}
	}
	return true
}
