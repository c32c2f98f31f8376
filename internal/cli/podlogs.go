package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	apiv1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/controller"
	"github.com/braidwf/braid/internal/printer"
	kuberuntime "github.com/braidwf/braid/internal/runtime/kube"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// podLogFiles lets the API server (which reads a step's log from a file)
// serve pod logs: each read fetches the main container's log (a
// containerSet's: each container's, in order) through the API into a file
// under dir. A finished pod's log is fetched once; a
// running pod's at most every podLogRefresh. Once the pod is gone (pod
// GC), the log the executor shipped to the artifact repository is read
// instead.
type podLogFiles struct {
	client  kubernetes.Interface
	dir     string
	log     *slog.Logger
	shipped shippedLogs

	mu      sync.Mutex
	fetched map[string]podLogState
}

type podLogState struct {
	at    time.Time
	final bool
}

const podLogRefresh = 500 * time.Millisecond

// shippedLogs opens the log the executor shipped for a workflow's pod.
type shippedLogs func(ctx context.Context, namespace, workflow, pod string) (io.ReadCloser, error)

func newPodLogFiles(client kubernetes.Interface, log *slog.Logger, shipped shippedLogs) (*podLogFiles, error) {
	dir, err := os.MkdirTemp("", "braid-pod-logs-")
	if err != nil {
		return nil, fmt.Errorf("pod log cache: %w", err)
	}
	return &podLogFiles{client: client, dir: dir, log: log, shipped: shipped, fetched: map[string]podLogState{}}, nil
}

// path is a server.LogPath.
func (p *podLogFiles) path(namespace, workflow, pod string) string {
	path := filepath.Join(p.dir, namespace, pod+".log")
	p.mu.Lock()
	st, ok := p.fetched[path]
	p.mu.Unlock()
	if ok && (st.final || time.Since(st.at) < podLogRefresh) {
		return path
	}
	final, err := p.fetch(namespace, workflow, pod, path)
	if err != nil {
		p.log.Debug("pod log", "pod", namespace+"/"+pod, "err", err)
		return path
	}
	p.mu.Lock()
	p.fetched[path] = podLogState{at: time.Now(), final: final}
	p.mu.Unlock()
	return path
}

// fetch writes the pod's main log to path; final: the pod has ended.
func (p *podLogFiles) fetch(namespace, workflow, pod, path string) (final bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pods := p.client.CoreV1().Pods(namespace)
	obj, err := pods.Get(ctx, pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return p.fetchShipped(ctx, namespace, workflow, pod, path)
	}
	if err != nil {
		return false, err
	}
	final = obj.Status.Phase == apiv1.PodSucceeded || obj.Status.Phase == apiv1.PodFailed
	// A containerSet's pod: its containers' logs one after the other.
	var data []byte
	for _, c := range kuberuntime.WorkContainers(obj) {
		part, err := pods.GetLogs(pod, &apiv1.PodLogOptions{Container: c}).DoRaw(ctx)
		if err != nil {
			return false, err
		}
		data = append(data, part...)
	}
	return final, writeAtomic(path, func(w io.Writer) error { _, err := w.Write(data); return err })
}

// fetchShipped copies the shipped log of a pod that is gone to path.
func (p *podLogFiles) fetchShipped(ctx context.Context, namespace, workflow, pod, path string) (bool, error) {
	if p.shipped == nil {
		return false, fmt.Errorf("pod %s/%s is gone and no artifact repository keeps its log", namespace, pod)
	}
	r, err := p.shipped(ctx, namespace, workflow, pod)
	if err != nil {
		return false, fmt.Errorf("pod %s/%s is gone: %w", namespace, pod, err)
	}
	defer r.Close()
	return true, writeAtomic(path, func(w io.Writer) error { _, err := io.Copy(w, r); return err })
}

// writeAtomic writes path through a temporary file, so that a reader never
// sees half a log.
func writeAtomic(path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	werr := write(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return werr
	}
	return os.Rename(tmp, path)
}

// Close removes the cached logs.
func (p *podLogFiles) Close() error { return os.RemoveAll(p.dir) }

// shippedLogs finds a pod's node in its workflow and opens the log the
// executor shipped for it.
func (k *kubeBackend) shippedLogs() shippedLogs {
	repos := artifactRepositories(k.cfg)
	return func(ctx context.Context, namespace, workflow, pod string) (io.ReadCloser, error) {
		obj, err := k.store.Get(ctx, store.KindWorkflow, namespace, workflow)
		if err != nil {
			return nil, err
		}
		wf, ok := obj.(*v1alpha1.Workflow)
		if !ok {
			return nil, fmt.Errorf("workflow %s/%s: unexpected %T", namespace, workflow, obj)
		}
		for id := range wf.Status.Nodes {
			n := wf.Status.Nodes[id]
			if n.Type != v1alpha1.NodeTypePod || printer.PodName(wf, &n) != pod {
				continue
			}
			loc, err := controller.ShippedLog(repos, wf, &n, pod)
			if err != nil {
				return nil, fmt.Errorf("the shipped log: %w", err)
			}
			if loc == nil || loc.File != nil { // pods cannot write braid's own directory
				return nil, errors.New("no artifact repository keeps its log")
			}
			drv, err := k.drivers.For(loc)
			if err != nil {
				return nil, err
			}
			return drv.OpenStream(artifact.WithNamespace(ctx, namespace), &v1alpha1.Artifact{Name: step.LogArtifact, ArtifactLocation: *loc})
		}
		return nil, fmt.Errorf("workflow %s/%s has no pod %s", namespace, workflow, pod)
	}
}
