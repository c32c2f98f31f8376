package main

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockTick is the kernel's USER_HZ, the unit of utime and stime in
// /proc/<pid>/stat (100 on every Linux this runs on).
const clockTick = 10 * time.Millisecond

// cpuTime is a process's utime+stime.
func cpuTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis start with field 3 (state).
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// peakRSS is a live process's VmHWM in KiB.
func peakRSS(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// quantile is the q-quantile (nearest rank) of ds; 0 for none.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

// writeCounter counts the write requests (every method but GET, HEAD and
// OPTIONS) a client's transport sends, by method and resource, and the
// answers that were conflicts.
type writeCounter struct {
	mu        sync.Mutex
	n         map[string]int64
	conflicts int64
}

func newWriteCounter() *writeCounter { return &writeCounter{n: map[string]int64{}} }

// wrap is a transport.WrapperFunc.
func (c *writeCounter) wrap(next http.RoundTripper) http.RoundTripper {
	return countingTransport{c: c, next: next}
}

type countingTransport struct {
	c    *writeCounter
	next http.RoundTripper
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return t.next.RoundTrip(req)
	}
	resp, err := t.next.RoundTrip(req)
	t.c.mu.Lock()
	t.c.n[req.Method+" "+resource(req.URL.Path)]++
	if err == nil && resp.StatusCode == http.StatusConflict {
		t.c.conflicts++
	}
	t.c.mu.Unlock()
	return resp, err
}

// resource names what an API path writes: pods, pods/status, workflows,
// workflows/status...
func resource(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range parts {
		if p == "namespaces" && i+2 < len(parts) {
			rest := parts[i+2:]
			if len(rest) >= 3 {
				return rest[0] + "/" + rest[2]
			}
			return rest[0]
		}
	}
	if len(parts) > 0 {
		return parts[len(parts)-1]
	}
	return path
}

// snapshot returns the counts and their total.
func (c *writeCounter) snapshot() (map[string]int64, int64, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.n))
	var total int64
	for k, v := range c.n {
		out[k] = v
		total += v
	}
	return out, total, c.conflicts
}

// describe prints counts as "POST pods 2000, PUT workflows/status 35".
func describe(counts map[string]int64) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, counts[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
