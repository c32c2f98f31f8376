package compat

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-workflows/v4/pkg/apiclient/workflow"
	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWorkflowWatch: a watch of one workflow by name (as `argo watch` and
// `argo wait` open it) starts with the current object (ADDED), sends only
// that workflow, and follows it until it has Succeeded.
func TestWorkflowWatch(t *testing.T) {
	eachTransport(t, "wf-watch", func(t *testing.T, e *env) {
		wf := e.create(t, podWorkflow("watch-", nil, "sh", "-c", "sleep 0.5; echo done"))
		e.create(t, podWorkflow("other-", nil, "true"))
		ctx, cancel := context.WithCancel(e.ctx)
		defer cancel()
		stream, err := e.wf().WatchWorkflows(ctx, &workflow.WatchWorkflowsRequest{Namespace: e.ns,
			ListOptions: &metav1.ListOptions{FieldSelector: "metadata.name=" + wf.Name, ResourceVersion: "0"}})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		var phases []wfv1.WorkflowPhase
		for i := 0; ; i++ {
			ev, err := stream.Recv()
			if err != nil {
				t.Fatalf("watch: after %d events (phases %v): %v", i, phases, err)
			}
			if ev.Object == nil || ev.Type == "" {
				t.Fatalf("watch: event %d is empty: %+v", i, ev)
			}
			if i == 0 && ev.Type != "ADDED" {
				t.Errorf("watch: the first event is %s, want ADDED (the current object)", ev.Type)
			}
			if ev.Type != "ADDED" && ev.Type != "MODIFIED" {
				t.Errorf("watch: event %d of type %q", i, ev.Type)
			}
			if ev.Object.Name != wf.Name || ev.Object.Namespace != e.ns {
				t.Fatalf("watch of metadata.name=%s sent %s/%s", wf.Name, ev.Object.Namespace, ev.Object.Name)
			}
			if len(phases) == 0 || phases[len(phases)-1] != ev.Object.Status.Phase {
				phases = append(phases, ev.Object.Status.Phase)
			}
			if ev.Object.Status.Phase.Completed() {
				if ev.Object.Status.Phase != wfv1.WorkflowSucceeded || ev.Object.Status.FinishedAt.IsZero() {
					t.Errorf("watch: ended %s (%q) finishedAt %v, want Succeeded with finishedAt", ev.Object.Status.Phase, ev.Object.Status.Message, ev.Object.Status.FinishedAt)
				}
				break
			}
		}
		t.Logf("phases watched: %v", phases)
	})
}

// TestWorkflowWatchEvents: the stream of Kubernetes Events of a namespace
// opens, and whatever it sends while a workflow runs is about that
// workflow. braid keeps no Events (its WatchEvents stays empty), which the
// test logs.
func TestWorkflowWatchEvents(t *testing.T) {
	eachTransport(t, "wf-events", func(t *testing.T, e *env) {
		ctx, cancel := context.WithCancel(e.ctx)
		type result struct {
			opened bool // the stream's headers came before the end
			events []*corev1.Event
			err    error
			at     time.Time // of err
		}
		done := make(chan result, 1)
		go func() {
			var r result
			defer func() { r.at = time.Now(); done <- r }()
			stream, err := e.wf().WatchEvents(ctx, &workflow.WatchEventsRequest{Namespace: e.ns})
			if err != nil {
				r.err = err
				return
			}
			r.opened = true
			for {
				ev, err := stream.Recv()
				if err != nil {
					r.err = err
					return
				}
				r.events = append(r.events, ev)
			}
		}()
		wf := e.create(t, podWorkflow("events-", nil, "true"))
		e.waitPhase(t, wf.Name, wfv1.WorkflowSucceeded)
		// A negative check, so a wait: the stream must stay open after the
		// workflow ended (nothing tells that it did not end); a second is
		// the window.
		time.Sleep(time.Second)
		canceled := time.Now()
		cancel()
		r := <-done
		if r.at.Before(canceled) {
			t.Errorf("WatchEvents: the stream ended before the client left, after %d events: %v", len(r.events), r.err)
		} else if r.err != nil && !errors.Is(r.err, context.Canceled) && status.Code(r.err) != codes.Canceled && !errors.Is(r.err, io.EOF) {
			t.Errorf("WatchEvents: after %d events: %v", len(r.events), r.err)
		}
		for _, ev := range r.events {
			if ev.InvolvedObject.Name == "" || !strings.HasPrefix(ev.InvolvedObject.Name, wf.Name) || ev.Reason == "" {
				t.Errorf("WatchEvents sent an event not about %s: involvedObject %+v reason %q", wf.Name, ev.InvolvedObject, ev.Reason)
			}
		}
		if len(r.events) == 0 {
			t.Logf("WatchEvents sent no Events while %s ran (braid emits none); the stream opened: %v", wf.Name, r.opened)
		}
	})
}

// nodeID is Argo's ID of the node named name in workflow wf.
func nodeID(wf, name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%s-%d", wf, h.Sum32())
}

// logWorkflow runs step a (two lines) then step b (one line). Its name is
// the first logs-<n> under which b's node ID sorts before a's: the steps
// start within the same second (startedAt has second precision), so a
// server that orders steps by ID on a tie sends b's line first.
func logWorkflow() *wfv1.Workflow {
	wf := podWorkflow("", nil)
	for i := 0; ; i++ {
		wf.Name = fmt.Sprintf("logs-%d", i)
		if nodeID(wf.Name, wf.Name+"[1].b") < nodeID(wf.Name, wf.Name+"[0].a") {
			break
		}
	}
	wf.Spec.Templates = []wfv1.Template{
		{Name: "main", Steps: []wfv1.ParallelSteps{
			{Steps: []wfv1.WorkflowStep{{Name: "a", Template: "say-a"}}},
			{Steps: []wfv1.WorkflowStep{{Name: "b", Template: "say-b"}}},
		}},
		container("say-a", "sh", "-c", "echo compat-log-a-1; echo compat-log-a-2"),
		container("say-b", "sh", "-c", "echo compat-log-b"),
	}
	return wf
}

// logStream is either transport's log stream.
type logStream interface {
	Recv() (*workflow.LogEntry, error)
}

// readLogs reads a log stream to its end.
func readLogs(t *testing.T, what string, s logStream) []*workflow.LogEntry {
	t.Helper()
	var out []*workflow.LogEntry
	for {
		le, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: after %d entries: %v", what, len(out), err)
		}
		if le.Content == "" && le.PodName == "" {
			t.Fatalf("%s: an empty entry after %d (an error chunk?)", what, len(out))
		}
		out = append(out, le)
	}
}

