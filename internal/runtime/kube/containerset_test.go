package kube

import (
	"testing"
	"time"

	apiv1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Termination messages as the emissary writes them.
const (
	msgOK      = `'{"phase":"Succeeded","exitCode":0}'`
	msgResult  = `'{"phase":"Succeeded","exitCode":0,"outputs":{"result":"hi"}}'`
	msgAFailed = `'{"phase":"Failed","exitCode":2,"message":"a: Error (exit code 2)"}'`
	msgSkipped = `'{"phase":"Omitted","message":"main: skipped: dependency a did not succeed"}'`
	msgMain3   = `'{"phase":"Failed","exitCode":3,"message":"main: Error (exit code 3)"}'`
)

// TestObserveRoles: the result of a containerSet pod, sidecars, daemons,
// and where the pod runs.
func TestObserveRoles(t *testing.T) {
	w := waits{pull: time.Minute, unschedulable: time.Minute}
	tests := []struct {
		name   string
		pod    string
		phase  v1alpha1.NodePhase
		msg    string
		code   string
		result string
		ip     string
	}{{
		name: "set: all succeeded, outputs from main",
		pod: `
metadata: {annotations: {braid.dev/containers: "a,main"}}
spec: {nodeName: node-1}
status:
  podIP: 10.245.0.7
  containerStatuses:
  - {name: a, state: {terminated: {exitCode: 0, message: ` + msgOK + `}}}
  - {name: main, state: {terminated: {exitCode: 0, message: ` + msgResult + `}}}`,
		phase: v1alpha1.NodeSucceeded, code: "0", result: "hi", ip: "10.245.0.7",
	}, {
		name: "set: a dependency failed, main skipped",
		pod: `
metadata: {annotations: {braid.dev/containers: "a,main"}}
status:
  containerStatuses:
  - {name: a, state: {terminated: {exitCode: 2, message: ` + msgAFailed + `}}}
  - {name: main, state: {terminated: {exitCode: 0, message: ` + msgSkipped + `}}}`,
		phase: v1alpha1.NodeFailed, msg: "a: Error (exit code 2); skipped: main", code: "2",
	}, {
		name: "set: main failed wins",
		pod: `
metadata: {annotations: {braid.dev/containers: "a,main"}}
status:
  containerStatuses:
  - {name: a, state: {terminated: {exitCode: 2, message: ` + msgAFailed + `}}}
  - {name: main, state: {terminated: {exitCode: 3, message: ` + msgMain3 + `}}}`,
		phase: v1alpha1.NodeFailed, msg: "main: Error (exit code 3)", code: "3",
	}, {
		name: "set: no container named main",
		pod: `
metadata: {annotations: {braid.dev/containers: "a,b"}}
status:
  containerStatuses:
  - {name: a, state: {terminated: {exitCode: 0, message: ` + msgOK + `}}}
  - {name: b, state: {terminated: {exitCode: 0, message: ` + msgOK + `}}}`,
		phase: v1alpha1.NodeSucceeded,
	}, {
		name: "set: one ended, one runs",
		pod: `
metadata: {annotations: {braid.dev/containers: "a,main"}}
status:
  phase: Running
  containerStatuses:
  - {name: a, state: {terminated: {exitCode: 0, message: ` + msgOK + `}}}
  - {name: main, state: {running: {startedAt: "2026-01-01T00:00:01Z"}}}`,
		phase: v1alpha1.NodeRunning,
	}, {
		name: "set: an ended container without a result",
		pod: `
metadata: {annotations: {braid.dev/containers: "a,main"}}
status:
  containerStatuses:
  - {name: a, state: {terminated: {exitCode: 137, reason: Error}}}
  - {name: main, state: {terminated: {exitCode: 0, message: ` + msgSkipped + `}}}`,
		phase: v1alpha1.NodeError, msg: "the a container ended without a result (Error, exit code 137); skipped: main", code: "137",
	}, {
		name: "sidecar failed by itself",
		pod: `
status:
  containerStatuses:
  - {name: main, state: {terminated: {exitCode: 0, message: ` + msgOK + `}}}
  - {name: db, state: {terminated: {exitCode: 1, reason: Error}}}`,
		phase: v1alpha1.NodeFailed, msg: "db: Error (exit code 1)", code: "0",
	}, {
		name: "sidecar killed (143) or still running: main decides",
		pod: `
status:
  containerStatuses:
  - {name: main, state: {terminated: {exitCode: 0, message: ` + msgOK + `}}}
  - {name: db, state: {terminated: {exitCode: 143, reason: Error}}}
  - {name: cache, state: {running: {}}}`,
		phase: v1alpha1.NodeSucceeded, code: "0",
	}, {
		name: "daemon running, not ready",
		pod: `
metadata: {annotations: {braid.dev/daemon: "true"}}
status:
  phase: Running
  podIP: 10.245.0.9
  conditions: [{type: Ready, status: "False"}]
  containerStatuses:
  - {name: main, state: {running: {startedAt: "2026-01-01T00:00:01Z"}}}`,
		phase: v1alpha1.NodePending, ip: "10.245.0.9",
	}, {
		name: "daemon ready",
		pod: `
metadata: {annotations: {braid.dev/daemon: "true"}}
status:
  phase: Running
  podIP: 10.245.0.9
  conditions: [{type: Ready, status: "True"}]
  containerStatuses:
  - {name: main, state: {running: {startedAt: "2026-01-01T00:00:01Z"}}}`,
		phase: v1alpha1.NodeRunning, ip: "10.245.0.9",
	}}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &apiv1.Pod{}
			if err := yaml.UnmarshalStrict([]byte(tc.pod), pod); err != nil {
				t.Fatal(err)
			}
			pod.CreationTimestamp.Time = created
			o := observe(pod, created.Add(time.Second), w)
			if o.phase != tc.phase || o.message != tc.msg {
				t.Fatalf("observe = %q %q, want %q %q", o.phase, o.message, tc.phase, tc.msg)
			}
			if tc.code != "" && (o.exitCode == nil || itoa(o.exitCode) != tc.code) {
				t.Errorf("exit code = %s, want %s", itoa(o.exitCode), tc.code)
			}
			if tc.code == "" && o.exitCode != nil {
				t.Errorf("exit code = %d, want none", *o.exitCode)
			}
			if got := ""; o.outputs != nil && o.outputs.Result != nil {
				got = *o.outputs.Result
				if got != tc.result {
					t.Errorf("result = %q, want %q", got, tc.result)
				}
			} else if tc.result != "" {
				t.Errorf("no result, want %q", tc.result)
			}
			if o.podIP != tc.ip || tc.ip != "" && tc.name == "set: all succeeded, outputs from main" && o.hostNode != "node-1" {
				t.Errorf("pod IP %q host %q", o.podIP, o.hostNode)
			}
			st := &runState{id: "r"}
			if ev := st.event(o); ev.PodIP != o.podIP || ev.HostNode != o.hostNode {
				t.Errorf("event %+v", ev)
			}
		})
	}
}

