package kube

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
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// podLogRefresh is how long a running pod's fetched log is served before
// it is fetched again.
const podLogRefresh = 500 * time.Millisecond

// podLogFetch bounds one fetch of a pod's log (or of its shipped log).
const podLogFetch = 30 * time.Second

// ShippedLog says where the executor shipped the main log of a workflow's
// pod; nil and no error: nowhere that can be read.
type ShippedLog func(ctx context.Context, namespace, workflow, pod string) (*v1alpha1.ArtifactLocation, error)

// PodLogsConfig configures PodLogs.
type PodLogsConfig struct {
	Client kubernetes.Interface
	// Artifacts open the shipped logs; nil: none is read.
	Artifacts *artifact.Drivers
	// Shipped finds the log a pod that is gone shipped; nil: none is read.
	Shipped ShippedLog
	// Logger receives why a log could not be fetched (at debug level);
	// nil: discard.
	Logger *slog.Logger
}

// PodLogs opens the logs of steps that ran as pods, as files, for the API
// server, which reads a step's log as a file (ranges, tailLines read back
// from the end; server.StepLogs). Each Open fetches the main container's
// log (a containerSet's: each work container's, in order) through the API
// into a file under a private directory, and opens that file. A finished
// pod's log is fetched once; a running pod's at most every
// podLogRefresh. Once the pod is gone (pod GC), the log the executor
// shipped to the artifact repository is copied instead. A fetch that
// fails leaves what an earlier one fetched, or no file.
//
// It needs no Runtime: a server that does not drive workflows serves logs
// too. Close removes the files.
type PodLogs struct {
	cfg PodLogsConfig
	dir string
	log *slog.Logger

	mu      sync.Mutex
	fetched map[string]podLogState // by file
}

// podLogState is when a pod's log was last fetched, and whether the pod
// had ended then.
type podLogState struct {
	at    time.Time
	final bool
}

// NewPodLogs makes PodLogs' private directory.
func NewPodLogs(c PodLogsConfig) (*PodLogs, error) {
	dir, err := os.MkdirTemp("", "braid-pod-logs-")
	if err != nil {
		return nil, fmt.Errorf("pod log cache: %w", err)
	}
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &PodLogs{cfg: c, dir: dir, log: log, fetched: map[string]podLogState{}}, nil
}

// Open opens the log of the workflow's step that ran as pod, fetched
// afresh unless the fetched one is final or recent. A step with no log
// here (the pod has not started, or it is gone and shipped none) is an
// error that wraps fs.ErrNotExist.
func (p *PodLogs) Open(ctx context.Context, namespace, workflow, pod string) (*os.File, error) {
	path := filepath.Join(p.dir, namespace, pod+".log")
	p.mu.Lock()
	st, ok := p.fetched[path]
	p.mu.Unlock()
	if !ok || (!st.final && time.Since(st.at) >= podLogRefresh) {
		final, err := p.fetch(ctx, namespace, workflow, pod, path)
		if err != nil {
			p.log.Debug("pod log", "pod", namespace+"/"+pod, "err", err)
		} else {
			p.mu.Lock()
			p.fetched[path] = podLogState{at: time.Now(), final: final}
			p.mu.Unlock()
		}
	}
	return os.Open(path)
}

// fetch writes the pod's log to path; final: the pod has ended.
func (p *PodLogs) fetch(ctx context.Context, namespace, workflow, pod, path string) (final bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, podLogFetch)
	defer cancel()
	pods := p.cfg.Client.CoreV1().Pods(namespace)
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
	for _, c := range workNames(obj) {
		part, err := pods.GetLogs(pod, &apiv1.PodLogOptions{Container: c}).DoRaw(ctx)
		if err != nil {
			return false, err
		}
		data = append(data, part...)
	}
	return final, writeAtomic(path, func(w io.Writer) error { _, err := w.Write(data); return err })
}

// fetchShipped copies the shipped log of a pod that is gone to path.
func (p *PodLogs) fetchShipped(ctx context.Context, namespace, workflow, pod, path string) (bool, error) {
	if p.cfg.Shipped == nil || p.cfg.Artifacts == nil {
		return false, fmt.Errorf("pod %s/%s is gone and no artifact repository keeps its log", namespace, pod)
	}
	loc, err := p.cfg.Shipped(ctx, namespace, workflow, pod)
	if err == nil && loc == nil {
		err = errors.New("no artifact repository keeps its log")
	}
	if err != nil {
		return false, fmt.Errorf("pod %s/%s is gone: %w", namespace, pod, err)
	}
	drv, err := p.cfg.Artifacts.For(loc)
	if err != nil {
		return false, fmt.Errorf("pod %s/%s is gone: %w", namespace, pod, err)
	}
	r, err := drv.OpenStream(artifact.WithNamespace(ctx, namespace), &v1alpha1.Artifact{Name: step.LogArtifact, ArtifactLocation: *loc})
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
		return fmt.Errorf("pod log cache: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("pod log cache: %w", err)
	}
	werr := write(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("pod log cache: %w", werr)
	}
	return nil
}

// Close removes the fetched logs.
func (p *PodLogs) Close() error { return os.RemoveAll(p.dir) }
