package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	apiclient "github.com/braidwf/braid/pkg/apiclient/client"
	wfapi "github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	"github.com/braidwf/braid/pkg/wirecodec"
)

// bigGet is G1: GetWorkflow of one finished workflow of about nodes nodes
// (a fan-out of `true` steps, as W7 runs) through pkg/apiclient/client,
// over gRPC (Argo's wire format) and over REST (JSON), runs times each,
// the two taking turns. A GET is timed from the call to the typed
// *v1alpha1.Workflow in hand. It reports, per transport, the median time,
// the size of the answer and the server's CPU time per GET, and the ratio
// of the medians.
type bigGet struct {
	nodes int
	runs  int
	plain bool // the server without TLS or client auth
	// restOnly measures REST alone: for a server (an older build) whose
	// gRPC does not speak Argo's wire format.
	restOnly bool
}

// bigGetResult is one transport's measurement.
type bigGetResult struct {
	http1    bool
	median   time.Duration
	bytes    int64         // the answer's size: the protobuf message, or the JSON body
	proto    string        // REST: the HTTP version the client spoke
	cpuPerOp time.Duration // the server's CPU time per GET
	nodes    int
	skipped  bool // not measured (restOnly)
}

// runG1 runs G1 and prints a line per transport and their ratio.
func runG1(bin, dir string, w bigGet) error {
	res, built, err := w.run(bin, dir)
	if err != nil {
		return fmt.Errorf("G1: %w", err)
	}
	fmt.Printf("\nG1 (GetWorkflow of one workflow of %d nodes through the Go client, %s; the workflow ran in %s; median of %d):\n",
		res[1].nodes, serverKind(w.plain), built.Round(time.Millisecond), w.runs)
	for _, r := range res {
		if r.skipped {
			continue
		}
		how := "protobuf"
		if r.http1 {
			how = "JSON over " + r.proto
		}
		fmt.Printf("  over %-4s  %s, answer %.2f MB (%s), server CPU %s per GET\n",
			transportName(r.http1), r.median.Round(100*time.Microsecond), float64(r.bytes)/1e6, how, r.cpuPerOp.Round(time.Millisecond))
	}
	if !w.restOnly {
		fmt.Printf("  REST / gRPC: %.2f\n", float64(res[1].median)/float64(res[0].median))
	}
	return nil
}

func (w bigGet) run(bin, dir string) ([]bigGetResult, time.Duration, error) {
	home := filepath.Join(dir, "home-g1")
	defer os.RemoveAll(home)
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, 0, err
	}
	limits := fmt.Sprintf("limits: {maxNodes: %d}\n", 2*w.nodes+10)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(limits), 0o600); err != nil {
		return nil, 0, err
	}
	srv, err := startServer(bin, home, filepath.Join(dir, "g1-server.log"), w.plain)
	if err != nil {
		return nil, 0, err
	}
	defer srv.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	rest, err := srv.dial(true)
	if err != nil {
		return nil, 0, err
	}
	defer rest.Close()
	setup := srv.client
	if w.restOnly {
		setup = rest.Workflow
	}
	if err := waitReady(ctx, setup); err != nil {
		return nil, 0, err
	}
	start := time.Now()
	// The steps node and its one group node are nodes too.
	wf := fanOut("g1", max(w.nodes-2, 1))
	if _, err := setup.CreateWorkflow(ctx, &wfapi.WorkflowCreateRequest{Namespace: "default", Workflow: wf}); err != nil {
		return nil, 0, fmt.Errorf("create: %w", err)
	}
	if err := waitCompleted(ctx, setup, 1); err != nil {
		return nil, 0, err
	}
	built := time.Since(start)
	if err := waitIdle(ctx, srv.pid()); err != nil {
		return nil, 0, err
	}
	res, err := w.measure(ctx, srv, [2]*apiclient.Client{srv.conn, rest})
	return res, built, err
}

// measure GETs the workflow through each client (gRPC, then REST) once to
// warm up and check the answers, then runs times each, taking turns.
func (w bigGet) measure(ctx context.Context, srv *benchServer, clients [2]*apiclient.Client) ([]bigGetResult, error) {
	req := &wfapi.WorkflowGetRequest{Namespace: "default", Name: "g1"}
	res := []bigGetResult{{http1: false, skipped: w.restOnly}, {http1: true}}
	var answers [2]*v1alpha1.Workflow
	for i, c := range clients {
		if res[i].skipped {
			continue
		}
		wf, err := c.Workflow.GetWorkflow(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("GET over %s: %w", transportName(res[i].http1), err)
		}
		answers[i], res[i].nodes = wf, len(wf.Status.Nodes)
	}
	if !w.restOnly {
		if err := sameAnswer(answers[0], answers[1]); err != nil {
			return nil, err
		}
		size, err := wirecodec.Size(answers[0])
		if err != nil {
			return nil, err
		}
		res[0].bytes = int64(size)
	}
	var err error
	if res[1].bytes, res[1].proto, err = restBodySize(ctx, srv); err != nil {
		return nil, err
	}
	took := [2][]time.Duration{}
	var cpu [2]time.Duration
	pid := srv.pid()
	for run := range max(w.runs, 1) {
		for k := range 2 {
			i := (run + k) % 2 // alternate which goes first
			if res[i].skipped {
				continue
			}
			c0, t0 := cpuTime(pid), time.Now()
			if _, err := clients[i].Workflow.GetWorkflow(ctx, req); err != nil {
				return nil, fmt.Errorf("GET over %s: %w", transportName(res[i].http1), err)
			}
			took[i] = append(took[i], time.Since(t0))
			cpu[i] += cpuTime(pid) - c0
		}
	}
	for i := range res {
		if res[i].skipped {
			continue
		}
		res[i].median = median(took[i])
		res[i].cpuPerOp = cpu[i] / time.Duration(len(took[i]))
	}
	return res, nil
}

// sameAnswer fails when the two transports' workflows differ as JSON
// (apiVersion and kind aside: they are not on the protobuf wire).
func sameAnswer(viaGRPC, viaREST *v1alpha1.Workflow) error {
	a, b := viaGRPC.DeepCopy(), viaREST.DeepCopy()
	a.TypeMeta = b.TypeMeta
	ja, err := json.Marshal(a)
	if err != nil {
		return err
	}
	jb, err := json.Marshal(b)
	if err != nil {
		return err
	}
	if string(ja) != string(jb) {
		return fmt.Errorf("the workflow read over gRPC (%d nodes, %d B of JSON) differs from the one read over REST (%d nodes, %d B)",
			len(a.Status.Nodes), len(ja), len(b.Status.Nodes), len(jb))
	}
	return nil
}

// restBodySize is the size of the workflow's REST answer and the HTTP
// version it came over.
func restBodySize(ctx context.Context, srv *benchServer) (int64, string, error) {
	resp, err := srv.conn.Get(ctx, "/api/v1/workflows/default/g1")
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
		return 0, "", fmt.Errorf("GET the workflow: %s: %s", resp.Status, b)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	return n, resp.Proto, err
}
