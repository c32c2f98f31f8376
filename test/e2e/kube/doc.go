// Package kube holds the end-to-end tests that need a real Kubernetes: the
// one-node cluster that `make kube-up` starts (hack/kube/up.sh), with the
// images from `make kube-images`. Every test skips unless BRAID_KUBE=1 and
// KUBECONFIG are set:
//
//	eval "$(make -s kube-up | tail -1)" && make kube-images
//	BRAID_KUBE=1 go test -count=1 ./test/e2e/kube/
//
// The cluster runs no kube-controller-manager: a test that creates a
// namespace also creates its default ServiceAccount and kube-root-ca.crt
// ConfigMap (see prepareNamespace, or hack/kube/ns.sh from a shell), and a
// deleted namespace stays Terminating. Pods use imagePullPolicy IfNotPresent,
// since nothing can be pulled.
//
// The package talks to the API over plain HTTPS with k8s.io/api types, so
// that it needs no module beyond those braid already requires.
package kube
