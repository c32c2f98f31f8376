package synclock

import (
	"sort"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Status is a workflow's status.synchronization, as Argo keeps it: for each
// lock, the workflow's holders holding it, and for each lock it waits for,
// that lock's current holders. nil when the workflow holds and waits for
// nothing.
func (t *Table) Status(workflowKey string) *v1alpha1.SynchronizationStatus {
	hs := t.byWorkflow[workflowKey]
	if len(hs) == 0 {
		return nil
	}
	keys := map[string]bool{}
	for _, ks := range hs {
		for k := range ks {
			keys[k] = true
		}
	}
	st := &v1alpha1.SynchronizationStatus{}
	for _, key := range sortedSet(keys) {
		l := t.locks[key]
		if l == nil {
			continue
		}
		var mine []string
		waiting := false
		for h := range hs {
			if l.holders[h] {
				mine = append(mine, h)
			} else if _, ok := l.waiters[h]; ok {
				waiting = true
			}
		}
		sort.Strings(mine)
		if l.ref.mutex {
			addMutex(st, key, mine, waiting, sortedSet(l.holders))
		} else {
			addSemaphore(st, key, mine, waiting, sortedSet(l.holders))
		}
	}
	if st.Semaphore == nil && st.Mutex == nil {
		return nil
	}
	return st
}

func addSemaphore(st *v1alpha1.SynchronizationStatus, key string, mine []string, waiting bool, all []string) {
	if len(mine) == 0 && !waiting {
		return
	}
	if st.Semaphore == nil {
		st.Semaphore = &v1alpha1.SemaphoreStatus{}
	}
	if len(mine) > 0 {
		st.Semaphore.Holding = append(st.Semaphore.Holding, v1alpha1.SemaphoreHolding{Semaphore: key, Holders: mine})
	}
	if waiting {
		st.Semaphore.Waiting = append(st.Semaphore.Waiting, v1alpha1.SemaphoreHolding{Semaphore: key, Holders: all})
	}
}

func addMutex(st *v1alpha1.SynchronizationStatus, key string, mine []string, waiting bool, all []string) {
	if len(mine) == 0 && !waiting {
		return
	}
	if st.Mutex == nil {
		st.Mutex = &v1alpha1.MutexStatus{}
	}
	for _, h := range mine {
		st.Mutex.Holding = append(st.Mutex.Holding, v1alpha1.MutexHolding{Mutex: key, Holder: h})
	}
	if waiting {
		holder := ""
		if len(all) > 0 {
			holder = all[0]
		}
		st.Mutex.Waiting = append(st.Mutex.Waiting, v1alpha1.MutexHolding{Mutex: key, Holder: holder})
	}
}

// RestoreStatus puts back the holders a stored status.synchronization
// records (after a restart). It returns the first key it could not read;
// the others are restored all the same.
func (m *Locks) RestoreStatus(st *v1alpha1.SynchronizationStatus) error {
	if st == nil {
		return nil
	}
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	if st.Semaphore != nil {
		for _, h := range st.Semaphore.Holding {
			for _, holder := range h.Holders {
				if err := m.Restore(h.Semaphore, holder, false); err != nil {
					keep(err)
				}
			}
		}
	}
	if st.Mutex != nil {
		for _, h := range st.Mutex.Holding {
			if h.Holder == "" {
				continue
			}
			if err := m.Restore(h.Mutex, h.Holder, true); err != nil {
				keep(err)
			}
		}
	}
	return first
}

func sortedSet(s map[string]bool) []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
