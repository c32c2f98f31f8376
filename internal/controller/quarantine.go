package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Crash quarantine: a workflow that was being worked on in each of N
// consecutive abnormal stops of the process (an OOM kill, a SIGKILL, a
// fatal runtime error) is ended Error on the next start instead of being
// reconciled again, so that one workflow cannot keep the server in a crash
// loop.
//
// A driver is busy from the moment it starts loading its workflow until it
// next waits for something outside itself: a pass that asks for another
// pass at once (the engine yielding in a big expansion) keeps it busy. A
// watchdog looks at the busy drivers every busyTick and writes the journal
// (atomically: a new file renamed over the old one) only when the set of
// those busy for busyAfter or longer changes. Nothing is written per
// reconcile, and no fsync is made: the journal must survive the process,
// not the machine (after a power loss there was no server crash to count).
//
// The journal's presence at start means the previous process did not stop
// cleanly (a clean stop removes it). "Consecutive" is then: the counter of
// a workflow goes up by one for each abnormal stop in which it was in the
// journal's busy list, and is forgotten after an abnormal stop in which it
// was not, and after any clean stop. The counters a start computes are
// written back at once, so that they carry over to the next start.
const (
	// busyTick is how often the watchdog looks at the busy drivers.
	busyTick = 100 * time.Millisecond
	// busyAfter is how long a driver must have been busy to be journaled.
	busyAfter = 200 * time.Millisecond
	// busyRequeue: a pass that asks to be called again within this long
	// (the engine's "again") keeps its driver busy.
	busyRequeue = 10 * time.Millisecond
	// journalMax bounds the busy list to the workflows busy the longest,
	// so that a crash in the middle of a start-up recovery does not count
	// against every workflow that happened to be loading.
	journalMax = 16
	// defaultQuarantineAfter is config.DefaultLimits.QuarantineAfterCrashes.
	defaultQuarantineAfter = 3
)

// Quarantine configures crash quarantine for a Manager.
type Quarantine struct {
	// Journal is the journal file; "" turns quarantine off. Keep it where
	// it outlives the process: the data directory, or a volume that
	// survives a container's restart.
	Journal string
	// After is limits.quarantineAfterCrashes; 0: 3.
	After int
}

// SetQuarantine turns crash quarantine on. Call it before Run.
func (m *Manager) SetQuarantine(q Quarantine) {
	if q.After <= 0 {
		q.After = defaultQuarantineAfter
	}
	m.quarantine = q
}

