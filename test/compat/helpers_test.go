package compat

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-workflows/v4/pkg/apiclient"
	clusterpkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/clusterworkflowtemplate"
	cronpkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/cronworkflow"
	infopkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/info"
	syncpkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/sync"
	"github.com/argoproj/argo-workflows/v4/pkg/apiclient/workflow"
	archivepkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/workflowarchive"
	templatepkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/workflowtemplate"
	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Labels braid (as Argo) sets on workflows.
const (
	labelResubmitted  = "workflows.argoproj.io/resubmitted-from-workflow"
	labelFromTemplate = "workflows.argoproj.io/workflow-template"
	labelFromCron     = "workflows.argoproj.io/cron-workflow"
	labelFromBinding  = "workflows.argoproj.io/workflow-event-binding"
)

// testTimeout bounds each transport's subtest; waits for a phase give up
// sooner (waitTimeout).
const (
	testTimeout = 90 * time.Second
	waitTimeout = 45 * time.Second
)

// env is one transport's view of the shared server for one test: Argo's
// client over gRPC or over HTTP/1, and a namespace of the subtest's own.
type env struct {
	s     *server
	http1 bool
	name  string // "grpc" or "http1"
	ns    string
	ctx   context.Context
	c     apiclient.Client
}

// eachTransport runs f in parallel subtests "grpc" and "http1" on the shared
// server, each in namespace <ns>-<transport>. The test itself runs in
// parallel with the others.
func eachTransport(t *testing.T, ns string, f func(t *testing.T, e *env)) {
	t.Helper()
	t.Parallel()
	s := sharedServer(t)
	for _, http1 := range []bool{false, true} {
		name := "grpc"
		if http1 {
			name = "http1"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, newEnv(t, s, http1, ns+"-"+name))
		})
	}
}

func newEnv(t *testing.T, s *server, http1 bool, ns string) *env {
	t.Helper()
	ctx, c := s.client(t, http1)
	ctx, cancel := context.WithTimeout(ctx, testTimeout)
	t.Cleanup(cancel)
	name := "grpc"
	if http1 {
		name = "http1"
	}
	return &env{s: s, http1: http1, name: name, ns: ns, ctx: ctx, c: c}
}

func (e *env) wf() workflow.WorkflowServiceClient { return e.c.NewWorkflowServiceClient(e.ctx) }

func (e *env) wt(t *testing.T) templatepkg.WorkflowTemplateServiceClient {
	c, err := e.c.NewWorkflowTemplateServiceClient()
	must(t, err)
	return c
}

func (e *env) cwt(t *testing.T) clusterpkg.ClusterWorkflowTemplateServiceClient {
	c, err := e.c.NewClusterWorkflowTemplateServiceClient()
	must(t, err)
	return c
}

func (e *env) cron(t *testing.T) cronpkg.CronWorkflowServiceClient {
	c, err := e.c.NewCronWorkflowServiceClient()
	must(t, err)
	return c
}

func (e *env) archive(t *testing.T) archivepkg.ArchivedWorkflowServiceClient {
	c, err := e.c.NewArchivedWorkflowServiceClient()
	must(t, err)
	return c
}

func (e *env) info(t *testing.T) infopkg.InfoServiceClient {
	c, err := e.c.NewInfoServiceClient()
	must(t, err)
	return c
}

func (e *env) sync(t *testing.T) syncpkg.SyncServiceClient {
	c, err := e.c.NewSyncServiceClient(e.ctx)
	must(t, err)
	return c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// container is a template running command on the host (braid ignores the
// image).
func container(name string, command ...string) wfv1.Template {
	return wfv1.Template{Name: name, Container: &corev1.Container{Image: "busybox", Command: command}}
}

// podWorkflow is a workflow of one container step running command.
func podWorkflow(generateName string, labels map[string]string, command ...string) *wfv1.Workflow {
	return &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{GenerateName: generateName, Labels: labels},
		Spec:       wfv1.WorkflowSpec{Entrypoint: "main", Templates: []wfv1.Template{container("main", command...)}},
	}
}

// suspended is wf with spec.suspend set: nothing of it runs.
func suspended(wf *wfv1.Workflow) *wfv1.Workflow {
	t := true
	wf.Spec.Suspend = &t
	return wf
}

