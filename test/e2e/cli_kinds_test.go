package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The commands of the other kinds against a real braid server, over gRPC
// and HTTP/1: template, cluster-template, cron, archive and apply.

const greetTemplateYAML = `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: greet}
spec:
  entrypoint: main
  arguments:
    parameters: [{name: who, value: world}]
  templates:
  - name: main
    container: {image: busybox, command: [sh, -c, "echo hello {{workflow.parameters.who}}"]}
`

const clusterTemplateYAML = `apiVersion: argoproj.io/v1alpha1
kind: ClusterWorkflowTemplate
metadata: {name: cluster-greet}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [echo, from the cluster]}
`

const cronYAML = `apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: yearly}
spec:
  schedules: ["0 0 1 1 *"]
  timezone: Europe/Paris
  workflowSpec:
    entrypoint: main
    templates:
    - name: main
      container: {image: busybox, command: [echo, tick]}
`

// applyYAML holds every kind apply handles, and a ConfigMap it skips.
const applyYAML = `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: app, labels: {suite: apply}}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [echo, MESSAGE]}
---
apiVersion: argoproj.io/v1alpha1
kind: ClusterWorkflowTemplate
metadata: {name: app-cluster}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [echo, cluster]}
---
apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: app-cron}
spec:
  schedule: "0 0 1 1 *"
  workflowSpec:
    workflowTemplateRef: {name: app}
---
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: app-run}
spec:
  workflowTemplateRef: {name: app}
---
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: app-gen-}
spec:
  workflowTemplateRef: {name: app}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
`

func TestCLIKinds(t *testing.T) {
	for _, mode := range cliModes {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			srv := startBraidServer(t, filepath.Join(dir, "home"))
			env := srv.env(mode.env...)
			files := map[string]string{"tmpl.yaml": greetTemplateYAML, "cluster.yaml": clusterTemplateYAML, "cron.yaml": cronYAML}
			for name, data := range files {
				writeFile(t, filepath.Join(dir, name), data)
			}
			t.Run("template", func(t *testing.T) { checkTemplates(t, env, dir) })
			t.Run("cluster-template", func(t *testing.T) { checkClusterTemplates(t, env, dir) })
			t.Run("cron", func(t *testing.T) { checkCron(t, env, dir) })
			t.Run("apply", func(t *testing.T) { checkApply(t, env, dir) })
		})
	}
}

func checkTemplates(t *testing.T, env []string, dir string) {
	file := filepath.Join(dir, "tmpl.yaml")
	r := expect(t, env, 0, "Name:                greet\n", "template", "create", file)
	if !strings.Contains(r.out, "Namespace:           default\n") || !strings.Contains(r.out, "Created:             ") {
		t.Fatalf("template create:\n%s", r.out)
	}
	expect(t, env, 1, "", "template", "create", file) // it exists
	expect(t, env, 0, "NAME\ngreet", "template", "list")
	expect(t, env, 0, "NAMESPACE   NAME\ndefault     greet", "template", "list", "-A")
	if r := expect(t, env, 0, "greet\n", "template", "get", "greet", "-o", "name"); r.out != "greet\n" {
		t.Fatalf("template get -o name: %q", r.out)
	}
	expect(t, env, 0, `"name": "greet"`, "template", "get", "greet", "-o", "json")
	expect(t, env, 0, "✔ no linting errors found!", "template", "lint", file)
	expect(t, env, 0, "greet\n", "template", "update", file, "-o", "name")

	// A workflow from the template runs, and the server archives it.
	r = expect(t, env, 0, " Succeeded at ", "submit", "--from", "workflowtemplate/greet", "-p", "who=e2e", "--wait")
	name := strings.Fields(r.out[strings.Index(r.out, "Name:"):])[1]
	expect(t, env, 0, ": hello e2e", "logs", name)
	checkArchive(t, env, name)

	expect(t, env, 0, "WorkflowTemplate 'greet' deleted", "template", "delete", "greet")
	if r := expect(t, env, 0, "NAME", "template", "list"); strings.Contains(r.out, "greet") {
		t.Fatalf("template list after delete:\n%s", r.out)
	}
	expect(t, env, 1, "", "template", "get", "greet")
}

