package kube_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const daemonYAML = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: daemon-
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: server
        template: server
    - - name: client
        template: client
        arguments: {parameters: [{name: ip, value: "{{steps.server.ip}}"}]}
  - name: server
    daemon: true
    container:
      image: busybox:1.36
      command: [sh, -c, "mkdir -p /www && echo hi-from-daemon > /www/index.html && exec httpd -f -p 8080 -h /www"]
      readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
  - name: client
    inputs: {parameters: [{name: ip}]}
    container:
      image: busybox:1.36
      command: [sh, -c, "wget -qO- http://{{inputs.parameters.ip}}:8080/ | grep hi-from-daemon"]
`

const sidecarYAML = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: sidecar-
spec:
  entrypoint: main
  templates:
  - name: main
    container:
      image: busybox:1.36
      command: [sh, -c, "until wget -qO- http://127.0.0.1:8080/ ; do sleep 0.2; done"]
    sidecars:
    - name: web
      image: busybox:1.36
      command: [sh, -c, "mkdir -p /www && echo from-sidecar > /www/index.html && exec httpd -f -p 8080 -h /www"]
`

const containerSetYAML = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: set-
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: set
        template: set
    - - name: echo
        template: echo
        arguments: {parameters: [{name: m, value: "{{steps.set.outputs.parameters.message}}"}]}
  - name: set
    volumes: [{name: workspace, emptyDir: {}}]
    containerSet:
      volumeMounts: [{name: workspace, mountPath: /workspace}]
      containers:
      - {name: a, image: argoproj/argosay:v2, command: [sh, -c], args: ["echo a >> /workspace/message"]}
      - {name: b, image: argoproj/argosay:v2, command: [sh, -c], args: ["echo b >> /workspace/message"], dependencies: [a]}
      - {name: main, image: argoproj/argosay:v2, command: [sh, -c], args: ["echo main >> /workspace/message"], dependencies: [b]}
    outputs:
      parameters: [{name: message, valueFrom: {path: /workspace/message}}]
  - name: echo
    inputs: {parameters: [{name: m}]}
    container:
      image: busybox:1.36
      env: [{name: M, value: "{{inputs.parameters.m}}"}]
      command: [sh, -c, "test \"$(echo $M)\" = 'a b main'"]
`

// TestKubePodKinds runs a daemon step used through {{steps.server.ip}}, a
// sidecar the main container talks to, and a containerSet whose output
// feeds the next step, through braid controller on the node.
func TestKubePodKinds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	b := newBackend(t, ctx)
	names := map[string]string{}
	for kind, spec := range map[string]string{"daemon": daemonYAML, "sidecar": sidecarYAML, "set": containerSetYAML} {
		names[kind] = b.submit(ctx, kind, spec)
	}
	var mu sync.Mutex
	wfs := map[string]*v1alpha1.Workflow{}
	var wg sync.WaitGroup
	for kind, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wf := b.waitCompleted(ctx, name)
			mu.Lock()
			wfs[kind] = wf
			mu.Unlock()
		}()
	}
	wg.Wait()
	for kind, wf := range wfs {
		if wf.Status.Phase != v1alpha1.WorkflowSucceeded {
			for _, n := range wf.Status.Nodes {
				t.Logf("%s: node %s %s %s %q", kind, n.DisplayName, n.Type, n.Phase, n.Message)
			}
			t.Errorf("%s (%s): phase %s %q, want Succeeded", kind, wf.Name, wf.Status.Phase, wf.Status.Message)
		}
	}
	if t.Failed() {
		return
	}
	for _, n := range wfs["daemon"].Status.Nodes {
		if n.DisplayName != "server" {
			continue
		}
		if n.Phase != v1alpha1.NodeSucceeded || n.PodIP == "" || n.HostNodeName == "" || n.Daemoned != nil {
			t.Errorf("daemon node: phase %s %q ip %q host %q daemoned %v", n.Phase, n.Message, n.PodIP, n.HostNodeName, n.Daemoned)
		}
	}
	containers := map[string]v1alpha1.NodePhase{}
	for _, n := range wfs["set"].Status.Nodes {
		if n.DisplayName == "set" && (n.Outputs == nil || len(n.Outputs.Parameters) != 1 ||
			strings.Join(strings.Fields(n.Outputs.Parameters[0].Value.String()), " ") != "a b main") {
			t.Errorf("containerSet node outputs %+v", n.Outputs)
		}
		if n.Type == v1alpha1.NodeTypeContainer {
			containers[n.DisplayName] = n.Phase
		}
	}
	// Each container of the set is a node of type Container, as in Argo.
	want := map[string]v1alpha1.NodePhase{"a": v1alpha1.NodeSucceeded, "b": v1alpha1.NodeSucceeded, "main": v1alpha1.NodeSucceeded}
	if fmt.Sprint(containers) != fmt.Sprint(want) {
		t.Errorf("containerSet's Container nodes %v, want %v", containers, want)
	}
	// The sidecar's pod completes: its sidecar was stopped, not left running.
	for _, p := range b.pods(ctx, names["sidecar"]) {
		if p.Status.Phase != "Succeeded" {
			t.Errorf("pod %s: %s %+v", p.Name, p.Status.Phase, p.Status.ContainerStatuses)
		}
	}
}
