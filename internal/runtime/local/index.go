package local

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// maxInlineResult is the largest final event kept in the index itself;
// a larger one (a big result or big parameters) goes to the step's
// result.json.
const maxInlineResult = 4 << 10

// runIndex is the journal of the runs on a DataDir, runs/.index, so that
// Status answers after a restart. It is appended to, one write per
// record, so that a step changes no directory for it (creating a file can
// cost 0.1-0.4 ms of CPU on a busy ext4; an append costs a few µs):
//
//	S <run ID> <pod directory, relative to runs/>   the run started
//	E <run ID> <final event as JSON>                the run finished
//	E <run ID> @                                    ... and the event is in result.json
//
// IDs and directories are URL-escaped; JSON has no newline. A record cut
// short by a crash is ignored. The whole journal is read when a Runtime
// opens, keeping about 150 bytes per run in memory.
type runIndex struct {
	runsDir string

	mu   sync.Mutex
	f    *os.File // read with ReadAt, appended to under mu
	size int64    // where the next record starts
	runs map[string]*indexEntry
}

type indexEntry struct {
	dir    string
	off    int64 // of the final event's JSON in the journal; 0: none there
	n      int
	inFile bool // the final event is in result.json
	done   bool // the run finished
}

// openIndex reads the journal and opens it for appending.
func openIndex(runsDir string) (*runIndex, error) {
	f, err := os.OpenFile(filepath.Join(runsDir, indexFile), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	x := &runIndex{runsDir: runsDir, f: f, runs: make(map[string]*indexEntry)}
	if err := x.load(); err != nil {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	return x, nil
}

func (x *runIndex) load() error {
	r := bufio.NewReaderSize(io.NewSectionReader(x.f, 0, 1<<62), 64<<10)
	var off int64
	for {
		line, err := r.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) { // a long line: read the rest
			var more []byte
			more, err = r.ReadSlice('\n')
			line = append(bytes.Clone(line), more...)
		}
		if errors.Is(err, io.EOF) {
			if len(line) > 0 {
				// A torn last record: end it, so that the next append
				// starts a line of its own.
				if _, err := x.f.Write([]byte{'\n'}); err != nil {
					return err
				}
				off += int64(len(line)) + 1
			}
			x.size = off
			return nil
		}
		if err != nil {
			return err
		}
		x.parse(line[:len(line)-1], off)
		off += int64(len(line))
	}
}

// parse applies one record that starts at off; bad records are ignored.
func (x *runIndex) parse(line []byte, off int64) {
	if len(line) < 4 || line[1] != ' ' {
		return
	}
	kind := line[0]
	rest := line[2:]
	escID, payload, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return
	}
	id, err := url.PathUnescape(string(escID))
	if err != nil {
		return
	}
	switch kind {
	case 'S':
		rel, err := url.PathUnescape(string(payload))
		if err != nil || !filepath.IsLocal(rel) {
			return
		}
		x.runs[id] = &indexEntry{dir: filepath.Join(x.runsDir, rel)}
	case 'E':
		e := x.runs[id]
		if e == nil {
			return
		}
		e.done = true
		if string(payload) == "@" {
			e.inFile = true
			return
		}
		e.off = off + int64(2+len(escID)+1)
		e.n = len(payload)
	}
}

// append writes one record; it returns where the record starts.
func (x *runIndex) append(rec []byte) (int64, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	off := x.size
	n, err := x.f.Write(rec)
	x.size += int64(n)
	return off, err
}

// started records a run and its directory.
func (x *runIndex) started(id, dir string) error {
	rel, err := filepath.Rel(x.runsDir, dir)
	if err != nil {
		return err
	}
	x.mu.Lock()
	x.runs[id] = &indexEntry{dir: dir}
	x.mu.Unlock()
	_, err = x.append([]byte("S " + url.PathEscape(id) + " " + url.PathEscape(rel) + "\n"))
	return err
}

// finished records a run's final event: in the journal when it is small,
// else in the run's result.json.
func (x *runIndex) finished(id, dir string, ev runtime.StepEvent) error {
	data, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	escID := url.PathEscape(id)
	inFile := len(data) > maxInlineResult
	var rec []byte
	if inFile {
		if err := os.WriteFile(filepath.Join(dir, resultFile), data, 0o644); err != nil {
			return err
		}
		rec = []byte("E " + escID + " @\n")
	} else {
		rec = make([]byte, 0, len(escID)+len(data)+4)
		rec = append(append(append(append(rec, "E "...), escID...), ' '), data...)
		rec = append(rec, '\n')
	}
	off, err := x.append(rec)
	x.mu.Lock()
	if e := x.runs[id]; e != nil && err == nil {
		e.done, e.inFile = true, inFile
		if !inFile {
			e.off, e.n = off+int64(2+len(escID)+1), len(data)
		}
	}
	x.mu.Unlock()
	return err
}

// dir returns the directory of an indexed run.
func (x *runIndex) dir(id string) (string, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if e := x.runs[id]; e != nil {
		return e.dir, true
	}
	return "", false
}

// result returns the final event of an indexed run: MsgLost when it never
// finished (braid stopped while it ran) or its record cannot be read.
func (x *runIndex) result(id string) (runtime.StepEvent, bool) {
	x.mu.Lock()
	e, ok := x.runs[id]
	var entry indexEntry
	if ok {
		entry = *e
	}
	x.mu.Unlock()
	if !ok {
		return runtime.StepEvent{}, false
	}
	lost := runtime.StepEvent{RunID: id}
	lost.Phase, lost.Message = v1alpha1.NodeError, MsgLost
	if !entry.done {
		return lost, true
	}
	var data []byte
	var err error
	if entry.inFile {
		data, err = os.ReadFile(filepath.Join(entry.dir, resultFile))
	} else {
		data = make([]byte, entry.n)
		_, err = x.f.ReadAt(data, entry.off)
	}
	var ev runtime.StepEvent
	if err == nil {
		err = json.Unmarshal(data, &ev)
	}
	if err != nil || ev.Phase == "" {
		return lost, true
	}
	return ev, true
}

func (x *runIndex) close() error { return x.f.Close() }