// checkArchive finds the finished workflow name in the archive, reads it,
// resubmits it and deletes it.
func checkArchive(t *testing.T, env []string, name string) {
	t.Helper()
	waitForOutput(t, env, name, "archive", "list", "-o", "name")
	r := expect(t, env, 0, "UID", "archive", "list")
	if !strings.Contains(r.out, "NAMESPACE") || !strings.Contains(r.out, name) {
		t.Fatalf("archive list:\n%s", r.out)
	}
	r = expect(t, env, 0, name, "archive", "list", "-o", "json")
	var wfs []struct {
		Metadata struct{ Name, UID string }
	}
	if err := json.Unmarshal([]byte(r.out), &wfs); err != nil {
		t.Fatalf("archive list -o json: %v\n%s", err, r.out)
	}
	uid := ""
	for _, wf := range wfs {
		if wf.Metadata.Name == name {
			uid = wf.Metadata.UID
		}
	}
	if uid == "" {
		t.Fatalf("no UID for %s in:\n%s", name, r.out)
	}
	r = expect(t, env, 0, "Status:              Succeeded\n", "archive", "get", uid)
	if !strings.Contains(r.out, "Name:                "+name+"\n") || !strings.Contains(r.out, "Duration:") {
		t.Fatalf("archive get:\n%s", r.out)
	}
	expect(t, env, 0, `"uid":"`+uid+`"`, "archive", "get", name, "-o", "json") // by name, compact
	expect(t, env, 0, "workflows.argoproj.io/phase\n", "archive", "list-label-keys")
	expect(t, env, 0, "Succeeded\n", "archive", "list-label-values", "-l", "workflows.argoproj.io/phase")

	r = expect(t, env, 0, " Succeeded at ", "archive", "resubmit", uid, "--wait")
	if !strings.Contains(r.out, "Name:                "+name+"-") {
		t.Fatalf("archive resubmit should print the new workflow:\n%s", r.out)
	}
	expect(t, env, 0, "Archived workflow '"+uid+"' deleted", "archive", "delete", uid)
	expect(t, env, 1, "", "archive", "get", uid)
}

func checkClusterTemplates(t *testing.T, env []string, dir string) {
	file := filepath.Join(dir, "cluster.yaml")
	r := expect(t, env, 0, "Name:                cluster-greet\n", "cluster-template", "create", file)
	if strings.Contains(r.out, "Namespace:") {
		t.Fatalf("a cluster template has no namespace:\n%s", r.out)
	}
	expect(t, env, 0, "NAME\ncluster-greet", "cluster-template", "list")
	expect(t, env, 0, "cluster-greet\n", "cluster-template", "get", "cluster-greet", "-o", "name")
	expect(t, env, 0, " Succeeded at ", "submit", "--from", "clusterworkflowtemplate/cluster-greet", "--wait")
	expect(t, env, 0, "ClusterWorkflowTemplate 'cluster-greet' deleted", "cluster-template", "delete", "--all")
	if r := expect(t, env, 0, "NAME", "cluster-template", "list"); strings.Contains(r.out, "cluster-greet") {
		t.Fatalf("cluster-template list after delete:\n%s", r.out)
	}
}

func checkCron(t *testing.T, env []string, dir string) {
	file := filepath.Join(dir, "cron.yaml")
	r := expect(t, env, 0, "Name:                          yearly\n", "cron", "create", file, "--schedule", "0 0 1 2 *", "-p", "x=1")
	for _, want := range []string{"Schedules:                     0 0 1 2 *\n", "Suspended:                     false\n",
		"Timezone:                      Europe/Paris\n", "NextScheduledTime:             ", "  x:                           1\n"} {
		if !strings.Contains(r.out, want) {
			t.Fatalf("cron create lacks %q:\n%s", want, r.out)
		}
	}
	r = expect(t, env, 0, "NAME     AGE   LAST RUN   NEXT RUN   SCHEDULES   TIMEZONE       SUSPENDED\n", "cron", "list")
	row := func(out string) []string {
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 1 && (f[0] == "yearly" || f[1] == "yearly") {
				return f
			}
		}
		t.Fatalf("no yearly row in:\n%s", out)
		return nil
	}
	// NAME AGE LAST RUN NEXT RUN SCHEDULES(5 fields) TIMEZONE SUSPENDED
	if f := row(r.out); len(f) != 11 || f[2] != "N/A" || !strings.HasSuffix(f[3], "d") || f[9] != "Europe/Paris" || f[10] != "false" {
		t.Fatalf("cron list row %q", f)
	}
	expect(t, env, 0, "CronWorkflow 'yearly' suspended\n", "cron", "suspend", "yearly")
	if f := row(expect(t, env, 0, "NAMESPACE", "cron", "list", "-A").out); f[len(f)-1] != "true" {
		t.Fatalf("suspended cron list row %q", f)
	}
	expect(t, env, 0, "Suspended:                     true\n", "cron", "get", "yearly")
	// update takes create's flags: the parameter and service account change.
	r = expect(t, env, 0, "", "cron", "update", file, "-p", "x=2", "--serviceaccount", "robot", "-o", "yaml")
	for _, want := range []string{"serviceAccountName: robot", "value: \"2\""} {
		if !strings.Contains(r.out, want) {
			t.Fatalf("cron update -p x=2 --serviceaccount robot lacks %q:\n%s", want, r.out)
		}
	}
	expect(t, env, 0, "CronWorkflow 'yearly' resumed\n", "cron", "resume", "yearly")
	expect(t, env, 0, "suspend: false", "cron", "get", "yearly", "-o", "yaml")
	expect(t, env, 0, "✔ no linting errors found!", "cron", "lint", file)
	if r := expect(t, env, 0, "", "cron", "delete", "yearly"); r.out != "" {
		t.Fatalf("cron delete prints nothing, printed %q", r.out)
	}
	if r := expect(t, env, 0, "NAME", "cron", "list"); strings.Contains(r.out, "yearly") {
		t.Fatalf("cron list after delete:\n%s", r.out)
	}
}

