package local

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/s3"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// TestDataTemplate runs data templates end to end: the listing of a file
// repository, transformed, is the step's outputs.result.
func TestDataTemplate(t *testing.T) {
	h := newArtRuntime(t)
	for _, key := range []string{"logs/wf-a/pod-1/main.log", "logs/wf-a/pod-1/out.tgz", "logs/wf-b/pod-2/main.log"} {
		h.put(t, key, []byte("x"))
	}
	cases := []struct {
		name, tmpl string
		phase      v1alpha1.NodePhase
		result     string // want, when Succeeded
		message    string // the message contains it, when not
	}{
		{"a key-only s3 location in the file repository, filtered",
			`{name: d, data: {source: {artifactPaths: {name: logs, s3: {key: logs}}},
			  transformation: [{expression: 'filter(data, {# endsWith "main.log"})'}]}}`,
			v1alpha1.NodeSucceeded, `["logs/wf-a/pod-1/main.log","logs/wf-b/pod-2/main.log"]`, ""},
		{"a file location, mapped",
			`{name: d, data: {source: {artifactPaths: {name: logs, file: {key: logs/wf-a}}},
			  transformation: [{expression: 'map(data, {split(#, "/")[3]})'}]}}`,
			v1alpha1.NodeSucceeded, `["main.log","out.tgz"]`, ""},
		{"nothing there", `{name: d, data: {source: {artifactPaths: {name: logs, file: {key: none}}}}}`,
			v1alpha1.NodeSucceeded, `[]`, ""},
		{"a bad expression", `{name: d, data: {source: {artifactPaths: {name: logs, file: {key: logs}}},
			  transformation: [{expression: 'filter(data,'}]}}`,
			v1alpha1.NodeError, "", "filter(data,"},
		{"a location that cannot be listed", `{name: d, data: {source: {artifactPaths: {name: logs, http: {url: "http://127.0.0.1:1/x"}}}}}`,
			v1alpha1.NodeError, "", `list artifactPaths "logs" (http http://127.0.0.1:1/x): cannot list a http location`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := h.run(t, tc.tmpl, false)
			evs := runToEnd(t, h.harness, run)
			ev := final(evs)
			if ev.Phase != tc.phase {
				t.Fatalf("phase %s (%q), want %s", ev.Phase, ev.Message, tc.phase)
			}
			if tc.phase != v1alpha1.NodeSucceeded {
				if !strings.Contains(ev.Message, tc.message) {
					t.Fatalf("message %q does not say %q", ev.Message, tc.message)
				}
				return
			}
			if len(evs) != 2 || evs[0].Phase != v1alpha1.NodeRunning {
				t.Errorf("events %+v, want Running then Succeeded", evs)
			}
			if ev.Outputs == nil || ev.Outputs.Result == nil || *ev.Outputs.Result != tc.result {
				t.Fatalf("outputs %+v, want result %s", ev.Outputs, tc.result)
			}
			got, ok, err := h.Status(context.Background(), run.ID)
			if err != nil || !ok || got.Phase != v1alpha1.NodeSucceeded || *got.Outputs.Result != tc.result {
				t.Fatalf("Status = %+v, %v, %v", got, ok, err)
			}
		})
	}
}

// TestDataTemplateReadBack: a new Runtime on the same DataDir reports a data
// step's result from the index, and does not run it again.
func TestDataTemplateReadBack(t *testing.T) {
	h := newArtRuntime(t)
	h.put(t, "k/a.log", []byte("x"))
	run := h.run(t, `{name: d, data: {source: {artifactPaths: {name: a, file: {key: k}}}}}`, false)
	if ev := final(runToEnd(t, h.harness, run)); ev.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("phase %s: %s", ev.Phase, ev.Message)
	}
	rt2, err := New(Config{DataDir: h.cfg.DataDir, Artifacts: h.cfg.Artifacts, Isolation: IsolationNone})
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close()
	if err := rt2.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	ev, ok, err := rt2.Status(context.Background(), run.ID)
	if err != nil || !ok || ev.Phase != v1alpha1.NodeSucceeded || ev.Outputs == nil || *ev.Outputs.Result != `["k/a.log"]` {
		t.Fatalf("Status after a restart = %+v, %v, %v", ev, ok, err)
	}
}

// TestDataTemplateKilled: the deadline ends a data step Failed before it
// starts, and Kill ends one that is listing a silent endpoint Failed, at
// once.
func TestDataTemplateKilled(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan struct{}, 16)
	go func() { // accept, and never answer
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
			select {
			case accepted <- struct{}{}:
			default:
			}
		}
	}()
	h := newRuntime(t, func(c *Config) { c.Artifacts = &artifact.Drivers{S3: s3.New(nil, "argo")} })
	src := fmt.Sprintf(`{name: d, data: {source: {artifactPaths: {name: a,
	  s3: {endpoint: %q, bucket: bkt, insecure: true, region: r}}}}}`, l.Addr().String())

	run := newRun(tmpl(t, src))
	run.Deadline = time.Now().Add(-time.Second)
	if ev := final(runToEnd(t, h, run)); ev.Phase != v1alpha1.NodeFailed || ev.Message != MsgDeadline {
		t.Fatalf("past deadline: %s %q", ev.Phase, ev.Message)
	}

	run = newRun(tmpl(t, src))
	for len(accepted) > 0 {
		<-accepted
	}
	if err := h.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	if ev := <-h.events(run.ID); ev.Phase != v1alpha1.NodeRunning {
		t.Fatalf("first event %+v, want Running", ev)
	}
	select { // the load hangs on the server that never answers
	case <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("the step never connected to the artifact server")
	}
	start := time.Now()
	if err := h.Kill(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	ev := final(waitFinal(t, h, run.ID, 10*time.Second))
	if ev.Phase != v1alpha1.NodeFailed || ev.Message != MsgKilled {
		t.Fatalf("killed: %s %q", ev.Phase, ev.Message)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the kill took %v", took)
	}
}
