package app

import (
	"context"
	"fmt"

	"github.com/braidwf/braid/internal/controller"
	kuberuntime "github.com/braidwf/braid/internal/runtime/kube"
	"github.com/braidwf/braid/internal/runtime/local"
	"github.com/braidwf/braid/internal/server"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Each runtime serves its steps' logs to the API server: the local one
// from the data directory, the Kubernetes one from the pods, then from
// the artifact repository.
var (
	_ server.StepLogs = (*local.LogFiles)(nil)
	_ server.StepLogs = (*kuberuntime.PodLogs)(nil)
)

// podLogs serves the logs of the cluster's pods to the API server, and the
// log a pod shipped once it is gone. The caller closes it.
func (k *Kube) podLogs() (*kuberuntime.PodLogs, error) {
	logs, err := kuberuntime.NewPodLogs(kuberuntime.PodLogsConfig{Client: k.Client, Artifacts: k.Artifacts,
		Shipped: k.shippedLog, Logger: k.log})
	if err != nil {
		return nil, fmt.Errorf("serve pod logs: %w", err)
	}
	return logs, nil
}

// shippedLog finds a pod's node in its live workflow and says where the
// executor shipped its main log (a kuberuntime.ShippedLog): nil when no
// repository that pods reach keeps it.
func (k *Kube) shippedLog(ctx context.Context, namespace, workflow, pod string) (*v1alpha1.ArtifactLocation, error) {
	obj, err := k.Store.Get(ctx, store.KindWorkflow, namespace, workflow)
	if err != nil {
		return nil, fmt.Errorf("the shipped log: %w", err)
	}
	wf, ok := obj.(*v1alpha1.Workflow)
	if !ok {
		return nil, fmt.Errorf("workflow %s/%s: unexpected %T", namespace, workflow, obj)
	}
	for id := range wf.Status.Nodes {
		n := wf.Status.Nodes[id]
		if n.Type != v1alpha1.NodeTypePod || wf.NodePodName(&n) != pod {
			continue
		}
		loc, err := controller.ShippedLog(ArtifactRepositories(k.Config), wf, &n, pod)
		if err != nil {
			return nil, fmt.Errorf("the shipped log: %w", err)
		}
		if loc != nil && loc.File != nil { // pods cannot write braid's own directory
			return nil, nil
		}
		return loc, nil
	}
	return nil, fmt.Errorf("workflow %s/%s has no pod %s", namespace, workflow, pod)
}