// journalEntry is one workflow in the journal.
type journalEntry struct {
	UID       types.UID `json:"uid"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	// Crashes counts the consecutive abnormal stops it was busy in, up
	// to the start of the process that wrote the journal.
	Crashes int `json:"crashes,omitempty"`
	// BusySince is when it became busy (busy list only).
	BusySince time.Time `json:"busySince,omitzero"`
}

// journalFile is the journal's content.
type journalFile struct {
	Crashes []journalEntry `json:"crashes,omitempty"`
	Busy    []journalEntry `json:"busy,omitempty"`
}

// journal is the running process's side of the journal file.
type journal struct {
	path    string
	log     *slog.Logger
	crashes []journalEntry // fixed for the life of the process
	last    []types.UID    // the busy list last written
}

// openJournal reads what the previous process left, counts its crash
// against the workflows it had busy, and writes this process's journal.
// It returns the workflows to quarantine, with the message each ends with.
func openJournal(q Quarantine, log *slog.Logger) (*journal, map[types.UID]string) {
	j := &journal{path: q.Journal, log: log}
	prev, crashed := readJournal(q.Journal, log)
	quarantine := map[types.UID]string{}
	if crashed {
		counts := map[types.UID]int{}
		for _, e := range prev.Crashes {
			counts[e.UID] = e.Crashes
		}
		for _, b := range prev.Busy {
			b.Crashes, b.BusySince = counts[b.UID]+1, time.Time{}
			if b.Crashes >= q.After {
				quarantine[b.UID] = quarantineMessage(b.Crashes, q.After)
				log.Warn("quarantining a workflow: the server stopped abnormally while it was busy with it",
					"workflow", b.Namespace+"/"+b.Name, "uid", b.UID, "crashes", b.Crashes)
				continue
			}
			log.Warn("the previous server stopped abnormally while it was busy with a workflow",
				"workflow", b.Namespace+"/"+b.Name, "uid", b.UID, "crashes", b.Crashes, "quarantineAfter", q.After)
			j.crashes = append(j.crashes, b)
		}
	}
	j.write(nil)
	return j, quarantine
}

func quarantineMessage(crashes, after int) string {
	return fmt.Sprintf("quarantined: the server stopped abnormally %d times in a row while reconciling this workflow "+
		"(limits.quarantineAfterCrashes: %d)", crashes, after)
}

// readJournal reads the journal file; crashed is false when there is none
// (the previous process stopped cleanly, or there was none).
func readJournal(path string, log *slog.Logger) (journalFile, bool) {
	var f journalFile
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, false
	}
	if err != nil {
		log.Warn("read the crash journal", "file", path, "err", err)
		return f, true
	}
	if err := json.Unmarshal(data, &f); err != nil {
		log.Warn("the crash journal is not valid JSON; its counts are dropped", "file", path, "err", err)
		return journalFile{}, true
	}
	return f, true
}

// write replaces the journal with this process's counts and busy list.
func (j *journal) write(busy []journalEntry) {
	data, err := json.Marshal(journalFile{Crashes: j.crashes, Busy: busy})
	if err == nil {
		err = writeAtomic(j.path, append(data, '\n'))
	}
	if err != nil {
		j.log.Warn("write the crash journal", "file", j.path, "err", err)
		return
	}
	j.last = j.last[:0]
	for _, b := range busy {
		j.last = append(j.last, b.UID)
	}
}

// writeAtomic writes data to a new file next to path and renames it over
// path: a reader sees the old content or the new, never a part.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// close removes the journal: the process is stopping cleanly.
func (j *journal) close() {
	if err := os.Remove(j.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		j.log.Warn("remove the crash journal", "file", j.path, "err", err)
	}
}

// watchBusy journals the drivers busy for busyAfter or longer, until ctx
// ends.
func (m *Manager) watchBusy(ctx context.Context, j *journal) {
	t := time.NewTicker(busyTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			busy := m.busyList(now)
			if !slices.EqualFunc(busy, j.last, func(e journalEntry, u types.UID) bool { return e.UID == u }) {
				j.write(busy)
			}
		}
	}
}

// busyList is the drivers busy since busyAfter before now or earlier,
// the longest first, at most journalMax.
func (m *Manager) busyList(now time.Time) []journalEntry {
	limit := now.Add(-busyAfter).UnixNano()
	var busy []journalEntry
	m.mu.Lock()
	for uid, h := range m.handles {
		if since := h.busySince.Load(); since != 0 && since <= limit {
			ns, name, _ := strings.Cut(h.key, "/")
			busy = append(busy, journalEntry{UID: uid, Namespace: ns, Name: name, BusySince: time.Unix(0, since).UTC()})
		}
	}
	m.mu.Unlock()
	sort.Slice(busy, func(a, b int) bool {
		if !busy[a].BusySince.Equal(busy[b].BusySince) {
			return busy[a].BusySince.Before(busy[b].BusySince)
		}
		return busy[a].UID < busy[b].UID
	})
	if len(busy) > journalMax {
		busy = slices.Clone(busy[:journalMax]) // not the whole array: j.last keeps it
	}
	return busy
}

// busy marks the driver busy, from now unless it already is.
func (h *handle) busy() {
	if h.busySince.Load() == 0 {
		h.busySince.Store(time.Now().UnixNano())
	}
}

// idle is called when the driver is about to wait, for at most after (0:
// no timer): it has finished its start-up recovery, and it stops being
// busy unless the engine asked for another pass at once.
func (d *driver) idle(after time.Duration) {
	h := d.req.h
	if h == nil {
		return
	}
	h.settled()
	if after <= 0 || after > busyRequeue {
		h.busySince.Store(0)
	}
}
