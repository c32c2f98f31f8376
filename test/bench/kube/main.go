package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// workflowsGVR is the Workflow custom resource.
func workflowsGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "workflows"}
}

type options struct {
	braid      string
	kubeconfig string
	only       string
	optional   bool
	k1         chainBench
	k2         dagBench
	k2Sizes    string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == patcherArg {
		if err := runPatcher(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "bench-kube patcher:", err)
			os.Exit(1)
		}
		return
	}
	var o options
	flag.StringVar(&o.braid, "braid", "bin/braid", "K1: the braid binary (the braid:dev image should hold the same build: make kube-images)")
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "the kubeconfig (default $KUBECONFIG, else ~/.kube/config)")
	flag.StringVar(&o.only, "only", "", "comma separated workloads to run: K1, K2 (default both)")
	flag.BoolVar(&o.optional, "optional", false, "exit 0 with a message when no cluster answers")
	flag.IntVar(&o.k1.steps, "k1-steps", 100, "K1: steps of the chain")
	flag.StringVar(&o.k1.image, "k1-image", "busybox:1.36", "K1: the steps' image")
	flag.DurationVar(&o.k1.timeout, "k1-timeout", 15*time.Minute, "K1: bound on the chain")
	flag.StringVar(&o.k2Sizes, "k2-nodes", "200,2000", "K2: comma separated DAG sizes")
	flag.StringVar(&o.k2.shape, "k2-shape", "layers", "K2: layers (layers of -k2-width tasks, each needing two of the layer before) or wide (independent tasks)")
	flag.IntVar(&o.k2.width, "k2-width", 50, "K2: tasks per layer of the layers shape")
	flag.DurationVar(&o.k2.timeout, "k2-timeout", 5*time.Minute, "K2: bound on each DAG")
	flag.StringVar(&o.k2.profile, "k2-cpuprofile", "", "K2: write the controller's CPU profile of the largest DAG to this file")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-kube:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	rc, err := restConfig(o.kubeconfig)
	if err == nil {
		err = reachable(rc)
	}
	if err != nil {
		if o.optional {
			fmt.Printf("\nK1, K2 (Kubernetes backend): skipped, no cluster: %v (run `make kube-up` and `make bench-kube`)\n", err)
			return nil
		}
		return err
	}
	want := func(name string) bool { return o.only == "" || strings.Contains(","+o.only+",", ","+name+",") }
	if want("K1") {
		if o.k1.bin, err = filepath.Abs(o.braid); err != nil {
			return err
		}
		o.k1.kubeconfig = o.kubeconfig
		if err := o.k1.run(rc); err != nil {
			return fmt.Errorf("K1: %w", err)
		}
	}
	if want("K2") {
		sizes, err := parseSizes(o.k2Sizes)
		if err != nil {
			return err
		}
		o.k2.kubeconfig = o.kubeconfig
		if err := o.k2.runAll(rc, sizes); err != nil {
			return fmt.Errorf("K2: %w", err)
		}
	}
	return nil
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-k2-nodes: bad size %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// restConfig loads the kubeconfig: the flag, else $KUBECONFIG, else
// ~/.kube/config. No kubeconfig at all is an error (the bench never uses
// an in-cluster config).
func restConfig(path string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		rules = &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	rc.UserAgent = "braid-bench"
	rc.QPS, rc.Burst = 200, 400 // braid's own defaults (internal/cli)
	return rc, nil
}

// reachable checks that the apiserver answers and that a node is Ready.
func reachable(rc *rest.Config) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("apiserver %s: %w", rc.Host, err)
	}
	for _, n := range nodes.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == apiv1.NodeReady && c.Status == apiv1.ConditionTrue {
				return nil
			}
		}
	}
	return fmt.Errorf("apiserver %s has no Ready node", rc.Host)
}

// namespace is one workload's namespace, with what pods need there.
type namespace struct {
	name string
	cs   kubernetes.Interface
	dyn  dynamic.Interface
}

// newNamespace creates braid-bench-<prefix>-<random> with the default
// ServiceAccount and the kube-root-ca.crt ConfigMap (no
// kube-controller-manager creates them on the test node).
func newNamespace(ctx context.Context, rc *rest.Config, prefix string) (*namespace, error) {
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	ns := &namespace{name: "braid-bench-" + prefix + "-" + hex.EncodeToString(b), cs: cs, dyn: dyn}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &apiv1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.name}}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create namespace %s: %w", ns.name, err)
	}
	ca, err := servingCA(rc)
	if err == nil {
		_, err = cs.CoreV1().ServiceAccounts(ns.name).Create(ctx, &apiv1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	}
	if err == nil {
		_, err = cs.CoreV1().ConfigMaps(ns.name).Create(ctx, &apiv1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"},
			Data: map[string]string{"ca.crt": ca}}, metav1.CreateOptions{})
	}
	if err != nil {
		ns.delete()
		return nil, fmt.Errorf("prepare namespace %s: %w", ns.name, err)
	}
	return ns, nil
}

// delete removes the pods (grace 0), the workflows, then the namespace,
// which stays Terminating on a node with no kube-controller-manager but
// holds nothing.
func (ns *namespace) delete() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	zero := int64(0)
	var errs []error
	errs = append(errs, ns.cs.CoreV1().Pods(ns.name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}))
	errs = append(errs, ns.dyn.Resource(workflowsGVR()).Namespace(ns.name).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}))
	errs = append(errs, ns.cs.CoreV1().Namespaces().Delete(ctx, ns.name, metav1.DeleteOptions{}))
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(os.Stderr, "bench-kube: clean up namespace %s: %v\n", ns.name, err)
	}
}

// servingCA is the certificate chain the apiserver presents, for the
// kube-root-ca.crt ConfigMap (the test node's kubeconfig skips TLS
// verification and names no CA).
func servingCA(rc *rest.Config) (string, error) {
	if len(rc.CAData) > 0 {
		return string(rc.CAData), nil
	}
	if rc.CAFile != "" {
		data, err := os.ReadFile(rc.CAFile)
		return string(data), err
	}
	u, err := url.Parse(rc.Host)
	if err != nil {
		return "", fmt.Errorf("serving CA: %w", err)
	}
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only reads the chain
	if err != nil {
		return "", fmt.Errorf("serving CA: %w", err)
	}
	defer conn.Close()
	var b strings.Builder
	for _, cert := range conn.ConnectionState().PeerCertificates {
		if err := pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}); err != nil {
			return "", fmt.Errorf("serving CA: %w", err)
		}
	}
	return b.String(), nil
}
