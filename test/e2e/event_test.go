package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/testutil"
)

const eventTemplateYAML = `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: deploy}
spec:
  entrypoint: main
  arguments:
    parameters: [{name: version}]
  templates:
  - name: main
    container: {image: busybox, command: [sh, -c, "echo deploying {{workflow.parameters.version}}"]}
`

const eventBindingYAML = `apiVersion: argoproj.io/v1alpha1
kind: WorkflowEventBinding
metadata: {name: on-deploy}
spec:
  event:
    selector: payload.app == "web" && discriminator == "deploy"
  submit:
    workflowTemplateRef: {name: deploy}
    arguments:
      parameters:
      - name: version
        valueFrom: {event: payload.version}
`

// curlPost POSTs body as JSON to the server's path with the real curl,
// which trusts the server's certificate and sends the local token, and
// returns the status code and the response body.
func curlPost(t *testing.T, srv *braidServer, path, body string) (int, string) {
	t.Helper()
	url := srv.url(path)
	out, err := exec.Command("curl", srv.curlArgs("-sS", "-X", "POST", "-H", "Content-Type: application/json",
		"-d", body, "-w", "\n%{http_code}", url)...).Output()
	if err != nil {
		t.Fatalf("curl %s: %v", url, err)
	}
	text := strings.TrimRight(string(out), "\n")
	i := strings.LastIndexByte(text, '\n')
	code, err := strconv.Atoi(text[i+1:])
	if err != nil {
		t.Fatalf("curl %s: no status in %q", url, out)
	}
	return code, text[:max(i, 0)]
}

// eventWorkflow is what the test reads of a workflow over REST.
type eventWorkflow struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Arguments struct {
			Parameters []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"parameters"`
		} `json:"arguments"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// getJSON GETs the server's path with the local token and decodes an
// answer of 200 into v; it returns the status code.
func getJSON(t *testing.T, srv *braidServer, path string, v any) int {
	t.Helper()
	resp, err := srv.get(path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	return resp.StatusCode
}

func listEventWorkflows(t *testing.T, srv *braidServer) []eventWorkflow {
	t.Helper()
	var l struct {
		Items []eventWorkflow `json:"items"`
	}
	if code := getJSON(t, srv, "/api/v1/workflows/default", &l); code != http.StatusOK {
		t.Fatalf("list workflows: %d", code)
	}
	return l.Items
}

// Acceptance: with a real braid server, `braid apply` stores a
// WorkflowTemplate and a WorkflowEventBinding; an event POSTed with curl
// submits a workflow whose parameter is the payload's value, and it
// Succeeds; an event that matches no binding is answered {} and creates
// nothing; a binding whose selector does not compile is refused with a
// message naming it and the selector, and nothing is stored.
func TestEventBindingServer(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed (hack/test-deps.sh installs it): this test posts events with the real curl")
	}
	for _, mode := range cliModes {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			srv := startBraidServer(t, filepath.Join(dir, "home"))
			env := srv.env(mode.env...)
			tmpl, binding := filepath.Join(dir, "template.yaml"), filepath.Join(dir, "binding.yaml")
			writeFile(t, tmpl, eventTemplateYAML)
			writeFile(t, binding, eventBindingYAML)

			expect(t, env, 0, "workflowtemplate.argoproj.io/deploy created\n", "apply", "-f", tmpl)
			r := expect(t, env, 0, "workfloweventbinding.argoproj.io/on-deploy created\n", "apply", "-f", binding)
			if strings.Contains(r.err, "warning") {
				t.Errorf("apply warned about a template that exists:\n%s", r.err)
			}
			expect(t, env, 0, "workfloweventbinding.argoproj.io/on-deploy unchanged\n", "apply", "-f", binding)
			writeFile(t, binding, strings.Replace(eventBindingYAML, `"deploy"`, `"release"`, 1))
			expect(t, env, 0, "workfloweventbinding.argoproj.io/on-deploy configured\n", "apply", "-f", binding)
			writeFile(t, binding, eventBindingYAML)
			expect(t, env, 0, "workfloweventbinding.argoproj.io/on-deploy configured\n", "apply", "-f", binding)

			events := "/api/v1/events/default/"
			// No match: another app, then the right app under another discriminator.
			for _, ev := range []struct{ disc, body string }{{"deploy", `{"app":"api","version":"v0"}`}, {"release", `{"app":"web","version":"v0"}`}} {
				if code, body := curlPost(t, srv, events+ev.disc, ev.body); code != 200 || body != "{}" {
					t.Fatalf("unmatched event: %d %s", code, body)
				}
			}
			if wfs := listEventWorkflows(t, srv); len(wfs) != 0 {
				t.Fatalf("unmatched events created %d workflows", len(wfs))
			}

			if code, body := curlPost(t, srv, events+"deploy", `{"app":"web","version":"v1.2.3"}`); code != 200 || body != "{}" {
				t.Fatalf("event: %d %s", code, body)
			}
			wfs := listEventWorkflows(t, srv)
			if len(wfs) != 1 || wfs[0].Metadata.Labels["workflows.argoproj.io/workflow-event-binding"] != "on-deploy" {
				t.Fatalf("after the event: %+v", wfs)
			}
			name := wfs[0].Metadata.Name
			if p := wfs[0].Spec.Arguments.Parameters; len(p) != 1 || p[0].Name != "version" || p[0].Value != "v1.2.3" {
				t.Errorf("parameters %+v, want version=v1.2.3", p)
			}
			waitEventPhase(t, srv, name, "Succeeded")
			waitForOutput(t, env, "deploying v1.2.3", "logs", name)

			bad := filepath.Join(dir, "bad.yaml")
			writeFile(t, bad, strings.NewReplacer("on-deploy", "broken", `payload.app == "web" && discriminator == "deploy"`, `payload.app ==`).Replace(eventBindingYAML))
			r = expect(t, env, 1, "", "apply", "-f", bad)
			for _, want := range []string{"broken", "spec.event.selector", "payload.app =="} {
				if !strings.Contains(r.err, want) {
					t.Errorf("apply of a bad selector: stderr lacks %q:\n%s", want, r.err)
				}
			}
			var b any
			if code := getJSON(t, srv, "/api/v1/workflow-event-bindings/default/broken", &b); code != http.StatusNotFound {
				t.Errorf("the refused binding: GET answered %d, want 404", code)
			}
		})
	}
}

func waitEventPhase(t *testing.T, srv *braidServer, name, phase string) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, name+" "+phase, func() error {
		var wf eventWorkflow
		getJSON(t, srv, "/api/v1/workflows/default/"+name, &wf)
		if wf.Status.Phase != phase {
			return fmt.Errorf("phase %q", wf.Status.Phase)
		}
		return nil
	})
}