// The containers of a containerSet pod, one by one, for their nodes.
func TestContainerStates(t *testing.T) {
	var pod apiv1.Pod
	if err := yaml.Unmarshal([]byte(`
metadata: {annotations: {braid.dev/containers: "a,b,main"}}
status:
  containerStatuses:
  - {name: a, state: {terminated: {exitCode: 2, message: `+msgAFailed+`}}}
  - {name: b, state: {running: {startedAt: "2026-11-30T10:00:00Z"}}}
  - {name: main, state: {waiting: {reason: ContainerCreating}}}`), &pod); err != nil {
		t.Fatal(err)
	}
	o := observe(&pod, time.Now(), waits{pull: time.Minute, unschedulable: time.Minute})
	if len(o.containers) != 3 {
		t.Fatalf("containers %+v", o.containers)
	}
	a, b, m := o.containers[0], o.containers[1], o.containers[2]
	if a.Name != "a" || a.Phase != v1alpha1.NodeFailed || a.Message != "a: Error (exit code 2)" || a.ExitCode == nil || *a.ExitCode != 2 {
		t.Errorf("a = %+v", a)
	}
	if b.Name != "b" || b.Phase != v1alpha1.NodeRunning || b.StartedAt.IsZero() {
		t.Errorf("b = %+v", b)
	}
	if m.Name != "main" || m.Phase != v1alpha1.NodePending {
		t.Errorf("main = %+v", m)
	}
	if !sameContainers(o.containers, o.containers) || sameContainers(o.containers, o.containers[:2]) {
		t.Error("sameContainers")
	}
	var plain apiv1.Pod
	if o := observe(&plain, time.Now(), waits{}); o.containers != nil {
		t.Errorf("a pod that is not a containerSet's has containers %+v", o.containers)
	}
}
