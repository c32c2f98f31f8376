package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// A reference to a template that does not exist, submitted to a real
// server, is refused at once with a message that names the missing
// template: over gRPC (the CLI) and over REST (HTTP 400, or 404 for
// submit --from), as argo-server validates a workflow's references when it
// is created. Nothing is stored by the refusals. A template deleted after a
// workflow that refers to it was submitted ends that workflow with the
// same kind of message. The server still runs good workflows afterwards.
func TestTemplateRefBadInput(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	nsOnly := filepath.Join(dir, "ns-only.yaml")
	writeFile(t, nsOnly, `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: ns-only}
spec:
  entrypoint: say
  templates:
  - name: say
    container: {image: busybox, command: [echo, from ns-only]}
`)
	expect(t, nil, 0, "workflowtemplate.argoproj.io/ns-only created", "apply", "--data-dir", home, "-f", nsOnly)
	srv := startBraidServer(t, home)
	env := srv.env()

	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"steps templateRef to a missing WorkflowTemplate", `
metadata: {generateName: bad-steps-ref-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, templateRef: {name: no-such-template, template: say}}
`, `WorkflowTemplate "no-such-template" not found`},
		{"workflowTemplateRef to nothing", `
metadata: {generateName: bad-wft-ref-}
spec:
  workflowTemplateRef: {name: no-such-wftmpl}
`, `WorkflowTemplate "no-such-wftmpl" not found`},
		{"workflowTemplateRef clusterScope to a namespaced template", `
metadata: {generateName: bad-cluster-ref-}
spec:
  workflowTemplateRef: {name: ns-only, clusterScope: true}
`, `ClusterWorkflowTemplate "ns-only" not found`},
		{"dag templateRef clusterScope to a namespaced template", `
metadata: {generateName: bad-dag-cluster-ref-}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, templateRef: {name: ns-only, template: say, clusterScope: true}}
`, `ClusterWorkflowTemplate "ns-only" not found`},
		{"templateRef to a template the WorkflowTemplate lacks", `
metadata: {generateName: bad-inner-ref-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, templateRef: {name: ns-only, template: no-such-inner}}
`, `template "no-such-inner" not found in WorkflowTemplate "ns-only"`},
		{"onExit templateRef to a missing WorkflowTemplate", `
metadata: {generateName: bad-exit-ref-}
spec:
  entrypoint: main
  onExit: bye
  templates:
  - name: main
    container: {image: busybox, command: [echo, hi]}
  - name: bye
    steps:
    - - {name: a, templateRef: {name: no-such-exit, template: say}}
`, `WorkflowTemplate "no-such-exit" not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := "apiVersion: argoproj.io/v1alpha1\nkind: Workflow" + tc.yaml
			file := filepath.Join(t.TempDir(), "wf.yaml")
			writeFile(t, file, doc)
			r := braidCLI(t, env, "submit", file, "-o", "name")
			if r.code == 0 || !strings.Contains(r.err, tc.want) || strings.TrimSpace(r.out) != "" {
				t.Fatalf("submit: exit %d, want a refusal naming %s\nstdout:\n%s\nstderr:\n%s", r.code, tc.want, r.out, r.err)
			}
			code, body := postJSON(t, srv, "/api/v1/workflows/default", map[string]any{"workflow": yamlObject(t, doc)})
			if code != http.StatusBadRequest || !strings.Contains(body, jsonQuoted(tc.want)) {
				t.Fatalf("POST /api/v1/workflows/default: %d %s, want 400 naming %s", code, body, tc.want)
			}
		})
	}

	for _, from := range []struct{ kind, name, want string }{
		{"workflowtemplate", "no-such-wftmpl", `workflowtemplates.argoproj.io "no-such-wftmpl" not found`},
		{"clusterworkflowtemplate", "ns-only", `clusterworkflowtemplates.argoproj.io "ns-only" not found`},
		{"cronwf", "no-such-cron", `cronworkflows.argoproj.io "no-such-cron" not found`},
	} {
		r := braidCLI(t, env, "submit", "--from", from.kind+"/"+from.name)
		if r.code == 0 || !strings.Contains(r.err, from.want) {
			t.Fatalf("submit --from %s/%s: exit %d, want %s\nstdout:\n%s\nstderr:\n%s", from.kind, from.name, r.code, from.want, r.out, r.err)
		}
		code, body := postJSON(t, srv, "/api/v1/workflows/default/submit",
			map[string]any{"namespace": "default", "resourceKind": from.kind, "resourceName": from.name})
		if code != http.StatusNotFound || !strings.Contains(body, jsonQuoted(from.want)) {
			t.Fatalf("POST /api/v1/workflows/default/submit %s/%s: %d %s, want 404 naming it", from.kind, from.name, code, body)
		}
	}

	// A WorkflowTemplate or a CronWorkflow that refers to a missing
	// template is refused too.
	refersMissing := filepath.Join(dir, "refers-missing.yaml")
	writeFile(t, refersMissing, `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: refers-missing}