// create creates wf in e's namespace and returns what the server answered.
func (e *env) create(t *testing.T, wf *wfv1.Workflow) *wfv1.Workflow {
	t.Helper()
	got, err := e.wf().CreateWorkflow(e.ctx, &workflow.WorkflowCreateRequest{Namespace: e.ns, Workflow: wf})
	if err != nil {
		t.Fatalf("create workflow %s%s: %v", wf.Name, wf.GenerateName, err)
	}
	if got.Name == "" || got.Namespace != e.ns {
		t.Fatalf("create workflow: answered name %q in namespace %q", got.Name, got.Namespace)
	}
	return got
}

func (e *env) get(t *testing.T, name string) *wfv1.Workflow {
	t.Helper()
	wf, err := e.wf().GetWorkflow(e.ctx, &workflow.WorkflowGetRequest{Namespace: e.ns, Name: name})
	if err != nil {
		t.Fatalf("get workflow %s: %v", name, err)
	}
	return wf
}

// waitFor polls workflow name until ok holds; what names the condition in
// the failure. An error other than NotFound ends the test at once.
func (e *env) waitFor(t *testing.T, name, what string, ok func(*wfv1.Workflow) bool) *wfv1.Workflow {
	t.Helper()
	var last *wfv1.Workflow
	err := poll(waitTimeout, func() error {
		wf, err := e.wf().GetWorkflow(e.ctx, &workflow.WorkflowGetRequest{Namespace: e.ns, Name: name})
		switch {
		case err == nil:
			last = wf
			if ok(wf) {
				return nil
			}
		case status.Code(err) != codes.NotFound:
			t.Fatalf("waiting for %s to be %s: get: %v", name, what, err)
		}
		if e.ctx.Err() != nil {
			return e.ctx.Err()
		}
		return errNotYet
	})
	if err == nil {
		return last
	}
	if last == nil {
		t.Fatalf("workflow %s never found while waiting for it to be %s", name, what)
	}
	t.Fatalf("workflow %s is %q (%q), not %s: %v", name, last.Status.Phase, last.Status.Message, what, err)
	return nil
}

// waitPhase waits until workflow name is in phase and returns it.
func (e *env) waitPhase(t *testing.T, name string, phase wfv1.WorkflowPhase) *wfv1.Workflow {
	t.Helper()
	return e.waitFor(t, name, string(phase), func(wf *wfv1.Workflow) bool {
		if wf.Status.Phase.Completed() && wf.Status.Phase != phase {
			t.Fatalf("workflow %s ended %s (%q), want %s", name, wf.Status.Phase, wf.Status.Message, phase)
		}
		return wf.Status.Phase == phase
	})
}

// waitRunningPod waits until workflow name has a Pod node in Running.
func (e *env) waitRunningPod(t *testing.T, name string) *wfv1.Workflow {
	t.Helper()
	return e.waitFor(t, name, "running a pod", func(wf *wfv1.Workflow) bool {
		for _, n := range wf.Status.Nodes {
			if n.Type == wfv1.NodeTypePod && n.Phase == wfv1.NodeRunning {
				return true
			}
		}
		return false
	})
}

// nodeBy returns the node of wf whose displayName is name.
func nodeBy(t *testing.T, wf *wfv1.Workflow, displayName string) wfv1.NodeStatus {
	t.Helper()
	for _, n := range wf.Status.Nodes {
		if n.DisplayName == displayName {
			return n
		}
	}
	t.Fatalf("workflow %s has no node %q (%d nodes)", wf.Name, displayName, len(wf.Status.Nodes))
	return wfv1.NodeStatus{}
}

// wantCode fails unless err is a gRPC status of code whose message
// contains each of parts.
func wantCode(t *testing.T, what string, err error, code codes.Code, parts ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %s", what, code)
		return
	}
	st, _ := status.FromError(err)
	if st.Code() != code {
		t.Errorf("%s: %v, want code %s", what, err, code)
		return
	}
	if st.Message() == "" {
		t.Errorf("%s: code %s with an empty message", what, code)
	}
	for _, p := range parts {
		if !strings.Contains(st.Message(), p) {
			t.Errorf("%s: message %q lacks %q", what, st.Message(), p)
		}
	}
}

// codeOf is err's gRPC code (OK for nil).
func codeOf(err error) codes.Code { return status.Code(err) }

// rest sends a JSON request to the server's REST API with the token and
// decodes a 200 answer into out (when not nil). Other answers are returned
// as an error carrying the status and body.
func (s *server) rest(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, "https://"+s.addr+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(data))
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// names returns the names of the workflows.
func names(items wfv1.Workflows) []string {
	out := make([]string, len(items))
	for i, wf := range items {
		out[i] = wf.Name
	}
	return out
}
