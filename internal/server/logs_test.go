package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// fileLogs is a StepLogs that keeps each step's log in the file the
// function names.
type fileLogs func(namespace, workflow, pod string) string

func (l fileLogs) Open(_ context.Context, namespace, workflow, pod string) (*os.File, error) {
	return os.Open(l(namespace, workflow, pod))
}

// writeFile writes content to a new file under t's temporary directory.
func writeFile(t *testing.T, content string) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "main.log")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// tailOffset finds where the last n lines start; a line longer than piece
// counts as that many pieces, so the offset may fall inside a line.
func TestTailOffset(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		n       int64
		piece   int64
		want    string // what follows the offset
	}{
		{"empty", "", 3, 100, ""},
		{"fewer lines than asked", "a\nb\n", 5, 100, "a\nb\n"},
		{"final newline", "a\nb\nc\n", 2, 100, "b\nc\n"},
		{"no final newline", "a\nb\nc", 2, 100, "b\nc"},
		{"no final newline, one line", "a\nb\nc", 1, 100, "c"},
		{"empty last line", "a\n\n", 1, 100, "\n"},
		{"empty lines count", "a\n\n\nb\n", 3, 100, "\n\nb\n"},
		{"one line, no newline", "abcdef", 1, 100, "abcdef"},
		{"tail 0", "a\nb\n", 0, 100, ""},
		{"a long line is pieces, counted back from its end", "0123456789\n", 2, 4, "23456789\n"},
		{"a long line, all its pieces", "x\n0123456789\n", 3, 4, "0123456789\n"},
		{"a long line and the one before", "x\n0123456789\n", 4, 4, "x\n0123456789\n"},
		{"a long line without newline", "x\n0123456789", 1, 4, "6789"},
		{"exact multiple of the piece", "x\n01234567\n", 2, 4, "01234567\n"},
		{"piece start moves past a split character", "\n" + "ab\u00e9cd", 1, 4, "\u00e9cd"},
		{"piece start past a split 3-byte character", "zz\u20acabc", 1, 4, "abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := writeFile(t, tc.content)
			off, err := tailOffset(f, tc.n, tc.piece)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.content[off:]; got != tc.want {
				t.Errorf("tailOffset(%q, %d, %d) = %d: %q follows, want %q", tc.content, tc.n, tc.piece, off, got, tc.want)
			}
		})
	}
}

// sink is a server stream that keeps what is sent.
type sink struct {
	grpc.ServerStream
	entries []*workflow.LogEntry
}

func (s *sink) Send(e *workflow.LogEntry) error { s.entries = append(s.entries, e); return nil }
func (s *sink) Context() context.Context        { return context.Background() }

// send cuts lines longer than the entry size into pieces (never inside a
// UTF-8 character), honours limitBytes, grep and tailLines, and leaves an
// unfinished last line for the next round unless the pod has ended.
func TestLogTailSend(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		q       logQuery
		final   bool
		want    []string
	}{
		{"lines", "a\nb\r\nc\n", logQuery{tail: -1}, true, []string{"a", "b", "c"}},
		{"unfinished line waits", "a\nb", logQuery{tail: -1}, false, []string{"a"}},
		{"unfinished line at the end", "a\nb", logQuery{tail: -1}, true, []string{"a", "b"}},
		{"long line in pieces", "0123456789\nx\n", logQuery{tail: -1}, true, []string{"0123", "4567", "89", "x"}},
		{"a line of exactly one piece", "0123\n4567\n", logQuery{tail: -1}, true, []string{"0123", "4567"}},
		{"a long unfinished line sends its whole pieces", "0123456789", logQuery{tail: -1}, false, []string{"0123", "4567"}},
		{"pieces never split a character", "abc\u00e9defg\n", logQuery{tail: -1}, true, []string{"abc", "\u00e9de", "fg"}},
		{"limitBytes cuts", "abc\ndef\nghi\n", logQuery{tail: -1, limit: 6}, true, []string{"abc", "de"}},
		{"limitBytes in a long line", "0123456789\n", logQuery{tail: -1, limit: 6}, true, []string{"0123", "45"}},
		{"tail then limit", "abc\ndef\nghi\n", logQuery{tail: 2, limit: 5}, true, []string{"def", "g"}},
		{"tail of a long line", "x\n0123456789", logQuery{tail: 2}, true, []string{"2345", "6789"}},
		{"grep per piece", "0123456789\n", logQuery{tail: -1, grep: mustRegexp(t, "5")}, true, []string{"4567"}},
		{"invalid UTF-8 is replaced", "a\xffb\n", logQuery{tail: -1}, true, []string{"a\uFFFDb"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := writeFile(t, tc.content)
			tc.q.entry = 4
			out := &sink{}
			lt := &logTail{q: tc.q, stream: out, pods: map[string]*podLog{}}
			if err := lt.send(f, "pod", &podLog{}, tc.final); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range out.entries {
				got = append(got, e.Content)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("sent %q, want %q", got, tc.want)
			}
		})
	}
}

