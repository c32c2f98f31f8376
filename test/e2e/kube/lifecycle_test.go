package kube_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// TestKubeLifecycle runs the workflow-wide settings through braid
// controller and braid server on the node: pod GC, spec.volumes, and the
// PVCs of volumeClaimTemplates (created, owned, deleted per volumeClaimGC;
// this node has no PV provisioner nor binder, so no claim binds and
// binding is not exercised).
func TestKubeLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b := newBackend(t, ctx)

	t.Run("podgc-on-pod-completion", func(t *testing.T) { b.t = t; testPodGCOnPod(t, ctx, b) })
	t.Run("podgc-on-workflow-success", func(t *testing.T) { b.t = t; testPodGCOnWorkflow(t, ctx, b) })
	t.Run("workflow-volumes", func(t *testing.T) { b.t = t; testWorkflowVolumes(t, ctx, b) })
	t.Run("volume-claims", func(t *testing.T) { b.t = t; testVolumeClaims(t, ctx, b) })
	t.Run("volume-claim-mounted", func(t *testing.T) { b.t = t; testVolumeClaimMounted(t, ctx, b) })
}

// withSpec inserts lines under spec: of a workflow made by chainYAML.
func withSpec(wf, lines string) string {
	return strings.Replace(wf, "spec:\n", "spec:\n"+lines, 1)
}

// podNodes counts the workflow's Pod nodes in each phase.
func podNodes(wf *v1alpha1.Workflow) map[v1alpha1.NodePhase]int {
	out := map[v1alpha1.NodePhase]int{}
	for _, n := range wf.Status.Nodes {
		if n.Type == v1alpha1.NodeTypePod {
			out[n.Phase]++
		}
	}
	return out
}

// waitPods polls the workflow's pods until cond holds, or fails after d.
func (b *backend) waitPods(ctx context.Context, wf, what string, d time.Duration, cond func([]corev1.Pod) bool) []corev1.Pod {
	b.t.Helper()
	var pods []corev1.Pod
	testutil.Eventually(b.t, d, "workflow "+wf+": "+what, func() error {
		if pods = b.pods(ctx, wf); !cond(pods) {
			return fmt.Errorf("%d pods", len(pods))
		}
		return nil
	})
	return pods
}

// waitDone waits up to 3 minutes for the workflow to complete.
func (b *backend) waitDone(ctx context.Context, name string) *v1alpha1.Workflow {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	return b.waitCompleted(ctx, name)
}

