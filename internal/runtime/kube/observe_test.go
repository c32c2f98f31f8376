package kube

import (
	"strings"
	"testing"
	"time"

	apiv1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestObserve(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := waits{pull: time.Minute, unschedulable: 2 * time.Minute}
	tests := []struct {
		name    string
		status  string
		at      time.Duration // after creation
		phase   v1alpha1.NodePhase
		msg     string
		code    string
		result  string
		recheck time.Duration
	}{{
		name:   "succeeded with outputs",
		status: `containerStatuses: [{name: main, state: {terminated: {exitCode: 0, message: '{"phase":"Succeeded","exitCode":0,"outputs":{"result":"hi","parameters":[{"name":"p","value":"v"}]},"finishedAt":"2026-01-01T00:00:05.123456789Z"}'}}}]`,
		phase:  v1alpha1.NodeSucceeded, code: "0", result: "hi",
	}, {
		name:   "failed exit 3",
		status: `containerStatuses: [{name: main, state: {terminated: {exitCode: 3, message: '{"phase":"Failed","exitCode":3,"message":"main: Error (exit code 3)"}'}}}]`,
		phase:  v1alpha1.NodeFailed, msg: "main: Error (exit code 3)", code: "3",
	}, {
		name:   "no phase: by exit code",
		status: `containerStatuses: [{name: main, state: {terminated: {exitCode: 2, message: '{"exitCode":2}'}}}]`,
		phase:  v1alpha1.NodeFailed, code: "2",
	}, {
		name:   "OOMKilled without a message",
		status: `containerStatuses: [{name: main, state: {terminated: {exitCode: 137, reason: OOMKilled}}}]`,
		phase:  v1alpha1.NodeFailed, msg: "OOMKilled (exit code 137)", code: "137",
	}, {
		name:   "ended without a result",
		status: `containerStatuses: [{name: main, state: {terminated: {exitCode: 128, reason: StartError, message: "exec: no such file"}}}]`,
		phase:  v1alpha1.NodeError, msg: "the main container ended without a result (StartError: exec: no such file, exit code 128)", code: "128",
	}, {
		name:   "running",
		status: `phase: Running` + "\n" + `containerStatuses: [{name: main, state: {running: {startedAt: "2026-01-01T00:00:01Z"}}}]`,
		phase:  v1alpha1.NodeRunning,
	}, {
		name:   "never pull: at once",
		status: `containerStatuses: [{name: main, image: "nope:1", state: {waiting: {reason: ErrImageNeverPull, message: "not present with pull policy Never"}}}]`,
		phase:  v1alpha1.NodeError, msg: "image nope:1 is not present: ErrImageNeverPull: not present with pull policy Never",
	}, {
		name:   "pull back-off: wait",
		status: `containerStatuses: [{name: main, image: "nope:1", state: {waiting: {reason: ImagePullBackOff, message: "Back-off"}}}]`,
		at:     20 * time.Second, phase: v1alpha1.NodePending, recheck: 40 * time.Second,
	}, {
		name:   "pull back-off: bounded",
		status: `initContainerStatuses: [{name: braid-init, image: "braid:old", state: {waiting: {reason: ErrImagePull, message: "pull failed"}}}]`,
		at:     61 * time.Second, phase: v1alpha1.NodeError, msg: "image braid:old is not present: ErrImagePull: pull failed",
	}, {
		name:   "unschedulable: wait",
		status: `phase: Pending` + "\n" + `conditions: [{type: PodScheduled, status: "False", reason: Unschedulable, message: "0/1 nodes are available"}]`,
		at:     time.Minute, phase: v1alpha1.NodePending, recheck: time.Minute,
	}, {
		name:   "unschedulable: bounded",
		status: `phase: Pending` + "\n" + `conditions: [{type: PodScheduled, status: "False", reason: Unschedulable, message: "0/1 nodes are available"}]`,
		at:     3 * time.Minute, phase: v1alpha1.NodeError, msg: "pod unschedulable for 2m0s: 0/1 nodes are available",
	}, {
		name:   "deadline exceeded",
		status: `{phase: Failed, reason: DeadlineExceeded, message: "Pod was active on the node longer than the specified deadline"}`,
		phase:  v1alpha1.NodeFailed, msg: "Pod was active on the node longer than the specified deadline",
	}, {
		name:   "init failed",
		status: `{phase: Failed, initContainerStatuses: [{name: braid-init, state: {terminated: {exitCode: 1, reason: Error}}}]}`,
		phase:  v1alpha1.NodeError, msg: "init container braid-init failed (Error, exit code 1)",
	}, {
		name:   "pending",
		status: `phase: Pending`,
		phase:  v1alpha1.NodePending,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &apiv1.Pod{}
			if err := yaml.UnmarshalStrict([]byte(tc.status), &pod.Status); err != nil {
				t.Fatal(err)
			}
			pod.CreationTimestamp.Time = created
			o := observe(pod, created.Add(tc.at), w)
			if o.phase != tc.phase || o.message != tc.msg || o.recheck != tc.recheck {
				t.Fatalf("observe = %q %q recheck %v, want %q %q %v", o.phase, o.message, o.recheck, tc.phase, tc.msg, tc.recheck)
			}
			if tc.code != "" && (o.exitCode == nil || itoa(o.exitCode) != tc.code) {
				t.Errorf("exit code = %s, want %s", itoa(o.exitCode), tc.code)
			}
			if tc.result != "" && (o.outputs == nil || o.outputs.Result == nil || *o.outputs.Result != tc.result) {
				t.Errorf("outputs = %+v", o.outputs)
			}
			if strings.HasPrefix(tc.name, "succeeded") && o.finishedAt.Nanosecond() != 123456789 {
				t.Errorf("finishedAt = %v, want the emissary's nanoseconds", o.finishedAt)
			}
		})
	}
}
