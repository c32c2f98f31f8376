package kube_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apiv1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/controller"
	"github.com/braidwf/braid/internal/server"
	"github.com/braidwf/braid/internal/store/kube"
	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Compile-time guards: the interfaces braid's consumers declare.
var (
	_ controller.Store      = (*kube.Store)(nil)
	_ controller.WatchStore = (*kube.Store)(nil)
	_ server.Store          = (*kube.Store)(nil)
	_ kube.NodeOffloader    = (*kube.PGOffloader)(nil)
)

var (
	crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	nsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	wfGVR  = v1alpha1.SchemeGroupVersion.WithResource(v1alpha1.WorkflowPlural)
)

// cluster is the test cluster: its config, a dynamic client, and a
// namespace of the test's own.
type cluster struct {
	cfg *rest.Config
	dyn dynamic.Interface
	ns  string
}

// kubeConfig returns the config of $KUBECONFIG, or skips the test.
func kubeConfig(t *testing.T) *rest.Config {
	t.Helper()
	path := os.Getenv("KUBECONFIG")
	if path == "" {
		if os.Getenv("BRAID_REQUIRE_KUBE") == "1" {
			t.Fatal("KUBECONFIG is unset and BRAID_REQUIRE_KUBE=1")
		}
		t.Skip("KUBECONFIG is unset: start a cluster with `make kube-up` and export the KUBECONFIG it prints")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("kubeconfig %s: %v", path, err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	return cfg
}

// crdOnce installs the CRDs once per test binary.
var crdOnce sync.Once

// newCluster connects, installs the CRDs and creates a namespace that is
// emptied and deleted when the test ends.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	cfg := kubeConfig(t)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var crdErr error
	crdOnce.Do(func() { crdErr = installCRDs(cfg, dyn) })
	if crdErr != nil {
		t.Fatalf("install CRDs: %v", crdErr)
	}
	c := &cluster{cfg: cfg, dyn: dyn, ns: "braid-kst-" + randHex(4)}
	ctx := context.Background()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": c.ns}}}
	if _, err := dyn.Resource(nsGVR).Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		// No kube-controller-manager runs on the test node: delete the
		// objects first, or they outlive their Terminating namespace.
		for _, p := range []string{v1alpha1.WorkflowPlural, v1alpha1.WorkflowTemplatePlural, v1alpha1.CronWorkflowPlural, v1alpha1.WorkflowEventBindingPlural} {
			err := dyn.Resource(v1alpha1.SchemeGroupVersion.WithResource(p)).Namespace(c.ns).
				DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
			if err != nil {
				t.Errorf("clean up %s in %s: %v", p, c.ns, err)
			}
		}
		if err := dyn.Resource(nsGVR).Delete(ctx, c.ns, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete namespace %s: %v", c.ns, err)
		}
		// Nor does a namespace controller finish the deletion: with its
		// objects gone, the test does it (an empty spec.finalizers).
		if err := finalizeNamespace(ctx, dyn, c.ns); err != nil {
			t.Errorf("finalize namespace %s: %v", c.ns, err)
		}
	})
	return c
}

func finalizeNamespace(ctx context.Context, dyn dynamic.Interface, name string) error {
	ns, err := dyn.Resource(nsGVR).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := unstructured.SetNestedSlice(ns.Object, []any{}, "spec", "finalizers"); err != nil {
		return err
	}
	_, err = dyn.Resource(nsGVR).Update(ctx, ns, metav1.UpdateOptions{}, "finalize")
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// installCRDs applies manifests/base/crds. The Workflow CRD gets the status
// subresource if the generated file lacks it (see doc.go); an existing CRD
// is replaced only when it lacks the subresource, so that tests running
// side by side do not flip it back and forth.
func installCRDs(cfg *rest.Config, dyn dynamic.Interface) error {
	files, err := filepath.Glob("../../../manifests/base/crds/*.yaml")
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRD files found (%v)", err)
	}
	ctx := context.Background()
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		crd := &unstructured.Unstructured{Object: obj}
		isWF := strings.HasSuffix(f, "argoproj.io_workflows.yaml")
		if isWF {
			if err := addStatusSubresource(crd); err != nil {
				return err
			}
		}
		// Read first: sending the large Workflow CRD only to hear that it
		// exists costs the apiserver seconds.
		cur, err := dyn.Resource(crdGVR).Get(ctx, crd.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				err = nil
			}
		case err == nil && isWF && !hasStatusSubresource(cur):
			crd.SetResourceVersion(cur.GetResourceVersion())
			_, err = dyn.Resource(crdGVR).Update(ctx, crd, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("apply %s: %w", f, err)
		}
	}
	return waitDiscovery(cfg)
}

func addStatusSubresource(crd *unstructured.Unstructured) error {
	versions, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if err != nil {
		return err
	}
	for i, v := range versions {
		m := v.(map[string]any)
		m["subresources"] = map[string]any{"status": map[string]any{}}
		versions[i] = m
	}
	return unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions")
}

func hasStatusSubresource(crd *unstructured.Unstructured) bool {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		if _, ok, _ := unstructured.NestedMap(v.(map[string]any), "subresources", "status"); ok {
			return true
		}
	}
	return false
}

// waitDiscovery waits until the apiserver serves every kind and workflows/status.
func waitDiscovery(cfg *rest.Config) error {
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	want := []string{v1alpha1.WorkflowPlural, v1alpha1.WorkflowPlural + "/status", v1alpha1.WorkflowTemplatePlural,
		v1alpha1.ClusterWorkflowTemplatePlural, v1alpha1.CronWorkflowPlural, v1alpha1.WorkflowEventBindingPlural}
	return testutil.Poll(60*time.Second, func() error {
		list, err := disc.ServerResourcesForGroupVersion(v1alpha1.APIVersion)
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, r := range list.APIResources {
			have[r.Name] = true
		}
		var missing []string
		for _, w := range want {
			if !have[w] {
				missing = append(missing, w)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("the apiserver does not serve %v", missing)
		}
		return nil
	})
}

// newStore returns a Store on the cluster, closed when the test ends.
func newStore(t *testing.T, c *cluster, opts kube.Options) *kube.Store {
	t.Helper()
	opts.Config = c.cfg
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	s, err := kube.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// rawWorkflow reads a workflow as the apiserver stores it.
func (c *cluster) rawWorkflow(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := c.dyn.Resource(wfGVR).Namespace(c.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("raw get %s: %v", name, err)
	}
	return u
}

// eventually retries f until it returns nil or 10 s pass.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, what, f)
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newWorkflow returns a one-step workflow.
func newWorkflow(ns, name string, labels map[string]string) *v1alpha1.Workflow {
	return &v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: v1alpha1.WorkflowSpec{Entrypoint: "main", Templates: []v1alpha1.Template{{Name: "main",
			Container: &apiv1.Container{Image: "busybox", Command: []string{"true"}}}}},
	}
}