func checkApply(t *testing.T, env []string, dir string) {
	file := filepath.Join(dir, "apply.yaml")
	writeFile(t, file, strings.Replace(applyYAML, "MESSAGE", "first", 1))
	r := expect(t, env, 0, "workflowtemplate.argoproj.io/app created\n", "apply", "-f", file)
	for _, want := range []string{"clusterworkflowtemplate.argoproj.io/app-cluster created\n", "cronworkflow.argoproj.io/app-cron created\n",
		"workflow.argoproj.io/app-run created\n", "workflow.argoproj.io/app-gen-"} {
		if !strings.Contains(r.out, want) {
			t.Fatalf("first apply lacks %q:\n%s", want, r.out)
		}
	}
	if !strings.Contains(r.err, "skipped ConfigMap settings") {
		t.Fatalf("apply should note the skipped ConfigMap:\n%s", r.err)
	}
	expect(t, env, 0, "app-run Succeeded at ", "wait", "app-run")

	r = expect(t, env, 0, "workflowtemplate.argoproj.io/app unchanged\n", "apply", "-f", file)
	for _, want := range []string{"clusterworkflowtemplate.argoproj.io/app-cluster unchanged\n", "cronworkflow.argoproj.io/app-cron unchanged\n",
		"workflow.argoproj.io/app-run unchanged\n", "workflow.argoproj.io/app-gen-"} {
		if !strings.Contains(r.out, want) {
			t.Fatalf("second apply lacks %q:\n%s", want, r.out)
		}
	}
	if strings.Count(r.out, " created\n") != 1 {
		t.Fatalf("only the generateName workflow is created again:\n%s", r.out)
	}

	// A changed template is configured, in a directory given to -f.
	sub := filepath.Join(dir, "changed")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(sub, "apply.yaml"), strings.Replace(applyYAML, "MESSAGE", "second", 1))
	r = expect(t, env, 0, "workflowtemplate.argoproj.io/app configured\n", "apply", "-f", sub)
	if !strings.Contains(r.out, "cronworkflow.argoproj.io/app-cron unchanged\n") {
		t.Fatalf("third apply:\n%s", r.out)
	}
	expect(t, env, 0, "second", "template", "get", "app", "-o", "yaml")
}

const bindingYAML = `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: on-event}
spec:
  entrypoint: main
  arguments:
    parameters: [{name: msg}]
  templates:
  - name: main
    container: {image: busybox, command: [echo, "{{workflow.parameters.msg}}"]}
---
apiVersion: argoproj.io/v1alpha1
kind: WorkflowEventBinding
metadata: {name: on-push}
spec:
  event:
    selector: payload.message != ""
  submit:
    workflowTemplateRef: {name: on-event}
    arguments:
      parameters:
      - name: msg
        valueFrom: {event: payload.message}
`

// apply writes WorkflowEventBindings through braid's binding API, in
// direct mode and through a server alike; a server started on the data
// directory then acts on them.
func TestCLIApplyBindingDirect(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	file := filepath.Join(dir, "binding.yaml")
	writeFile(t, file, bindingYAML)
	env := []string{"BRAID_HOME=" + home}

	r := expect(t, env, 0, "workfloweventbinding.argoproj.io/on-push created\n", "apply", "-f", file)
	if !strings.Contains(r.out, "workflowtemplate.argoproj.io/on-event created\n") {
		t.Fatalf("apply:\n%s", r.out)
	}
	expect(t, env, 0, "workfloweventbinding.argoproj.io/on-push unchanged\n", "apply", "-f", file)
	writeFile(t, file, strings.Replace(bindingYAML, `!= ""`, `== "go"`, 1))
	expect(t, env, 0, "workfloweventbinding.argoproj.io/on-push configured\n", "apply", "-f", file)
	writeFile(t, filepath.Join(dir, "bad.yaml"), strings.Replace(bindingYAML, "workflowTemplateRef: {name: on-event}", "workflowTemplateRef: {name: missing}", 1))
	// A binding to a template that does not exist yet is accepted, as in
	// Argo (the template may come later), with a warning.
	r = expect(t, env, 0, "workfloweventbinding.argoproj.io/on-push configured\n", "apply", "-f", filepath.Join(dir, "bad.yaml"))
	if !strings.Contains(r.err, `WorkflowTemplate "missing" not found`) {
		t.Fatalf("a binding to a missing template should warn:\n%s", r.err)
	}

	srv := startBraidServer(t, home)
	r = expect(t, env, 0, "workfloweventbinding.argoproj.io/on-push configured\n", "apply", "-f", file)
	if !strings.Contains(r.out, "workflowtemplate.argoproj.io/on-event unchanged\n") {
		t.Fatalf("apply of a binding through a server:\n%s", r.out)
	}
	resp, err := srv.post("/api/v1/events/default/push", []byte(`{"message":"go"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("event: %s", resp.Status)
	}
	waitForOutput(t, env, "on-event-", "list", "-o", "name")
}
