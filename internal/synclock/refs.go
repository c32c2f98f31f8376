package synclock

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The kinds in a lock key, as Argo writes them.
const (
	kindConfigMap = "ConfigMap"
	kindDatabase  = "Database"
	kindMutex     = "Mutex"
)

// ref is one lock that a synchronization names.
type ref struct {
	key   string
	kind  string
	mutex bool   // listed under mutexes in the status; its limit is 1
	ns    string // namespace of the lock
	name  string // ConfigMap name, database key or mutex name
	cmKey string // ConfigMap key
}

// Keys returns the keys of the locks that s names for a workflow of
// namespace, in the order they are taken.
func Keys(namespace string, s *v1alpha1.Synchronization) ([]string, error) {
	rs, err := refs(namespace, s)
	keys := make([]string, len(rs))
	for i, r := range rs {
		keys[i] = r.key
	}
	return keys, err
}

// refs lists the locks of s: the legacy semaphore, the semaphores, the
// legacy mutex, then the mutexes, each once.
func refs(namespace string, s *v1alpha1.Synchronization) ([]ref, error) {
	if s == nil {
		return nil, nil
	}
	var out []ref
	seen := map[string]bool{}
	add := func(r ref, err error) error {
		if err != nil {
			return err
		}
		if !seen[r.key] {
			seen[r.key] = true
			out = append(out, r)
		}
		return nil
	}
	sems := s.Semaphores
	if s.Semaphore != nil {
		sems = append([]*v1alpha1.SemaphoreRef{s.Semaphore}, sems...)
	}
	for _, sem := range sems {
		if err := add(semaphoreRef(namespace, sem)); err != nil {
			return nil, err
		}
	}
	mus := s.Mutexes
	if s.Mutex != nil {
		mus = append([]*v1alpha1.Mutex{s.Mutex}, mus...)
	}
	for _, mu := range mus {
		if err := add(mutexRef(namespace, mu)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func semaphoreRef(namespace string, s *v1alpha1.SemaphoreRef) (ref, error) {
	if s == nil {
		return ref{}, errors.New("an empty semaphore")
	}
	ns := s.Namespace
	if ns == "" {
		ns = namespace
	}
	switch {
	case s.ConfigMapKeyRef != nil && s.Database != nil:
		return ref{}, errors.New("a semaphore with both configMapKeyRef and database")
	case s.ConfigMapKeyRef != nil:
		name, key := s.ConfigMapKeyRef.Name, s.ConfigMapKeyRef.Key
		if name == "" || key == "" {
			return ref{}, errors.New("a semaphore's configMapKeyRef needs a name and a key")
		}
		return ref{key: ns + "/" + kindConfigMap + "/" + name + "/" + key, kind: kindConfigMap, ns: ns, name: name, cmKey: key}, nil
	case s.Database != nil:
		if s.Database.Key == "" {
			return ref{}, errors.New("a database semaphore needs a key")
		}
		return ref{key: ns + "/" + kindDatabase + "/" + s.Database.Key, kind: kindDatabase, ns: ns, name: s.Database.Key}, nil
	}
	return ref{}, errors.New("a semaphore needs a configMapKeyRef or a database")
}

func mutexRef(namespace string, m *v1alpha1.Mutex) (ref, error) {
	if m == nil || m.Name == "" {
		return ref{}, errors.New("a mutex needs a name")
	}
	ns := m.Namespace
	if ns == "" {
		ns = namespace
	}
	kind := kindMutex
	if m.Database {
		kind = kindDatabase
	}
	return ref{key: ns + "/" + kind + "/" + m.Name, kind: kind, mutex: true, ns: ns, name: m.Name}, nil
}

// parseKey reads a lock key back (Restore).
func parseKey(key string, mutex bool) (ref, error) {
	parts := strings.SplitN(key, "/", 3)
	if len(parts) != 3 || parts[0] == "" || parts[2] == "" {
		return ref{}, fmt.Errorf("lock key %q: want namespace/kind/name", key)
	}
	r := ref{key: key, kind: parts[1], mutex: mutex, ns: parts[0], name: parts[2]}
	switch r.kind {
	case kindMutex, kindDatabase:
		if strings.Contains(r.name, "/") {
			return ref{}, fmt.Errorf("lock key %q: a %s name has no slash", key, r.kind)
		}
		r.mutex = mutex || r.kind == kindMutex
	case kindConfigMap:
		name, cmKey, ok := strings.Cut(r.name, "/")
		if !ok || name == "" || cmKey == "" || strings.Contains(cmKey, "/") {
			return ref{}, fmt.Errorf("lock key %q: want namespace/ConfigMap/name/key", key)
		}
		r.name, r.cmKey, r.mutex = name, cmKey, false
	default:
		return ref{}, fmt.Errorf("lock key %q: unknown kind %q", key, r.kind)
	}
	return r, nil
}

// limit reads a lock's limit now; a mutex's is 1. The error says why a
// semaphore has none.
func (m *Locks) limit(r ref) (int, error) {
	if r.mutex {
		return 1, nil
	}
	switch r.kind {
	case kindConfigMap:
		var v string
		ok := false
		if m.cfg.ConfigMapValue != nil {
			v, ok = m.cfg.ConfigMapValue(r.ns, r.name, r.cmKey)
		}
		if !ok {
			return 0, fmt.Errorf("failed to get semaphore limit: config map %s has no key %s", r.name, r.cmKey)
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("failed to get semaphore limit: config map %s key %s is %q, not a number", r.name, r.cmKey, v)
		}
		return positive(n, r)
	case kindDatabase:
		n, ok := 0, false
		if m.cfg.DatabaseLimit != nil {
			n, ok = m.cfg.DatabaseLimit(r.ns + "/" + r.name)
		}
		if !ok {
			return 0, fmt.Errorf("failed to get semaphore limit: no database limit for %s/%s (synchronization.limits in the config)", r.ns, r.name)
		}
		return positive(n, r)
	}
	return 0, fmt.Errorf("failed to get semaphore limit: unknown lock kind %q", r.kind)
}

func positive(n int, r ref) (int, error) {
	if n < 1 {
		return 0, fmt.Errorf("failed to get semaphore limit: the limit of %s is %d", r.key, n)
	}
	return n, nil
}
