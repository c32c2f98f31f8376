package kube

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	apiv1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/executor/emissary"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func mustTemplate(t *testing.T, src string) *v1alpha1.Template {
	t.Helper()
	var tmpl v1alpha1.Template
	if err := yaml.UnmarshalStrict([]byte(src), &tmpl); err != nil {
		t.Fatalf("template: %v", err)
	}
	return &tmpl
}

func testBuilder() podBuilder {
	return podBuilder{braidImage: "braid:dev", braidPath: "/bin/braid", images: DefaultImages()}
}

func envOf(c apiv1.Container, name string) (apiv1.EnvVar, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e, true
		}
	}
	return apiv1.EnvVar{}, false
}

func TestBuildPod(t *testing.T) {
	tests := []struct {
		name  string
		tmpl  string
		run   func(*runtime.Run)
		check func(t *testing.T, p *apiv1.Pod)
		err   string
	}{{
		name: "container",
		tmpl: `
name: hello
container: {image: busybox, command: [sh, -c], args: ["echo $(HOME) hi"], env: [{name: A, value: b}]}
metadata: {labels: {team: x}, annotations: {note: why}}
serviceAccountName: runner
nodeSelector: {disk: ssd}
tolerations: [{key: k, operator: Exists}]
volumes: [{name: data, emptyDir: {}}]
`,
		check: func(t *testing.T, p *apiv1.Pod) {
			m := p.Spec.Containers[0]
			want := []string{"/var/run/braid/braid", "exec", "emissary", "--", "sh", "-c", "echo $(HOME) hi"}
			if strings.Join(m.Command, "|") != strings.Join(want, "|") || m.Args != nil {
				t.Errorf("command = %q args %q", m.Command, m.Args)
			}
			if m.Name != "main" || m.ImagePullPolicy != apiv1.PullIfNotPresent || m.TerminationMessagePolicy != apiv1.TerminationMessageReadFile ||
				m.TerminationMessagePath != "/dev/termination-log" {
				t.Errorf("main = %+v", m)
			}
			if p.Spec.RestartPolicy != apiv1.RestartPolicyNever || p.Spec.ServiceAccountName != "runner" || p.Spec.NodeSelector["disk"] != "ssd" ||
				len(p.Spec.Tolerations) != 1 {
				t.Errorf("spec = %+v", p.Spec)
			}
			if p.Labels["team"] != "x" || p.Labels[LabelWorkflow] != "wf" || p.Labels[LabelRunID] != runLabel("uid-1-wf-123") ||
				p.Annotations["note"] != "why" || p.Annotations[AnnotationRunID] != "uid-1-wf-123" ||
				p.Annotations[AnnotationNodeID] != "wf-123" || p.Annotations[AnnotationNodeName] != "wf[0].a" {
				t.Errorf("meta = %v %v", p.Labels, p.Annotations)
			}
			if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != "uid-1" || !*p.OwnerReferences[0].Controller {
				t.Errorf("owner = %+v", p.OwnerReferences)
			}
			if len(p.Spec.Volumes) != 2 || len(p.Spec.InitContainers) != 1 || p.Spec.InitContainers[0].Image != "braid:dev" {
				t.Errorf("volumes %v init %v", p.Spec.Volumes, p.Spec.InitContainers)
			}
			if e, _ := envOf(m, "A"); e.Value != "b" {
				t.Errorf("env A = %v", e)
			}
			e, ok := envOf(m, emissary.EnvTemplate)
			var back v1alpha1.Template
			if !ok || json.Unmarshal([]byte(strings.ReplaceAll(e.Value, "$$", "$")), &back) != nil || back.Container.Args[0] != "echo $(HOME) hi" {
				t.Errorf("ARGO_TEMPLATE = %q", e.Value)
			}
			if !strings.Contains(e.Value, "$$(HOME)") {
				t.Errorf("ARGO_TEMPLATE is not escaped: %q", e.Value)
			}
			if _, ok := envOf(m, emissary.EnvIncludeResult); !ok {
				t.Error("no include-result env")
			}
		},
	}, {
		name: "no command: entrypoint from the image table",
		tmpl: `{name: say, container: {image: "argoproj/argosay:v2", args: [echo, hi]}}`,
		check: func(t *testing.T, p *apiv1.Pod) {
			if got := strings.Join(p.Spec.Containers[0].Command[4:], " "); got != "/argosay echo hi" {
				t.Errorf("argv = %q", got)
			}
		},
	}, {
		name: "unknown image without command",
		tmpl: `{name: x, container: {image: "example/unknown:1"}}`,
		err:  `entrypoint of image "example/unknown:1" is not known`,
	}, {
		name: "script, resources, securityContext, workingDir, envFrom",
		tmpl: `
name: s
script:
  image: busybox
  command: [sh]
  source: echo hi
  workingDir: /work
  resources: {limits: {memory: 64Mi}}
  securityContext: {runAsUser: 1000}
  envFrom: [{configMapRef: {name: cm}}]
  imagePullPolicy: Never
activeDeadlineSeconds: 30
`,
		run: func(r *runtime.Run) {
			r.ActiveDeadline = 1500 * time.Millisecond
			r.Deadline = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		},
		check: func(t *testing.T, p *apiv1.Pod) {
			m := p.Spec.Containers[0]
			if strings.Join(m.Command[4:], " ") != "sh" || m.WorkingDir != "/work" || m.Resources.Limits.Memory().String() != "64Mi" ||
				*m.SecurityContext.RunAsUser != 1000 || len(m.EnvFrom) != 1 || m.ImagePullPolicy != apiv1.PullNever {
				t.Errorf("main = %+v", m)
			}
			if *p.Spec.ActiveDeadlineSeconds != 2 {
				t.Errorf("activeDeadlineSeconds = %d", *p.Spec.ActiveDeadlineSeconds)
			}
			if e, _ := envOf(m, emissary.EnvDeadline); e.Value != "2030-01-01T00:00:00Z" {
				t.Errorf("deadline env = %q", e.Value)
			}
			if e, _ := envOf(m, emissary.EnvActiveDeadline); e.Value != "1.5s" {
				t.Errorf("active deadline env = %q", e.Value)
			}
		},
	}, {
		name: "podSpecPatch (YAML) merges into main by name",
		tmpl: `
name: p
container: {image: busybox, command: [true]}
podSpecPatch: |
  containers:
  - name: main
    resources: {limits: {cpu: 500m}}
  priority: 5
`,
		check: func(t *testing.T, p *apiv1.Pod) {
			m := p.Spec.Containers[0]
			if len(p.Spec.Containers) != 1 || m.Resources.Limits.Cpu().String() != "500m" || m.Command[0] != "/var/run/braid/braid" {
				t.Errorf("main after patch = %+v", m)
			}
			if p.Spec.Priority == nil || *p.Spec.Priority != 5 {
				t.Errorf("priority = %v", p.Spec.Priority)
			}
		},
	}, {
		name: "podSpecPatch (JSON)",
		tmpl: `{name: p, container: {image: busybox, command: ["true"]}, podSpecPatch: '{"terminationGracePeriodSeconds": 3}'}`,
		check: func(t *testing.T, p *apiv1.Pod) {
			if p.Spec.TerminationGracePeriodSeconds == nil || *p.Spec.TerminationGracePeriodSeconds != 3 {
				t.Errorf("grace = %v", p.Spec.TerminationGracePeriodSeconds)
			}
			if e, ok := envOf(p.Spec.Containers[0], emissary.EnvKillGrace); !ok || e.Value != "3s" {
				t.Errorf("the emissary's kill grace = %+v (%v), want 3s", e, ok)
			}
		},
	}, {
		name: "bad podSpecPatch",
		tmpl: `{name: p, container: {image: busybox, command: ["true"]}, podSpecPatch: '{"containers": 3'}`,
		err:  "podSpecPatch",
	}, {
		name: "sidecars, init containers, mirrorVolumeMounts",
		tmpl: `
name: sc
container: {image: busybox, command: ["true"], volumeMounts: [{name: data, mountPath: /data}]}
volumes: [{name: data, emptyDir: {}}]
sidecars: [{name: db, image: busybox, command: [sleep, "100"], mirrorVolumeMounts: true}]
initContainers: [{name: prep, image: busybox, command: ["true"]}]
`,
		check: func(t *testing.T, p *apiv1.Pod) {
			if len(p.Spec.Containers) != 2 || p.Spec.Containers[1].Name != "db" || len(p.Spec.Containers[1].VolumeMounts) != 2 ||
				p.Spec.Containers[1].VolumeMounts[0].Name != "data" || p.Spec.Containers[1].ImagePullPolicy != apiv1.PullIfNotPresent {
				t.Errorf("containers = %+v", p.Spec.Containers)
			}
			db := p.Spec.Containers[1]
			if got := strings.Join(db.Command, " "); got != "/var/run/braid/braid exec emissary -- sleep 100" || db.Args != nil {
				t.Errorf("sidecar command = %q", got)
			}
			for name, want := range map[string]string{emissary.EnvRole: emissary.RoleSidecar, emissary.EnvStopAfter: "main", emissary.EnvContainerName: "db"} {
				if e, _ := envOf(db, name); e.Value != want {
					t.Errorf("sidecar env %s = %q, want %q", name, e.Value, want)
				}
			}
			if e, _ := envOf(p.Spec.Containers[0], emissary.EnvContainerName); e.Value != "main" {
				t.Errorf("main's container name env = %q", e.Value)
			}
			if _, ok := p.Annotations[AnnotationContainers]; ok {
				t.Error("a container template has the containers annotation")
			}
			if len(p.Spec.InitContainers) != 2 || p.Spec.InitContainers[0].Name != InitContainer || p.Spec.InitContainers[1].Name != "prep" {
				t.Errorf("init = %+v", p.Spec.InitContainers)
			}
		},
	}, {
		name: "sidecar without a command: entrypoint from the image table",
		tmpl: `{name: sc, container: {image: busybox, command: ["true"]}, sidecars: [{name: say, image: "argoproj/argosay:v2", args: [echo, hi]}]}`,
		check: func(t *testing.T, p *apiv1.Pod) {
			if got := strings.Join(p.Spec.Containers[1].Command[4:], " "); got != "/argosay echo hi" {
				t.Errorf("sidecar argv = %q", got)
			}
		},
	}, {
		name: "sidecar of an unknown image without a command",
		tmpl: `{name: sc, container: {image: busybox, command: ["true"]}, sidecars: [{name: db, image: "example/db:1"}]}`,
		err:  `sidecar db: the container sets no command and the entrypoint of image "example/db:1" is not known`,
	}, {
		name: "sidecar named main",
		tmpl: `{name: sc, container: {image: busybox, command: ["true"]}, sidecars: [{name: main, image: busybox, command: ["true"]}]}`,
		err:  "sidecar main: the name is taken",
	}, {
		name: "daemon",
		tmpl: `{name: d, daemon: true, container: {image: busybox, command: [httpd, -f]}}`,
		check: func(t *testing.T, p *apiv1.Pod) {
			if p.Annotations[AnnotationDaemon] != "true" {
				t.Errorf("annotations = %v", p.Annotations)
			}
		},
	}, {
		name: "containerSet",
		tmpl: `
name: set
volumes: [{name: ws, emptyDir: {}}]
containerSet:
  volumeMounts: [{name: ws, mountPath: /ws}]
  containers:
  - {name: a, image: busybox, command: [sh, -c, "echo a > /ws/x"]}
  - {name: main, image: "argoproj/argosay:v2", args: [cat, /ws/x], dependencies: [a]}
sidecars: [{name: db, image: busybox, command: [sleep, "100"], mirrorVolumeMounts: true}]
`,
		check: func(t *testing.T, p *apiv1.Pod) {
			cs := p.Spec.Containers
			if len(cs) != 3 || cs[0].Name != "a" || cs[1].Name != "main" || cs[2].Name != "db" {
				t.Fatalf("containers = %+v", cs)
			}
			if got := strings.Join(cs[1].Command, " "); got != "/var/run/braid/braid exec emissary -- /argosay cat /ws/x" {
				t.Errorf("main command = %q", got)
			}
			for _, c := range cs[:2] {
				if len(c.VolumeMounts) != 2 || c.VolumeMounts[0].MountPath != "/ws" || c.VolumeMounts[1].Name != binVolume ||
					c.TerminationMessagePolicy != apiv1.TerminationMessageReadFile {
					t.Errorf("%s: mounts %+v", c.Name, c.VolumeMounts)
				}
				if e, _ := envOf(c, emissary.EnvRole); e.Value != emissary.RoleContainer {
					t.Errorf("%s: role %q", c.Name, e.Value)
				}
				if e, _ := envOf(c, emissary.EnvContainerName); e.Value != c.Name {
					t.Errorf("%s: name env %q", c.Name, e.Value)
				}
				if _, ok := envOf(c, emissary.EnvTemplate); !ok {
					t.Errorf("%s: no template", c.Name)
				}
			}
			if e, _ := envOf(cs[2], emissary.EnvStopAfter); e.Value != "a,main" || len(cs[2].VolumeMounts) != 2 || cs[2].VolumeMounts[0].MountPath != "/ws" {
				t.Errorf("sidecar: stop after %q, mounts %+v", e.Value, cs[2].VolumeMounts)
			}
			if p.Annotations[AnnotationContainers] != "a,main" {
				t.Errorf("annotations = %v", p.Annotations)
			}
		},
	}, {
		name: "containerSet container of an unknown image without a command",
		tmpl: `{name: set, containerSet: {containers: [{name: main, image: "example/x:1"}]}}`,
		err:  `containerSet container main: the container sets no command`,
	}, {
		name: "artifact secrets become secretKeyRef env",
		tmpl: `
name: a
container: {image: busybox, command: ["true"]}
inputs:
  artifacts:
  - name: in
    path: /in
    s3: {key: k, accessKeySecret: {name: my-s3, key: accessKey}, secretKeySecret: {name: my-s3, key: secretKey}}
`,
		run: func(r *runtime.Run) {
			r.Artifacts = &step.ArtifactPlan{Key: "wf/pod", Repository: &v1alpha1.ArtifactRepository{S3: &v1alpha1.S3ArtifactRepository{
				S3Bucket: v1alpha1.S3Bucket{Bucket: "b", Endpoint: "minio:9000",
					AccessKeySecret: &apiv1.SecretKeySelector{LocalObjectReference: apiv1.LocalObjectReference{Name: "repo-creds"}, Key: "ak"}}}}}
		},
		check: func(t *testing.T, p *apiv1.Pod) {
			m := p.Spec.Containers[0]
			for _, name := range []string{"BRAID_SECRET_MY_S3_ACCESSKEY", "BRAID_SECRET_MY_S3_SECRETKEY", "BRAID_SECRET_REPO_CREDS_AK"} {
				e, ok := envOf(m, name)
				if !ok || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
					t.Errorf("%s = %+v", name, e)
				}
			}
			if _, ok := envOf(m, emissary.EnvArtifacts); !ok {
				t.Error("no artifacts env")
			}
		},
	}, {
		name: "resource template",
		tmpl: `{name: r, resource: {action: create, manifest: "kind: ConfigMap"}}`,
		err:  "cannot run resource and data templates",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := runtime.Run{ID: "uid-1-wf-123", Namespace: "ns", Workflow: "wf", WorkflowUID: "uid-1",
				Launch: step.Launch{NodeID: "wf-123", PodName: "wf-hello-123", Template: mustTemplate(t, tc.tmpl), IncludeResult: true,
					Env: map[string]string{"ARGO_NODE_NAME": "wf[0].a"}}}
			if tc.run != nil {
				tc.run(&run)
			}
			pod, err := testBuilder().build(run)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pod.Name != "wf-hello-123" || pod.Namespace != "ns" {
				t.Errorf("name = %s/%s", pod.Namespace, pod.Name)
			}
			tc.check(t, pod)
		})
	}
}