// A follower that found an unfinished line sends it whole once it ends,
// and a second round sends only what was added.
func TestLogTailFollowRounds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "main.log")
	if err := os.WriteFile(path, []byte("one\ntw"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := &sink{}
	lt := &logTail{q: logQuery{tail: -1, entry: maxLogEntry}, stream: out, pods: map[string]*podLog{}}
	p := &podLog{}
	send := func(final bool) {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := lt.send(f, "pod", p, final); err != nil {
			t.Fatal(err)
		}
	}
	send(false)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, "o\nthree\n")
	f.Close()
	send(true)
	var got []string
	for _, e := range out.entries {
		got = append(got, e.Content)
	}
	if want := "one|two|three"; strings.Join(got, "|") != want {
		t.Errorf("sent %q, want %s", got, want)
	}
}

// logServer serves a real store holding one Succeeded workflow "big" with
// one pod node, and returns the handler, the gRPC address and the path of
// that pod's log.
func logServer(t *testing.T) (*Server, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := metav1.NewTime(time.Now().Add(-time.Minute))
	wf := &v1alpha1.Workflow{}
	if err := json.Unmarshal([]byte(`{"metadata":{"name":"big","namespace":"argo"},"spec":`+okSpec+`}`), wf); err != nil {
		t.Fatal(err)
	}
	node := v1alpha1.NodeStatus{ID: "big", Name: "big", DisplayName: "big", Type: v1alpha1.NodeTypePod,
		TemplateName: "main", Phase: v1alpha1.NodeSucceeded, StartedAt: now, FinishedAt: now}
	wf.Status = v1alpha1.WorkflowStatus{Phase: v1alpha1.WorkflowSucceeded, StartedAt: now, FinishedAt: now,
		Nodes: v1alpha1.Nodes{"big": node}}
	if err := st.Create(context.Background(), wf); err != nil {
		t.Fatal(err)
	}
	logs := fileLogs(func(ns, wf, pod string) string { return filepath.Join(dir, "logs", ns, wf, pod, "main.log") })
	path := logs("argo", "big", wf.NodePodName(&node))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Store: st, Capabilities: sqliteCaps(st), Version: testVersion, StepLogs: logs})
	if err != nil {
		t.Fatal(err)
	}
	return srv, path
}