spec:
  templates:
  - name: main
    steps:
    - - {name: a, templateRef: {name: no-such-template, template: x}}
---
apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: cron-refers-missing}
spec:
  schedules: ["0 0 1 1 *"]
  workflowSpec:
    workflowTemplateRef: {name: no-such-wftmpl}
`)
	r := braidCLI(t, env, "apply", "-f", refersMissing)
	for _, want := range []string{`WorkflowTemplate "no-such-template" not found`, `WorkflowTemplate "no-such-wftmpl" not found`} {
		if r.code != 1 || !strings.Contains(r.err, want) {
			t.Fatalf("apply: exit %d, want 1 and %s\nstdout:\n%s\nstderr:\n%s", r.code, want, r.out, r.err)
		}
	}

	// Nothing was stored.
	expect(t, env, 0, "No workflows found", "list")
	if r := expect(t, env, 0, "ns-only", "template", "list", "-o", "name"); strings.TrimSpace(r.out) != "ns-only" {
		t.Fatalf("template list: want ns-only alone:\n%s", r.out)
	}
	if r := expect(t, env, 0, "", "cluster-template", "list", "-o", "name"); strings.TrimSpace(r.out) != "" {
		t.Fatalf("cluster-template list: want none:\n%s", r.out)
	}
	if r := expect(t, env, 0, "", "cron", "list", "-o", "name"); strings.TrimSpace(r.out) != "" {
		t.Fatalf("cron list: want none:\n%s", r.out)
	}

	t.Run("template deleted after submit", func(t *testing.T) { templateGoesAway(t, dir, env) })

	good := filepath.Join(dir, "good.yaml")
	writeFile(t, good, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: good-ref}
spec:
  workflowTemplateRef: {name: ns-only}
`)
	expect(t, env, 0, "good-ref Succeeded at ", "submit", good, "--wait")
}

// templateGoesAway submits a workflow whose second step refers to a
// WorkflowTemplate and deletes that template while the first step runs:
// the second step ends in Error, and the workflow ends Failed, naming the
// template.
func templateGoesAway(t *testing.T, dir string, env []string) {
	tmpl, wf := filepath.Join(dir, "goes-away.yaml"), filepath.Join(dir, "late-ref.yaml")
	writeFile(t, tmpl, `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: goes-away}
spec:
  templates:
  - name: say
    container: {image: busybox, command: [echo, hi]}
`)
	writeFile(t, wf, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: late-ref}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: first, template: nap}
    - - {name: second, templateRef: {name: goes-away, template: say}}
  - name: nap
    container: {image: busybox, command: [sleep, "2"]}
`)
	expect(t, env, 0, "goes-away created", "apply", "-f", tmpl)
	expect(t, env, 0, "late-ref", "submit", wf, "-o", "name")
	expect(t, env, 0, "deleted", "template", "delete", "goes-away")
	expect(t, env, 1, "late-ref Failed at ", "wait", "late-ref")
	r := expect(t, env, 0, `"name": "late-ref"`, "get", "late-ref", "-o", "json")
	var got struct {
		Status struct {
			Phase, Message string
			Nodes          map[string]struct{ DisplayName, Phase, Message string }
		}
	}
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("get -o json: %v\n%s", err, r.out)
	}
	const want = `WorkflowTemplate "goes-away"`
	if !strings.Contains(got.Status.Message, want) {
		t.Fatalf("workflow message %q does not name %s", got.Status.Message, want)
	}
	phases := map[string]string{}
	for _, n := range got.Status.Nodes {
		phases[n.DisplayName] = n.Phase
		if n.DisplayName == "second" && !strings.Contains(n.Message, want) {
			t.Fatalf("node second: message %q does not name %s", n.Message, want)
		}
	}
	if phases["first"] != "Succeeded" || phases["second"] != "Error" {
		t.Fatalf("node phases %v, want first Succeeded and second Error", phases)
	}
}

// yamlObject is a YAML document as a JSON object.
func yamlObject(t *testing.T, doc string) map[string]any {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// postJSON posts body to the server's REST API, with the local token, and
// returns the status and the answer.
func postJSON(t *testing.T, srv *braidServer, path string, body any) (int, string) {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.post(path, data)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	if _, err := out.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out.String()
}

// jsonQuoted is s as it appears inside a JSON string.
func jsonQuoted(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return strings.Trim(string(b), `"`)
}
