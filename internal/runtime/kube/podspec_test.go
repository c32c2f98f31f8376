package kube

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	apiv1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func mustSpec(t *testing.T, src string) *v1alpha1.WorkflowSpec {
	t.Helper()
	var spec v1alpha1.WorkflowSpec
	if err := yaml.UnmarshalStrict([]byte(src), &spec); err != nil {
		t.Fatalf("spec: %v", err)
	}
	return &spec
}

// js renders v as compact JSON, for comparing parts of a pod.
func js(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

func volumeNames(p *apiv1.Pod) string {
	var names []string
	for _, v := range p.Spec.Volumes {
		names = append(names, v.Name)
	}
	return strings.Join(names, ",")
}

func TestApplyWorkflowSpec(t *testing.T) {
	const plain = `
name: main
container: {image: busybox, command: [echo, hi]}
`
	tests := []struct {
		name, spec, tmpl string
		check            func(t *testing.T, p *apiv1.Pod)
		err              string
	}{{
		name: "workflow values fill what the template leaves unset",
		spec: `
serviceAccountName: wf-sa
automountServiceAccountToken: false
executor: {serviceAccountName: exec-sa}
nodeSelector: {zone: a}
affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: k, operator: Exists}]}]}}}
tolerations: [{key: wf, operator: Exists}]
schedulerName: wf-scheduler
podPriorityClassName: wf-priority
securityContext: {runAsUser: 1000}
imagePullSecrets: [{name: regcred}]
hostNetwork: true
dnsPolicy: ClusterFirstWithHostNet
dnsConfig: {nameservers: [10.0.0.10]}
hostAliases: [{ip: 10.0.0.1, hostnames: [wf.local]}]
podResources: {limits: {cpu: "2"}}
`,
		tmpl: plain,
		check: func(t *testing.T, p *apiv1.Pod) {
			s := p.Spec
			if s.ServiceAccountName != "wf-sa" || s.AutomountServiceAccountToken == nil || *s.AutomountServiceAccountToken ||
				s.NodeSelector["zone"] != "a" || s.Affinity == nil || s.Affinity.NodeAffinity == nil ||
				js(s.Tolerations) != `[{"key":"wf","operator":"Exists"}]` || s.SchedulerName != "wf-scheduler" ||
				s.PriorityClassName != "wf-priority" || s.SecurityContext == nil || *s.SecurityContext.RunAsUser != 1000 ||
				js(s.ImagePullSecrets) != `[{"name":"regcred"}]` || !s.HostNetwork || s.DNSPolicy != apiv1.DNSClusterFirstWithHostNet ||
				s.DNSConfig == nil || s.DNSConfig.Nameservers[0] != "10.0.0.10" || len(s.HostAliases) != 1 ||
				s.Resources == nil || s.Resources.Limits.Cpu().String() != "2" {
				t.Errorf("spec = %s", js(s))
			}
		},
	}, {
		name: "the template's values win; host aliases add up",
		spec: `
serviceAccountName: wf-sa
automountServiceAccountToken: false
nodeSelector: {zone: a}
tolerations: [{key: wf, operator: Exists}]
schedulerName: wf-scheduler
podPriorityClassName: wf-priority
securityContext: {runAsUser: 1000}
hostAliases: [{ip: 10.0.0.1, hostnames: [wf.local]}]
`,
		tmpl: `
name: main
container: {image: busybox, command: [echo, hi]}
serviceAccountName: tmpl-sa
automountServiceAccountToken: true
nodeSelector: {zone: b}
tolerations: [{key: tmpl, operator: Exists}]
schedulerName: tmpl-scheduler
priorityClassName: tmpl-priority
securityContext: {runAsUser: 2000}
hostAliases: [{ip: 10.0.0.2, hostnames: [tmpl.local]}]
`,
		check: func(t *testing.T, p *apiv1.Pod) {
			s := p.Spec
			if s.ServiceAccountName != "tmpl-sa" || s.AutomountServiceAccountToken == nil || !*s.AutomountServiceAccountToken ||
				js(s.NodeSelector) != `{"zone":"b"}` || js(s.Tolerations) != `[{"key":"tmpl","operator":"Exists"}]` ||
				s.SchedulerName != "tmpl-scheduler" || s.PriorityClassName != "tmpl-priority" || *s.SecurityContext.RunAsUser != 2000 {
				t.Errorf("spec = %s", js(s))
			}
			if got := js(s.HostAliases); got != `[{"ip":"10.0.0.1","hostnames":["wf.local"]},{"ip":"10.0.0.2","hostnames":["tmpl.local"]}]` {
				t.Errorf("hostAliases = %s, want the workflow's then the template's", got)
			}
		},
	}, {
		name: "podMetadata adds what the template and braid do not set",
		spec: `podMetadata: {labels: {team: wf, tier: batch, workflows.argoproj.io/workflow: evil}, annotations: {note: wf, extra: "yes"}}`,
		tmpl: `
name: main
container: {image: busybox, command: [echo, hi]}
metadata: {labels: {team: tmpl}, annotations: {note: tmpl}}
`,
		check: func(t *testing.T, p *apiv1.Pod) {
			if p.Labels["team"] != "tmpl" || p.Labels["tier"] != "batch" || p.Labels[LabelWorkflow] != "wf" {
				t.Errorf("labels = %v", p.Labels)
			}
			if p.Annotations["note"] != "tmpl" || p.Annotations["extra"] != "yes" || p.Annotations[AnnotationNodeID] != "wf-1" {
				t.Errorf("annotations = %v", p.Annotations)
			}
		},
	}, {
		name: "workflow volumes and claims are added when mounted",
		spec: `
volumes:
- {name: scratch, emptyDir: {}}
- {name: config, configMap: {name: settings}}
- {name: unused, emptyDir: {}}
volumeClaimTemplates:
- metadata: {name: work}
  spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`,
		tmpl: `
name: main
container:
  image: busybox
  command: [echo, hi]
  volumeMounts: [{name: work, mountPath: /work}, {name: own, mountPath: /own}, {name: scratch, mountPath: /tmp/s}]
volumes: [{name: own, emptyDir: {}}]
initContainers:
- {name: prep, image: busybox, command: ["true"], volumeMounts: [{name: config, mountPath: /cfg}]}
`,
		check: func(t *testing.T, p *apiv1.Pod) {
			if got := volumeNames(p); got != "own,braid-bin,config,work,scratch" {
				t.Errorf("volumes %s, want own,braid-bin,config,work,scratch (only those mounted, the template's first)", got)
			}
			for _, v := range p.Spec.Volumes {
				if v.Name == "work" && (v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "wf-work") {
					t.Errorf("volume work = %s, want the claim wf-work", js(v))
				}
				if v.Name == "config" && (v.ConfigMap == nil || v.ConfigMap.Name != "settings") {
					t.Errorf("volume config = %s", js(v))
				}
			}
		},
	}, {
		name: "a mounted volume declared nowhere",
		spec: `volumes: [{name: scratch, emptyDir: {}}]`,
		tmpl: `
name: main
container: {image: busybox, command: [echo, hi], volumeMounts: [{name: nope, mountPath: /x}]}
`,
		err: "volume 'nope' not found in workflow spec",
	}, {
		name: "the workflow's podSpecPatch, then the template's",
		spec: `podSpecPatch: '{"terminationGracePeriodSeconds": 7, "containers": [{"name": "main", "resources": {"limits": {"cpu": "1"}}}]}'`,
		tmpl: `
name: main
container: {image: busybox, command: [echo, hi]}
podSpecPatch: |
  containers:
  - name: main
    resources: {limits: {memory: 64Mi}}
`,
		check: func(t *testing.T, p *apiv1.Pod) {
			lim := p.Spec.Containers[0].Resources.Limits
			if p.Spec.TerminationGracePeriodSeconds == nil || *p.Spec.TerminationGracePeriodSeconds != 7 ||
				lim.Cpu().String() != "1" || lim.Memory().String() != "64Mi" {
				t.Errorf("grace %v, limits %v: want both patches merged", p.Spec.TerminationGracePeriodSeconds, lim)
			}
		},
	}, {
		name: "a bad workflow podSpecPatch",
		spec: `podSpecPatch: '{"containers": 3}'`,
		tmpl: plain,
		err:  "the workflow's podSpecPatch",
	}, {
		name: "podGC marks the pods its selector selects",
		spec: `podGC: {strategy: OnPodSuccess, deleteDelayDuration: 30s, labelSelector: {matchLabels: {gc: "yes"}}}`,
		tmpl: `
name: main
container: {image: busybox, command: [echo, hi]}
metadata: {labels: {gc: "yes"}}
`,
		check: func(t *testing.T, p *apiv1.Pod) {
			if got := p.Annotations[AnnotationPodGC]; got != "OnPodSuccess/30s" {
				t.Errorf("%s = %q, want OnPodSuccess/30s", AnnotationPodGC, got)
			}
		},
	}, {
		name: "podGC leaves the pods its selector does not select",
		spec: `podGC: {strategy: OnPodCompletion, labelSelector: {matchLabels: {gc: "yes"}}}`,
		tmpl: plain,
		check: func(t *testing.T, p *apiv1.Pod) {
			if got, ok := p.Annotations[AnnotationPodGC]; ok {
				t.Errorf("%s = %q on a pod the selector does not select", AnnotationPodGC, got)
			}
		},
	}, {
		name: "a podGC delay in seconds",
		spec: `podGC: {strategy: OnWorkflowCompletion, deleteDelayDuration: "5"}`,
		tmpl: plain,
		check: func(t *testing.T, p *apiv1.Pod) {
			if got := p.Annotations[AnnotationPodGC]; got != "OnWorkflowCompletion/5s" {
				t.Errorf("%s = %q, want OnWorkflowCompletion/5s", AnnotationPodGC, got)
			}
		},
	}, {
		name: "a bad podGC delay",
		spec: `podGC: {strategy: OnPodCompletion, deleteDelayDuration: soon}`,
		tmpl: plain,
		err:  `deleteDelayDuration "soon"`,
	}, {
		name: "no workflow spec",
		tmpl: plain,
		check: func(t *testing.T, p *apiv1.Pod) {
			if p.Spec.ServiceAccountName != "" || volumeNames(p) != "braid-bin" {
				t.Errorf("spec = %s", js(p.Spec))
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := runtime.Run{ID: "uid-wf-1", Namespace: "ns", Workflow: "wf", WorkflowUID: "uid",
				Launch: step.Launch{NodeID: "wf-1", PodName: "wf-main-1", Template: mustTemplate(t, tc.tmpl),
					ActiveDeadline: time.Minute}}
			if tc.spec != "" {
				run.Spec = mustSpec(t, tc.spec)
			}
			pod, err := testBuilder().build(run)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				if _, ok := err.(userError); !ok {
					t.Errorf("err %T, want a userError (the node ends Error, the runtime goes on)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, pod)
		})
	}
}

func TestPodGCAnnotation(t *testing.T) {
	tests := []struct {
		value    string
		strategy v1alpha1.PodGCStrategy
		delay    time.Duration
		ok       bool
	}{
		{value: "OnPodCompletion/0s", strategy: v1alpha1.PodGCOnPodCompletion, ok: true},
		{value: "OnWorkflowSuccess/1m30s", strategy: v1alpha1.PodGCOnWorkflowSuccess, delay: 90 * time.Second, ok: true},
		{value: "OnPodSuccess", strategy: v1alpha1.PodGCOnPodSuccess, ok: true},
	}
	for _, tc := range tests {
		p := &apiv1.Pod{}
		p.Annotations = map[string]string{AnnotationPodGC: tc.value}
		s, d, ok := podGC(p)
		if s != tc.strategy || d != tc.delay || ok != tc.ok {
			t.Errorf("podGC(%q) = %s, %v, %v; want %s, %v, %v", tc.value, s, d, ok, tc.strategy, tc.delay, tc.ok)
		}
	}
	if _, _, ok := podGC(&apiv1.Pod{}); ok {
		t.Error("a pod without the annotation is collected")
	}
}
