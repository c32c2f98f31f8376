package local

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/braidwf/braid/internal/executor"
	"github.com/braidwf/braid/internal/runtime"
)

// Names inside the data directory.
const (
	indexFile  = ".index" // under runs/; no namespace starts with a dot
	logFile    = "main.log"
	resultFile = "result.json"
)

// stepDir is runs/<namespace>/<workflow>/<pod>.
func (rt *Runtime) stepDir(run runtime.Run) string {
	pod := run.PodName
	if pod == "" {
		pod = run.ID
	}
	return filepath.Join(workflowDir(rt.runsDir, run.Namespace, run.Workflow), pathPart(pod))
}

// workflowDir is runs/<namespace>/<workflow>, under runsDir.
func workflowDir(runsDir, namespace, workflow string) string {
	if namespace == "" {
		namespace = "default"
	}
	return filepath.Join(runsDir, pathPart(namespace), pathPart(workflow))
}

// pathPart makes a name safe as one path element.
func pathPart(name string) string {
	switch name {
	case "", ".", "..":
		return "_" + name
	}
	return strings.ReplaceAll(name, "/", "_")
}

// createDir creates the step's directory. known reports a run that an
// earlier Runtime started: nothing is created then. A directory left by
// another run of the same pod name (a workflow deleted and created again)
// is emptied first.
func (rt *Runtime) createDir(run runtime.Run, dir string) (known bool, err error) {
	parent := filepath.Dir(dir)
	if _, known := rt.idx.dir(run.ID); known {
		return true, nil
	}
	rt.mu.Lock()
	made := rt.dirs[parent]
	rt.mu.Unlock()
	if !made {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return false, err
		}
		rt.mu.Lock()
		rt.dirs[parent] = true
		rt.mu.Unlock()
	}
	err = os.Mkdir(dir, 0o755)
	if errors.Is(err, fs.ErrExist) {
		// An earlier run of the same pod (before a manual retry): keep its
		// log beside, as <pod>.1, <pod>.2, ...
		if err := keepAside(dir); err != nil {
			return false, err
		}
		err = os.Mkdir(dir, 0o755)
	}
	return false, err
}

// keepAside renames dir to the first free <dir>.<n>.
func keepAside(dir string) error {
	for n := 1; ; n++ {
		to := dir + "." + strconv.Itoa(n)
		if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
			return os.Rename(dir, to)
		}
	}
}

// record adds the run to the index (one append, no directory change),
// before the process starts: the journal is written ahead of the action.
func (rt *Runtime) record(s *step) {
	if s.recorded.Swap(true) {
		return // once: a step that fails to start after it was recorded
	}
	if err := rt.idx.started(s.id, s.dir); err != nil {
		rt.log.Warn("cannot index a run", "run", s.id, "err", err)
	}
}

// shim is the directory of one image's alias scripts, made once.
type shim struct {
	once sync.Once
	dir  string
	err  error
}

// shimDir returns a directory holding one executable script per alias of
// img, so that a step's shell finds them on PATH (`sh -c "cowsay hi"` in
// docker/whalesay). The scripts are written once per Runtime, so they follow
// the braid executable of the running version.
func (rt *Runtime) shimDir(key string, img executor.Image) (string, error) {
	rt.mu.Lock()
	sh := rt.shims[key]
	if sh == nil {
		sh = &shim{dir: filepath.Join(rt.shimsDir, shimName(key))}
		rt.shims[key] = sh
	}
	rt.mu.Unlock()
	sh.once.Do(func() { sh.err = writeShims(sh.dir, img.Aliases) })
	return sh.dir, sh.err
}

// shimName turns an image key into a directory name that is safe in PATH
// (no ":") and unique (a hash of the key follows the readable part).
func shimName(key string) string {
	readable := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '_'
	}, key)
	sum := sha256.Sum256([]byte(key))
	return readable + "-" + hex.EncodeToString(sum[:4])
}

func writeShims(dir string, aliases map[string][]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("image shims: %w", err)
	}
	for name, argv := range aliases {
		if name == "" || strings.Contains(name, "/") || len(argv) == 0 {
			continue
		}
		var b strings.Builder
		b.WriteString("#!/bin/sh\nexec")
		for _, a := range argv {
			b.WriteString(" " + shellQuote(a))
		}
		b.WriteString(" \"$@\"\n")
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, []byte(b.String()), 0o755); err != nil {
			return fmt.Errorf("image shims: %w", err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("image shims: %w", err)
		}
	}
	return nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// RemoveWorkflowFiles removes what the runtime keeps of a workflow under
// dataDir (its steps' logs and files), for one that neither the live store
// nor the archive holds any more.
func RemoveWorkflowFiles(dataDir, namespace, workflow string) error {
	return os.RemoveAll(workflowDir(filepath.Join(dataDir, "runs"), namespace, workflow))
}