// writeOneLine writes a log that is one line of size bytes ('x'), with no
// final newline, as `head -c N /dev/zero | tr '\0' x` would.
func writeOneLine(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	chunk := []byte(strings.Repeat("x", 1<<20))
	for left := size; left > 0; left -= int64(len(chunk)) {
		if _, err := w.Write(chunk[:min(left, int64(len(chunk)))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// The last lines of a log that is one 64 MiB line are read from its end:
// the request allocates a few entries' worth, not the line, and every
// entry is at most maxLogEntry (or what limitBytes leaves).
func TestLogsOfOneHugeLineREST(t *testing.T) {
	srv, path := logServer(t)
	const size = 64 << 20
	writeOneLine(t, path, size)
	h := srv.Handler()
	for _, tc := range []struct {
		query   string
		entries int
		bytes   int
	}{
		{"logOptions.tailLines=1", 1, maxLogEntry},
		{"logOptions.tailLines=3", 3, 3 * maxLogEntry},
		{"logOptions.tailLines=10&logOptions.limitBytes=1000", 1, 1000},
		{"logOptions.limitBytes=2500000", (2500000 + maxLogEntry - 1) / maxLogEntry, 2500000},
	} {
		t.Run(tc.query, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/api/v1/workflows/argo/big/log?logOptions.container=main&"+tc.query, nil))
			runtime.ReadMemStats(&after)
			if rec.Code != 200 {
				t.Fatalf("status %d: %.300s", rec.Code, rec.Body.String())
			}
			var n, total int
			sc := bufio.NewScanner(rec.Body)
			sc.Buffer(nil, 4*maxLogEntry)
			for sc.Scan() {
				var e struct {
					Result struct {
						Content string `json:"content"`
					} `json:"result"`
				}
				if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
					t.Fatalf("frame %d: %v", n, err)
				}
				if len(e.Result.Content) > maxLogEntry {
					t.Errorf("entry %d has %d bytes, more than %d", n, len(e.Result.Content), maxLogEntry)
				}
				n++
				total += len(e.Result.Content)
			}
			if n != tc.entries || total != tc.bytes {
				t.Errorf("%d entries of %d bytes in all, want %d of %d", n, total, tc.entries, tc.bytes)
			}
			// The recorder holds the response: what is allocated beyond it
			// is the server's.
			alloc := int64(after.TotalAlloc-before.TotalAlloc) - int64(rec.Body.Cap())
			t.Logf("%s: %d entries, %d bytes; allocated %.1f MiB beyond the response", tc.query, n, total, float64(alloc)/(1<<20))
			if alloc > int64(8*maxLogEntry+tc.bytes*6) {
				t.Errorf("allocated %d MiB to send %d bytes of a %d MiB line: the line is read whole", alloc>>20, total, size>>20)
			}
		})
	}
}

// The gRPC stream honours the same options without reading the line.
func TestLogsOfOneHugeLineGRPC(t *testing.T) {
	srv, path := logServer(t)
	writeOneLine(t, path, 32<<20)
	conn, err := grpc.NewClient(serveOn(t, srv), grpc.WithTransportCredentials(insecure.NewCredentials()), wireCodec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tail, limit := int64(2), int64(maxLogEntry+10)
	stream, err := workflow.NewWorkflowServiceClient(conn).WorkflowLogs(ctx, &workflow.WorkflowLogRequest{Namespace: "argo", Name: "big",
		LogOptions: &corev1.PodLogOptions{Container: "main", TailLines: &tail, LimitBytes: &limit}})
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for {
		e, err := stream.Recv()
		if err != nil {
			break
		}
		sizes = append(sizes, len(e.Content))
	}
	if fmt.Sprint(sizes) != fmt.Sprint([]int{maxLogEntry, 10}) {
		t.Errorf("entry sizes %v, want [%d 10]", sizes, maxLogEntry)
	}
}

// A negative limitBytes is a bad request.
func TestLogsNegativeLimit(t *testing.T) {
	srv, _ := logServer(t)
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/api/v1/workflows/argo/big/log?logOptions.limitBytes=-1", nil))
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "limitBytes") {
		t.Errorf("status %d: %s", rec.Code, rec.Body.String())
	}
}

func mustRegexp(t *testing.T, expr string) *regexp.Regexp {
	t.Helper()
	re, err := regexp.Compile(expr)
	if err != nil {
		t.Fatal(err)
	}
	return re
}

// The REST frame of a log entry, built without protojson, reads back as
// the entry through protojson, whatever the content holds.
func TestLogEntryLine(t *testing.T) {
	for _, content := range []string{"", "plain", `quote " and \ backslash`, "tab\tcr\rnl\nnul\x00bell\x07", "<&>", "é€😀\u2028\u2029", "bad \xff utf-8"} {
		e := &workflow.LogEntry{Content: content, PodName: "pod-1"}
		line := logEntryLine(e)
		var frame struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(line, &frame); err != nil {
			t.Fatalf("%q: %s is not JSON: %v", content, line, err)
		}
		got := &workflow.LogEntry{}
		if err := json.Unmarshal(frame.Result, got); err != nil {
			t.Fatalf("%q: %s: %v", content, line, err)
		}
		want := strings.ToValidUTF8(content, "\uFFFD")
		if got.Content != want || got.PodName != "pod-1" {
			t.Errorf("%q: read back %q, %q", content, got.Content, got.PodName)
		}
		if content == "" && strings.Contains(string(line), "content") {
			t.Errorf("an empty content is sent: %s", line)
		}
	}
}
