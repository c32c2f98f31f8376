package kube

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apiv1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/raw"
	"github.com/braidwf/braid/internal/executor/emissary"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// resourceEnv is a namespace whose default ServiceAccount may do anything
// to ConfigMaps, and a runtime with the rest config.
type resourceEnv struct {
	c   kubernetes.Interface
	ns  string
	rc  *rest.Config
	rt  *Runtime
	col *collector
}

func newResourceEnv(t *testing.T) *resourceEnv {
	t.Helper()
	c, ca := kubeClient(t)
	rc, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	ns := testNamespace(t, c, ca)
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}}}}
	if _, err := c.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "cm"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "cm"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default", Namespace: ns}}}
	if _, err := c.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e := &resourceEnv{c: c, ns: ns, rc: rc}
	e.rt = e.runtime(t)
	e.col = collect(e.rt)
	return e
}

func (e *resourceEnv) runtime(t *testing.T) *Runtime {
	rt, err := New(Config{Client: e.c, Rest: e.rc, Namespace: e.ns, Artifacts: &artifact.Drivers{Raw: raw.New()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// run starts tmpl as run name and returns its final event.
func (e *resourceEnv) run(t *testing.T, name, tmpl string) runtime.StepEvent {
	t.Helper()
	run := e.start(t, name, tmpl)
	return e.final(t, run.ID, 30*time.Second)
}

func (e *resourceEnv) start(t *testing.T, name, tmpl string) runtime.Run {
	t.Helper()
	run := newRun(t, e.ns, name, tmpl)
	run.WorkflowUID = "0b7c4a52-6f1e-4c1a-9d8e-000000000001"
	if err := e.rt.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	return run
}

func (e *resourceEnv) final(t *testing.T, runID string, d time.Duration) runtime.StepEvent {
	t.Helper()
	var last runtime.StepEvent
	testutil.Eventually(t, d, "run "+runID+": a final event", func() error {
		e.col.mu.Lock()
		evs := e.col.evs[runID]
		e.col.mu.Unlock()
		n := len(evs)
		if n == 0 || !evs[n-1].Phase.Completed() {
			return fmt.Errorf("events %+v", evs)
		}
		if evs[0].Phase != v1alpha1.NodeRunning {
			t.Errorf("run %s: first event %s, want Running", runID, evs[0].Phase)
		}
		last = evs[n-1]
		return nil
	})
	return last
}

// created waits until the run has created its ConfigMap name.
func (e *resourceEnv) created(t *testing.T, name string) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, "configmap "+name+" created", func() error {
		_, err := e.c.CoreV1().ConfigMaps(e.ns).Get(context.Background(), name, metav1.GetOptions{})
		return err
	})
}

func (e *resourceEnv) configMap(t *testing.T, name string) *apiv1.ConfigMap {
	t.Helper()
	cm, err := e.c.CoreV1().ConfigMaps(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("configmap %s: %v", name, err)
	}
	return cm
}

func param(ev runtime.StepEvent, name string) string {
	if ev.Outputs == nil {
		return "<no outputs>"
	}
	for _, p := range ev.Outputs.Parameters {
		if p.Name == name && p.Value != nil {
			return p.Value.String()
		}
	}
	return "<missing>"
}

func TestKubeResourceActions(t *testing.T) {
	e := newResourceEnv(t)
	ok := v1alpha1.NodeSucceeded

	// create, with the run's label and an ownerReference to the Workflow
	ev := e.run(t, "create1", `
resource:
  action: create
  setOwnerReference: true
  manifest: |
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: cm1}
    data: {a: "1"}`)
	if ev.Phase != ok {
		t.Fatalf("create: %s %q", ev.Phase, ev.Message)
	}
	cm := e.configMap(t, "cm1")
	if cm.Labels[LabelRunID] != runLabel("uid-"+e.ns+"-create1") || len(cm.OwnerReferences) != 1 ||
		cm.OwnerReferences[0].Kind != "Workflow" || cm.OwnerReferences[0].Name != "wf" {
		t.Errorf("cm1 labels %v owners %+v", cm.Labels, cm.OwnerReferences)
	}
	// after a restart the same run starts again: its object is taken as created
	rt2 := e.runtime(t)
	col2 := collect(rt2)
	again := newRun(t, e.ns, "create1", `
resource:
  action: create
  manifest: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm1"}}'`)
	if err := rt2.Start(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	if evs := col2.wait(t, again.ID, ok, 30*time.Second); len(evs) != 2 {
		t.Errorf("restarted create: events %+v", evs)
	}
	// another run creating the same name fails
	ev = e.run(t, "create2", `
resource:
  action: create
  manifest: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm1"}}'`)
	if ev.Phase != v1alpha1.NodeFailed || !strings.Contains(ev.Message, "already exists") {
		t.Errorf("second create: %s %q", ev.Phase, ev.Message)
	}

	steps := []struct {
		name, tmpl string
		check      func(t *testing.T, ev runtime.StepEvent)
	}{
		{"apply", `
resource:
  action: apply
  manifest: |
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: cm2}
    data: {a: "1"}`, func(t *testing.T, _ runtime.StepEvent) {
			if d := e.configMap(t, "cm2").Data; d["a"] != "1" {
				t.Errorf("cm2 data %v", d)
			}
		}},
		{"apply-again", `
resource:
  action: apply
  manifest: |
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: cm2}
    data: {a: "2"}`, func(t *testing.T, _ runtime.StepEvent) {
			if d := e.configMap(t, "cm2").Data; d["a"] != "2" {
				t.Errorf("cm2 data %v", d)
			}
		}},
		{"patch-merge", `
resource:
  action: patch
  mergeStrategy: merge
  manifest: |
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: cm2}
    data: {b: "3"}`, func(t *testing.T, _ runtime.StepEvent) {
			if d := e.configMap(t, "cm2").Data; d["a"] != "2" || d["b"] != "3" {
				t.Errorf("cm2 data %v", d)
			}
		}},
		{"patch-strategic", `
resource:
  action: patch
  manifest: |
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: cm2, labels: {x: "y"}}`, func(t *testing.T, _ runtime.StepEvent) {
			if l := e.configMap(t, "cm2").Labels; l["x"] != "y" {
				t.Errorf("cm2 labels %v", l)
			}
		}},
		{"patch-json", `
resource:
  action: patch
  mergeStrategy: json
  flags: [configmap, cm2]
  manifest: |
    - op: add
      path: /data/c
      value: "4"`, func(t *testing.T, _ runtime.StepEvent) {
			if d := e.configMap(t, "cm2").Data; d["c"] != "4" || d["a"] != "2" {
				t.Errorf("cm2 data %v", d)
			}
		}},
		{"patch-json-shortname", `
resource:
  action: patch
  mergeStrategy: json
  flags: [cm/cm2]
  manifest: '[{"op": "remove", "path": "/data/b"}]'`, func(t *testing.T, _ runtime.StepEvent) {
			if d := e.configMap(t, "cm2").Data; d["b"] != "" || d["c"] != "4" {
				t.Errorf("cm2 data %v", d)
			}
		}},
		{"get", `
resource:
  action: get
  manifest: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm2"}}'
outputs:
  parameters:
  - {name: a, valueFrom: {jsonPath: "{.data.a}"}}
  - {name: name, valueFrom: {jsonPath: ".metadata.name"}}
  - {name: missing, valueFrom: {jsonPath: "{.data.zzz}"}}
  - {name: bad, valueFrom: {jsonPath: "{.data[", default: dflt}}`, func(t *testing.T, ev runtime.StepEvent) {
			for name, want := range map[string]string{"a": "2", "name": "cm2", "missing": "", "bad": "dflt"} {
				if got := param(ev, name); got != want {
					t.Errorf("output %s = %q, want %q", name, got, want)
				}
			}
		}},
		{"delete", `
resource:
  action: delete
  manifest: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm2"}}'`, func(t *testing.T, _ runtime.StepEvent) {
			_, err := e.c.CoreV1().ConfigMaps(e.ns).Get(context.Background(), "cm2", metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("cm2 after delete: %v", err)
			}
		}},
		{"delete-missing", `
resource:
  action: delete
  manifest: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm2"}}'`, nil},
		{"replace", `
resource:
  action: replace
  manifest: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm1"}, "data": {"r": "1"}}'`,
			func(t *testing.T, _ runtime.StepEvent) {
				if d := e.configMap(t, "cm1").Data; d["r"] != "1" || d["a"] != "" {
					t.Errorf("cm1 data %v", d)
				}
			}},
		{"manifest-from-artifact", `
inputs:
  artifacts:
  - name: m
    raw: {data: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm5"}}'}
resource:
  action: create
  manifestFrom: {artifact: {name: m}}`, func(t *testing.T, _ runtime.StepEvent) { e.configMap(t, "cm5") }},
	}
	for _, s := range steps {
		ev := e.run(t, s.name, s.tmpl)
		if ev.Phase != ok {
			t.Errorf("%s: %s %q", s.name, ev.Phase, ev.Message)
			continue
		}
		if s.check != nil {
			t.Run(s.name, func(t *testing.T) { s.check(t, ev) })
		}
	}
}

func TestKubeResourceFailures(t *testing.T) {
	e := newResourceEnv(t)
	ctx := context.Background()
	if _, err := e.c.CoreV1().ServiceAccounts(e.ns).Create(ctx, &apiv1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nobody"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tmpl string
		phase      v1alpha1.NodePhase
		msg        []string
	}{
		{"rbac-denied", `
serviceAccountName: nobody
resource:
  action: create
  manifest: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "denied"}}'`,
			v1alpha1.NodeFailed, []string{`serviceaccounts "nobody"`, "cannot create configmaps", "forbidden"}},
		{"no-kind", `
resource:
  action: create
  manifest: '{"apiVersion": "example.com/v1", "kind": "Nothing", "metadata": {"name": "x"}}'`,
			v1alpha1.NodeFailed, []string{"no kind Nothing in example.com/v1"}},
		{"get-missing", `
resource:
  action: get
  manifest: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "none"}}'`,
			v1alpha1.NodeFailed, []string{`get configmaps "none"`, "not found"}},
		{"json-not-list", `
resource:
  action: patch
  mergeStrategy: json
  flags: [configmap, x]
  manifest: '{"a": 1}'`, v1alpha1.NodeFailed, []string{"needs a JSON patch"}},
		{"bad-action", `
resource:
  action: frob
  manifest: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}'`, v1alpha1.NodeFailed, []string{`action "frob"`}},
		{"jq", `
resource:
  action: get
  manifest: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}'
outputs:
  parameters:
  - {name: j, valueFrom: {jqFilter: ".["}}`, v1alpha1.NodeFailed, []string{`output parameter "j": jqFilter`}},
		{"bad-condition", `
resource:
  action: get
  successCondition: "a >= 1"
  manifest: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}'`, v1alpha1.NodeFailed, []string{"successCondition"}},
		{"two-docs", `
resource:
  action: create
  manifest: |
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    ---
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y"}}`, v1alpha1.NodeFailed, []string{"more than one document"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			ev := e.run(t, tt.name, tt.tmpl)
			t.Logf("%s: %s", ev.Phase, ev.Message)
			if ev.Phase != tt.phase {
				t.Errorf("phase %s, want %s (%q)", ev.Phase, tt.phase, ev.Message)
			}
			for _, m := range tt.msg {
				if !strings.Contains(ev.Message, m) {
					t.Errorf("message %q does not say %q", ev.Message, m)
				}
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestKubeResourceConditions(t *testing.T) {
	e := newResourceEnv(t)
	ctx := context.Background()
	const tmpl = `
resource:
  action: create
  successCondition: data.state == done
  failureCondition: data.state in (failed, broken)
  manifest: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "NAME"}, "data": {"state": "pending"}}'
outputs:
  parameters:
  - {name: state, valueFrom: {jsonPath: "{.data.state}"}}`
	tests := []struct {
		name, state string
		phase       v1alpha1.NodePhase
	}{
		{"succeeds", "done", v1alpha1.NodeSucceeded},
		{"fails", "broken", v1alpha1.NodeFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := e.start(t, tt.name, strings.ReplaceAll(tmpl, "NAME", tt.name))
			e.created(t, tt.name) // a wait that ended on "pending" shows in the final event
			if ev, _, _ := e.rt.Status(ctx, run.ID); ev.Phase != v1alpha1.NodeRunning {
				t.Fatalf("before the change: %s %q", ev.Phase, ev.Message)
			}
			cm := e.configMap(t, tt.name)
			cm.Data["state"] = tt.state
			changed := time.Now()
			if _, err := e.c.CoreV1().ConfigMaps(e.ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			ev := e.final(t, run.ID, 10*time.Second)
			if ev.Phase != tt.phase {
				t.Errorf("phase %s, want %s (%q)", ev.Phase, tt.phase, ev.Message)
			}
			if tt.phase == v1alpha1.NodeSucceeded && param(ev, "state") != "done" {
				t.Errorf("output state %q", param(ev, "state"))
			}
			if tt.phase == v1alpha1.NodeFailed && !strings.Contains(ev.Message, "failure condition") {
				t.Errorf("message %q", ev.Message)
			}
			if d := time.Since(changed); d > 2*time.Second {
				t.Errorf("noticed after %v", d)
			}
			if st, _, _ := e.rt.Status(ctx, run.ID); st.Phase != tt.phase {
				t.Errorf("Status %s", st.Phase)
			}
		})
	}
	t.Run("kill", func(t *testing.T) {
		run := e.start(t, "killed", strings.ReplaceAll(tmpl, "NAME", "killed"))
		e.created(t, "killed")
		if err := e.rt.Kill(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		if ev := e.final(t, run.ID, 5*time.Second); ev.Phase != v1alpha1.NodeFailed || ev.Message != MsgKilled {
			t.Errorf("killed: %s %q", ev.Phase, ev.Message)
		}
		e.configMap(t, "killed") // the object stays
	})
	t.Run("deadline", func(t *testing.T) {
		run := newRun(t, e.ns, "late", strings.ReplaceAll(tmpl, "NAME", "late"))
		run.ActiveDeadline = time.Second
		if err := e.rt.Start(ctx, run); err != nil {
			t.Fatal(err)
		}
		if ev := e.final(t, run.ID, 10*time.Second); ev.Phase != v1alpha1.NodeFailed || ev.Message != emissary.MsgActiveDeadline {
			t.Errorf("deadline: %s %q", ev.Phase, ev.Message)
		}
	})
	t.Run("deleted-while-waiting", func(t *testing.T) {
		run := e.start(t, "gone", strings.ReplaceAll(tmpl, "NAME", "gone"))
		e.created(t, "gone") // deleted before or after the wait starts: both say so
		if err := e.c.CoreV1().ConfigMaps(e.ns).Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if ev := e.final(t, run.ID, 10*time.Second); ev.Phase != v1alpha1.NodeFailed || !strings.Contains(ev.Message, "deleted") {
			t.Errorf("deleted: %s %q", ev.Phase, ev.Message)
		}
	})
}

// Without a rest config a resource run ends Error at once; no cluster needed.
func TestResourceNoRestConfig(t *testing.T) {
	rt, err := New(Config{Client: fake.NewClientset()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	run := runtime.Run{ID: "r1", Namespace: "ns", Launch: step.Launch{Template: mustTemplate(t, `
resource: {action: get, manifest: "{}"}`)}}
	if err := rt.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	var got []runtime.StepEvent
	for ev := range rt.Events() {
		got = append(got, ev)
		if ev.Phase.Completed() {
			break
		}
	}
	if len(got) != 2 || got[0].Phase != v1alpha1.NodeRunning || got[1].Phase != v1alpha1.NodeError || got[1].Message != MsgNoRestConfig {
		t.Errorf("events %+v", got)
	}
	if ev, ok, _ := rt.Status(context.Background(), "r1"); !ok || ev.Phase != v1alpha1.NodeError {
		t.Errorf("Status %+v %v", ev, ok)
	}
}

func TestResourceHelpers(t *testing.T) {
	flags := []struct {
		in   []string
		want flagTarget
	}{
		{[]string{"workflow", "wf1"}, flagTarget{resource: "workflow", name: "wf1"}},
		{[]string{"cm/x", "-n", "other"}, flagTarget{resource: "cm", name: "x", namespace: "other"}},
		{[]string{"--namespace=o", "--type", "merge", "deploy", "d"}, flagTarget{resource: "deploy", name: "d", namespace: "o"}},
		{[]string{"--validate=false"}, flagTarget{}},
	}
	for _, tt := range flags {
		if got := parseFlags(tt.in); got != tt.want {
			t.Errorf("parseFlags(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
	docs := map[string]bool{"a: 1": false, "---\na: 1\n": false, "a: 1\n---\nb: 2": true, "a: 1\n---\n# c\n": false}
	for in, want := range docs {
		if got := multiDoc(in); got != want {
			t.Errorf("multiDoc(%q) = %v", in, got)
		}
	}
	sa := []struct {
		tmpl string
		spec *v1alpha1.WorkflowSpec
		want string
	}{
		{"{}", nil, "default"},
		{"{}", &v1alpha1.WorkflowSpec{ServiceAccountName: "wf"}, "wf"},
		{"serviceAccountName: t", &v1alpha1.WorkflowSpec{ServiceAccountName: "wf"}, "t"},
		{"serviceAccountName: t", &v1alpha1.WorkflowSpec{Executor: &v1alpha1.ExecutorConfig{ServiceAccountName: "ex"}}, "ex"},
		{"{executor: {serviceAccountName: tex}}", &v1alpha1.WorkflowSpec{Executor: &v1alpha1.ExecutorConfig{ServiceAccountName: "ex"}}, "tex"},
	}
	for _, tt := range sa {
		run := runtime.Run{Spec: tt.spec, Launch: step.Launch{Template: mustTemplate(t, tt.tmpl)}}
		if got := serviceAccountOf(run); got != tt.want {
			t.Errorf("serviceAccountOf(%s) = %q, want %q", tt.tmpl, got, tt.want)
		}
	}
	obj := map[string]any{"metadata": map[string]any{"name": "n"}, "spec": map[string]any{"replicas": int64(3)}}
	for expr, want := range map[string]string{"{.metadata.name}": "n", ".spec.replicas": "3", "{.nope}": "", "x={.spec.replicas}": "x=3"} {
		if got, err := evalJSONPath(expr, obj); err != nil || got != want {
			t.Errorf("evalJSONPath(%q) = %q, %v; want %q", expr, got, err, want)
		}
	}
	if _, err := evalJSONPath("{.a[", obj); err == nil {
		t.Error("evalJSONPath of a bad path: no error")
	}
}