// contents are the lines of the entries.
func contents(entries []*workflow.LogEntry) []string {
	var lines []string
	for _, le := range entries {
		lines = append(lines, le.Content)
	}
	return lines
}

var logLines = []string{"compat-log-a-1", "compat-log-a-2", "compat-log-b"}

// TestWorkflowLogs: WorkflowLogs with follow, opened as the workflow
// starts, sends every step's lines in the order they were written, each
// with its pod's name (as Argo names pods: <workflow>-<template>-<hash of
// the node>), and ends when the workflow has; so does a read without
// follow once it has ended; PodLogs of one pod sends only that pod's
// lines.
func TestWorkflowLogs(t *testing.T) {
	eachTransport(t, "wf-logs", func(t *testing.T, e *env) {
		wf := e.create(t, logWorkflow())
		follow := &corev1.PodLogOptions{Container: "main", Follow: true}
		stream, err := e.wf().WorkflowLogs(e.ctx, &workflow.WorkflowLogRequest{Namespace: e.ns, Name: wf.Name, LogOptions: follow})
		if err != nil {
			t.Fatalf("WorkflowLogs: %v", err)
		}
		entries := readLogs(t, "WorkflowLogs", stream)
		if lines := contents(entries); !slices.Equal(lines, logLines) {
			t.Errorf("WorkflowLogs with follow sent %q, want %q", lines, logLines)
		}
		pods := map[string]string{}
		for _, le := range entries {
			if le.PodName == "" {
				t.Errorf("WorkflowLogs: line %q without podName", le.Content)
			}
			pods[le.Content] = le.PodName
		}
		done := e.get(t, wf.Name)
		if done.Status.Phase != wfv1.WorkflowSucceeded {
			t.Errorf("the followed log ended while %s is %q", wf.Name, done.Status.Phase)
		}
		podA, a := pods["compat-log-a-1"], nodeBy(t, done, "a")
		if a.ID != nodeID(wf.Name, wf.Name+"[0].a") {
			t.Errorf("step a's node ID is %s, want Argo's %s", a.ID, nodeID(wf.Name, wf.Name+"[0].a"))
		}
		if want := wf.Name + "-say-a-" + strings.TrimPrefix(a.ID, wf.Name+"-"); podA != want || pods["compat-log-a-2"] != podA {
			t.Errorf("step a's lines come from pods %q and %q, want %q", podA, pods["compat-log-a-2"], want)
		}
		if pods["compat-log-b"] == podA {
			t.Errorf("steps a and b share the pod name %q", podA)
		}

		stream, err = e.wf().WorkflowLogs(e.ctx, &workflow.WorkflowLogRequest{Namespace: e.ns, Name: wf.Name, LogOptions: &corev1.PodLogOptions{Container: "main"}})
		if err != nil {
			t.Fatalf("WorkflowLogs without follow: %v", err)
		}
		if lines := contents(readLogs(t, "WorkflowLogs without follow", stream)); !slices.Equal(lines, logLines) {
			t.Errorf("WorkflowLogs without follow sent %q, want %q", lines, logLines)
		}

		ps, err := e.wf().PodLogs(e.ctx, &workflow.WorkflowLogRequest{Namespace: e.ns, Name: wf.Name, PodName: podA, LogOptions: follow})
		if err != nil {
			t.Fatalf("PodLogs: %v", err)
		}
		entries = readLogs(t, "PodLogs "+podA, ps)
		for _, le := range entries {
			if le.PodName != podA {
				t.Errorf("PodLogs of %s sent a line of %q", podA, le.PodName)
			}
		}
		if lines := contents(entries); !slices.Equal(lines, logLines[:2]) {
			t.Errorf("PodLogs of %s sent %q, want %q", podA, lines, logLines[:2])
		}
	})
}