func live(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

func testPodGCOnPod(t *testing.T, ctx context.Context, b *backend) {
	spec := withSpec(chainYAML("gc-pod", 2, "sleep 4; echo step"), "  podGC: {strategy: OnPodCompletion}\n")
	name := b.submit(ctx, "gc-pod", spec)
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	b.waitWorkflow(wctx, name, "first step done, second running", func(wf *v1alpha1.Workflow) bool {
		n := podNodes(wf)
		return n[v1alpha1.NodeSucceeded] == 1 && n[v1alpha1.NodeRunning] == 1
	})
	b.waitPods(ctx, name, "the first step's pod collected while the second runs", 20*time.Second,
		func(p []corev1.Pod) bool { return live(p) == 1 })
	wf := b.waitDone(ctx, name)
	if wf.Status.Phase != v1alpha1.WorkflowSucceeded || podNodes(wf)[v1alpha1.NodeSucceeded] != 2 {
		t.Fatalf("%s: %s (%s), pod nodes %v; want Succeeded with both steps' results", name, wf.Status.Phase, wf.Status.Message, podNodes(wf))
	}
	b.waitPods(ctx, name, "every pod collected", 30*time.Second, func(p []corev1.Pod) bool { return len(p) == 0 })
}

func testPodGCOnWorkflow(t *testing.T, ctx context.Context, b *backend) {
	spec := withSpec(chainYAML("gc-wf", 2, "sleep 4; echo step"), "  podGC: {strategy: OnWorkflowSuccess}\n")
	name := b.submit(ctx, "gc-wf", spec)
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	b.waitWorkflow(wctx, name, "first step done", func(wf *v1alpha1.Workflow) bool {
		return podNodes(wf)[v1alpha1.NodeSucceeded] >= 1
	})
	if wf, err := b.workflow(ctx, name); err == nil && !wf.Status.Phase.Completed() {
		if n := live(b.pods(ctx, name)); n < 1 {
			t.Errorf("no live pod while the workflow runs: OnWorkflowSuccess waits for the end")
		}
	}
	wf := b.waitDone(ctx, name)
	if wf.Status.Phase != v1alpha1.WorkflowSucceeded {
		t.Fatalf("%s: %s (%s)", name, wf.Status.Phase, wf.Status.Message)
	}
	b.waitPods(ctx, name, "every pod collected at the end", 30*time.Second, func(p []corev1.Pod) bool { return len(p) == 0 })

	// A failed workflow keeps its pods under OnWorkflowSuccess.
	failing := withSpec(chainYAML("gc-wf-fail", 1, "exit 2"), "  podGC: {strategy: OnWorkflowSuccess}\n")
	name = b.submit(ctx, "gc-wf-fail", failing)
	if wf := b.waitDone(ctx, name); wf.Status.Phase != v1alpha1.WorkflowFailed {
		t.Fatalf("%s: %s, want Failed", name, wf.Status.Phase)
	}
	// A negative check, so a wait: nothing tells that a pod was not
	// collected; a delete at the workflow's end would show within this.
	time.Sleep(2 * time.Second)
	if n := live(b.pods(ctx, name)); n != 1 {
		t.Errorf("%d pods left by a failed workflow under OnWorkflowSuccess, want 1", n)
	}
}

const volumesYAML = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: volumes-
spec:
  entrypoint: main
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: config, configMap: {name: settings}}
  templates:
  - name: main
    steps:
    - - name: read
        template: read
    - - name: plain
        template: plain
  - name: read
    container:
      image: busybox:1.36
      command: [sh, -c, "grep -qx hello /cfg/greeting && echo x > /scratch/f && cat /scratch/f"]
      volumeMounts: [{name: config, mountPath: /cfg}, {name: scratch, mountPath: /scratch}]
  - name: plain
    container: {image: busybox:1.36, command: [sh, -c, "test ! -e /cfg"]}
`

func testWorkflowVolumes(t *testing.T, ctx context.Context, b *backend) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"greeting": "hello"}}
	if err := b.c.create(ctx, "/api/v1/namespaces/"+b.ns+"/configmaps", cm); err != nil {
		t.Fatal(err)
	}
	name := b.submit(ctx, "volumes", volumesYAML)
	wf := b.waitDone(ctx, name)
	if wf.Status.Phase != v1alpha1.WorkflowSucceeded {
		for _, n := range wf.Status.Nodes {
			t.Logf("node %s: %s %q", n.DisplayName, n.Phase, n.Message)
		}
		t.Fatalf("%s: %s (%s), want Succeeded: the step reads the ConfigMap and the emptyDir", name, wf.Status.Phase, wf.Status.Message)
	}
	for _, p := range b.pods(ctx, name) {
		var vols []string
		for _, v := range p.Spec.Volumes {
			vols = append(vols, v.Name)
		}
		mounted := strings.Contains(p.Annotations["workflows.argoproj.io/node-name"], "read")
		if got := strings.Contains(strings.Join(vols, ","), "config"); got != mounted {
			t.Errorf("pod %s volumes %v: only the pod that mounts them gets the workflow's volumes", p.Name, vols)
		}
	}
}

// pvc reads a PVC; nil when it is gone or being deleted.
func (b *backend) pvc(ctx context.Context, name string) *corev1.PersistentVolumeClaim {
	b.t.Helper()
	var pvc corev1.PersistentVolumeClaim
	_, err := b.c.do(ctx, http.MethodGet, "/api/v1/namespaces/"+b.ns+"/persistentvolumeclaims/"+name, nil, &pvc)
	if e := (*apiError)(nil); errors.As(err, &e) && e.code == http.StatusNotFound {
		return nil
	}
	if err != nil {
		b.t.Fatal(err)
	}
	if pvc.DeletionTimestamp != nil {
		return nil
	}
	return &pvc
}

func (b *backend) waitPVCGone(ctx context.Context, name string, d time.Duration) {
	b.t.Helper()
	testutil.Until(b.t, d, "pvc "+name+" gone", func() bool { return b.pvc(ctx, name) == nil })
}

const claimYAML = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: claims-
spec:
  entrypoint: main
  volumeClaimTemplates:
  - metadata: {name: work}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Mi}}
  templates:
  - name: main
    container: {image: busybox:1.36, command: [sh, -c, "sleep 3"]}
`

