package kube_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// prepareNamespace creates a namespace named prefix plus a random suffix,
// with the default ServiceAccount and kube-root-ca.crt ConfigMap that no
// controller creates on the hack/kube cluster. The namespace is deleted
// when the test ends (it stays Terminating: no namespace controller runs).
func prepareNamespace(t *testing.T, ctx context.Context, c *apiClient, prefix string) string {
	t.Helper()
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		t.Fatal(err)
	}
	ns := prefix + "-" + hex.EncodeToString(suffix)
	ca, err := c.servingCA(ctx)
	if err != nil {
		t.Fatal(err)
	}
	objs := []struct {
		path string
		obj  any
	}{
		{"/api/v1/namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}},
		{"/api/v1/namespaces/" + ns + "/serviceaccounts", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}},
		{"/api/v1/namespaces/" + ns + "/configmaps", &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": ca}}},
	}
	for _, o := range objs {
		if err := c.create(ctx, o.path, o.obj); err != nil {
			t.Fatalf("prepare namespace %s: %v", ns, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		zero := int64(0)
		opts := &metav1.DeleteOptions{GracePeriodSeconds: &zero}
		if _, err := c.do(ctx, http.MethodDelete, "/api/v1/namespaces/"+ns+"/pods", opts, nil); err != nil {
			t.Logf("delete pods in %s: %v", ns, err)
		}
		if _, err := c.do(ctx, http.MethodDelete, "/api/v1/namespaces/"+ns, nil, nil); err != nil {
			t.Logf("delete namespace %s: %v", ns, err)
		}
	})
	return ns
}

// waitPod polls the pod until it ends (Succeeded or Failed) and returns it.
func waitPod(ctx context.Context, c *apiClient, ns, name string) (*corev1.Pod, error) {
	for {
		var pod corev1.Pod
		if _, err := c.do(ctx, http.MethodGet, "/api/v1/namespaces/"+ns+"/pods/"+name, nil, &pod); err != nil {
			return nil, err
		}
		switch pod.Status.Phase {
		case corev1.PodSucceeded, corev1.PodFailed:
			return &pod, nil
		}
		select {
		case <-ctx.Done():
			return &pod, fmt.Errorf("pod %s/%s still %s: %w", ns, name, pod.Status.Phase, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestPodSmoke runs real pods on the node, one per image that `make
// kube-images` imports, and checks phase, exit code and logs.
func TestPodSmoke(t *testing.T) {
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel) // not defer: the parallel subtests run after this function returns
	ns := prepareNamespace(t, ctx, c, "braid-smoke")
	tests := []struct {
		name     string
		image    string
		command  []string
		args     []string
		phase    corev1.PodPhase
		exitCode int32
		log      string
	}{
		{name: "busybox", image: "busybox:1.36", command: []string{"sh", "-c"},
			args: []string{"echo hello from $(hostname); ls /bin/sh >/dev/null"}, phase: corev1.PodSucceeded, log: "hello from busybox"},
		{name: "busybox-untagged", image: "busybox", command: []string{"echo", "untagged means latest"},
			phase: corev1.PodSucceeded, log: "untagged means latest"},
		{name: "exit-code", image: "busybox:1.36", command: []string{"sh", "-c", "echo failing; exit 3"},
			phase: corev1.PodFailed, exitCode: 3, log: "failing"},
		{name: "alpine", image: "alpine:3.23", command: []string{"sh", "-c", "cat /etc/os-release"},
			phase: corev1.PodSucceeded, log: "busybox"},
		{name: "argosay", image: "argoproj/argosay:v2", args: []string{"echo", "hello argosay"},
			phase: corev1.PodSucceeded, log: "hello argosay"},
		{name: "argosay-fails", image: "argoproj/argosay:v2", args: []string{"exit 1"},
			phase: corev1.PodFailed, exitCode: 1},
		{name: "braid", image: "braid:dev", args: []string{"version"}, phase: corev1.PodSucceeded, log: "braid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: tc.name},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "main", Image: tc.image, ImagePullPolicy: corev1.PullIfNotPresent,
						Command: tc.command, Args: tc.args,
					}},
				},
			}
			start := time.Now()
			if err := c.create(ctx, "/api/v1/namespaces/"+ns+"/pods", pod); err != nil {
				t.Fatal(err)
			}
			got, err := waitPod(ctx, c, ns, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: create -> %s in %v", tc.name, got.Status.Phase, time.Since(start).Round(time.Millisecond))
			if got.Status.Phase != tc.phase {
				t.Errorf("phase = %s, want %s (status: %+v)", got.Status.Phase, tc.phase, got.Status.ContainerStatuses)
			}
			if n := len(got.Status.ContainerStatuses); n != 1 || got.Status.ContainerStatuses[0].State.Terminated == nil {
				t.Fatalf("container statuses = %+v, want one terminated", got.Status.ContainerStatuses)
			}
			if code := got.Status.ContainerStatuses[0].State.Terminated.ExitCode; code != tc.exitCode {
				t.Errorf("exit code = %d, want %d", code, tc.exitCode)
			}
			logs, err := c.do(ctx, http.MethodGet, "/api/v1/namespaces/"+ns+"/pods/"+tc.name+"/log?container=main", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(logs), tc.log) {
				t.Errorf("logs = %q, want them to contain %q", logs, tc.log)
			}
		})
	}
}
