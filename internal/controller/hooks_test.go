package controller

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/runtime/local"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// hookedRuntime is the real local runtime plus WorkflowHooks that record
// their calls and return resources as the Kubernetes runtime does.
type hookedRuntime struct {
	*local.Runtime
	startErr error

	mu        sync.Mutex
	calls     []string
	startedAt int // steps started before WorkflowStarted returned
	steps     int
}

var _ WorkflowHooks = (*hookedRuntime)(nil)

func (h *hookedRuntime) Start(ctx context.Context, run runtime.Run) error {
	h.mu.Lock()
	h.steps++
	h.mu.Unlock()
	return h.Runtime.Start(ctx, run)
}

func (h *hookedRuntime) WorkflowStarted(_ context.Context, wf *v1alpha1.Workflow) (runtime.WorkflowResources, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, "started:"+string(wf.Status.Phase))
	h.startedAt = h.steps
	if h.startErr != nil {
		return runtime.WorkflowResources{}, h.startErr
	}
	return runtime.WorkflowResources{PersistentVolumeClaims: []apiv1.Volume{{Name: "work", VolumeSource: apiv1.VolumeSource{
		PersistentVolumeClaim: &apiv1.PersistentVolumeClaimVolumeSource{ClaimName: wf.Name + "-work"}}}}}, nil
}

func (h *hookedRuntime) WorkflowCompleted(_ context.Context, wf *v1alpha1.Workflow) (runtime.WorkflowResources, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, "completed:"+string(wf.Status.Phase))
	return runtime.WorkflowResources{}, nil
}

type permanentErr struct{}

func (permanentErr) Error() string   { return "volumeClaimTemplates[0].metadata.name is required" }
func (permanentErr) Permanent() bool { return true }

func TestWorkflowHooks(t *testing.T) {
	const spec = `
metadata: {name: hooks}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [echo, hi]}
`
	tests := []struct {
		name      string
		startErr  error
		wantPhase v1alpha1.WorkflowPhase
		wantMsg   string
		wantCalls []string
		wantErr   bool
		wantSteps int
	}{
		{name: "started before the first step, completed after the last",
			wantPhase: v1alpha1.WorkflowSucceeded, wantCalls: []string{"started:", "completed:Succeeded"}, wantSteps: 1},
		{name: "a permanent error ends the workflow Error", startErr: permanentErr{},
			wantPhase: v1alpha1.WorkflowError, wantMsg: "metadata.name is required",
			wantCalls: []string{"started:", "completed:Error"}},
		{name: "a system fault is retried with backoff, then stops braid run's driver", startErr: errors.New("apiserver unreachable"),
			wantErr: true, wantCalls: []string{"started:", "started:", "started:", "started:", "started:", "started:", "started:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			st, err := sqlite.Open(context.Background(), dir+"/braid.db", sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			lrt, err := local.New(local.Config{DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = lrt.Close(); _ = st.Close() })
			h := &hookedRuntime{Runtime: lrt, startErr: tc.startErr}
			c, err := New(Options{Store: st, Runtime: h, Hooks: h})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			storedClaims := -1 // status.persistentVolumeClaims as first written
			observe := func(*v1alpha1.Workflow, []string) {
				if storedClaims < 0 {
					if obj, err := st.Get(ctx, store.KindWorkflow, "default", "hooks"); err == nil {
						storedClaims = len(obj.(*v1alpha1.Workflow).Status.PersistentVolumeClaims)
					}
				}
			}
			final, err := c.Run(ctx, RunRequest{Workflow: workflow(t, spec), Observe: observe})
			if (err != nil) != tc.wantErr {
				t.Fatalf("Run: err %v, want error %v", err, tc.wantErr)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if strings.Join(h.calls, ",") != strings.Join(tc.wantCalls, ",") {
				t.Errorf("hook calls %v, want %v", h.calls, tc.wantCalls)
			}
			if h.startedAt != 0 || h.steps != tc.wantSteps {
				t.Errorf("%d steps started before WorkflowStarted returned and %d in all, want 0 and %d", h.startedAt, h.steps, tc.wantSteps)
			}
			if tc.wantErr {
				return
			}
			if tc.wantSteps > 0 && storedClaims != 1 {
				t.Errorf("the first status write holds %d persistentVolumeClaims, want the 1 WorkflowStarted set", storedClaims)
			}
			if final.Status.Phase != tc.wantPhase || !strings.Contains(final.Status.Message, tc.wantMsg) {
				t.Errorf("workflow %s %q, want %s %q", final.Status.Phase, final.Status.Message, tc.wantPhase, tc.wantMsg)
			}
			obj, err := st.Get(ctx, store.KindWorkflow, "default", "hooks")
			if err != nil {
				t.Fatal(err)
			}
			stored := obj.(*v1alpha1.Workflow)
			if stored.Status.Phase != tc.wantPhase {
				t.Errorf("stored phase %s, want %s", stored.Status.Phase, tc.wantPhase)
			}
			if len(stored.Status.PersistentVolumeClaims) != 0 {
				t.Errorf("stored persistentVolumeClaims %v: the completion hook's change was not written", stored.Status.PersistentVolumeClaims)
			}
		})
	}
}