// testVolumeClaims: the PVC exists, owned by the workflow, before the step
// runs, and is deleted when the workflow succeeds (OnWorkflowSuccess, the
// default). The step does not mount it: on this node it would not bind.
func testVolumeClaims(t *testing.T, ctx context.Context, b *backend) {
	name := b.submit(ctx, "claims", claimYAML)
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	wf := b.waitWorkflow(wctx, name, "the step running", func(wf *v1alpha1.Workflow) bool { return podNodes(wf)[v1alpha1.NodeRunning] == 1 })
	pvc := b.pvc(ctx, name+"-work")
	if pvc == nil {
		t.Fatalf("no pvc %s-work while the workflow runs", name)
	}
	if refs := pvc.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Workflow" || refs[0].UID != wf.UID {
		t.Errorf("pvc owners %+v, want the Workflow %s", refs, wf.UID)
	}
	if got := fmt.Sprint(wf.Status.PersistentVolumeClaims); !strings.Contains(got, name+"-work") {
		t.Errorf("status.persistentVolumeClaims = %s", got)
	}
	wf = b.waitDone(ctx, name)
	if wf.Status.Phase != v1alpha1.WorkflowSucceeded {
		t.Fatalf("%s: %s (%s)", name, wf.Status.Phase, wf.Status.Message)
	}
	b.waitPVCGone(ctx, name+"-work", 20*time.Second)
	b.waitWorkflow(ctx, name, "status.persistentVolumeClaims emptied", func(wf *v1alpha1.Workflow) bool {
		return len(wf.Status.PersistentVolumeClaims) == 0
	})
}

// testVolumeClaimMounted: a step mounting the claim gets a pod volume
// named after the claim that mounts <workflow>-<claim>. The claim never
// binds here, so the workflow is stopped; OnWorkflowCompletion then
// deletes the PVC of the failed workflow.
func testVolumeClaimMounted(t *testing.T, ctx context.Context, b *backend) {
	spec := strings.Replace(claimYAML, `command: [sh, -c, "sleep 3"]}`,
		`command: [sh, -c, "ls /work"], volumeMounts: [{name: work, mountPath: /work}]}`, 1)
	spec = withSpec(spec, "  volumeClaimGC: {strategy: OnWorkflowCompletion}\n")
	name := b.submit(ctx, "claim-mounted", spec)
	pods := b.waitPods(ctx, name, "the step's pod", time.Minute, func(p []corev1.Pod) bool { return len(p) == 1 })
	found := false
	for _, v := range pods[0].Spec.Volumes {
		if v.Name == "work" && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == name+"-work" {
			found = true
		}
	}
	if !found {
		t.Errorf("pod volumes %+v: want work -> claim %s-work", pods[0].Spec.Volumes, name)
	}
	if b.pvc(ctx, name+"-work") == nil {
		t.Fatalf("no pvc %s-work", name)
	}
	if _, err := b.cli(ctx, "terminate", name); err != nil {
		t.Fatal(err)
	}
	wf := b.waitDone(ctx, name)
	t.Logf("%s: %s (%s)", name, wf.Status.Phase, wf.Status.Message)
	b.waitPVCGone(ctx, name+"-work", 20*time.Second)
}
