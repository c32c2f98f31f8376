package server

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apiclient/clusterworkflowtemplate"
	"github.com/braidwf/braid/pkg/apiclient/cronworkflow"
	"github.com/braidwf/braid/pkg/apiclient/workflowtemplate"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// startServerStore is startServer that also returns the store, for tests
// that write behind the server's back (watch). opts may set KeepAlive.
func startServerStore(t testing.TB, opts Options) (string, *sqlite.Store) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts.Store, opts.Capabilities, opts.Version = st, sqliteCaps(st), testVersion
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return")
		}
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return l.Addr().String(), st
}

type errJSON struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// kindCase describes one kind's REST routes and a valid and an invalid
// object of it.
type kindCase struct {
	kind     string
	base     string // collection path; objects are base/name
	field    string // the request field carrying the object
	resource string
	obj      func(name, app string) string
	invalid  string // an object that fails validation
}

const tmplSpec = `"spec":{"entrypoint":"main","templates":[{"name":"main","container":{"image":"alpine","command":["echo","hi"]}}]}`

func kindCases() []kindCase {
	meta := func(name, app string) string {
		return `"metadata":{"name":"` + name + `","labels":{"app":"` + app + `"}}`
	}
	badSteps := `"spec":{"entrypoint":"main","templates":[{"name":"main","steps":[[{"name":"a","template":"nope"}]]}]}`
	return []kindCase{
		{kind: "WorkflowTemplate", base: "/api/v1/workflow-templates/argo", field: "template", resource: "workflowtemplates.argoproj.io",
			obj:     func(n, a string) string { return `{` + meta(n, a) + `,` + tmplSpec + `}` },
			invalid: `{"metadata":{"name":"bad"},` + badSteps + `}`},
		{kind: "ClusterWorkflowTemplate", base: "/api/v1/cluster-workflow-templates", field: "template", resource: "clusterworkflowtemplates.argoproj.io",
			obj:     func(n, a string) string { return `{` + meta(n, a) + `,` + tmplSpec + `}` },
			invalid: `{"metadata":{"name":"bad"},` + badSteps + `}`},
		{kind: "CronWorkflow", base: "/api/v1/cron-workflows/argo", field: "cronWorkflow", resource: "cronworkflows.argoproj.io",
			obj: func(n, a string) string {
				// The status is what the argo CLI sends.
				return `{` + meta(n, a) + `,"spec":{"schedules":["* * * * *"],"workflowSpec":` + strings.TrimPrefix(tmplSpec, `"spec":`) + `},` +
					`"status":{"active":null,"lastScheduledTime":null,"conditions":null,"succeeded":0,"failed":0,"phase":""}}`
			},
			invalid: `{"metadata":{"name":"bad"},"spec":{"schedules":["not a schedule"],"workflowSpec":` + strings.TrimPrefix(tmplSpec, `"spec":`) + `}}`},
	}
}

// object is the part of every kind a CRUD test looks at.
type object struct {
	Metadata struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		UID             string            `json:"uid"`
		ResourceVersion string            `json:"resourceVersion"`
		Labels          map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Entrypoint string `json:"entrypoint"`
		Suspend    *bool  `json:"suspend"`
	} `json:"spec"`
}

type objectList struct {
	Metadata struct {
		Continue string `json:"continue"`
	} `json:"metadata"`
	Items []object `json:"items"`
}

func names(l objectList) []string {
	out := []string{}
	for _, o := range l.Items {
		out = append(out, o.Metadata.Name)
	}
	return out
}

func TestKindsREST(t *testing.T) {
	base := "http://" + startServer(t)
	for _, k := range kindCases() {
		t.Run(k.kind, func(t *testing.T) {
			wrap := func(obj string) string { return `{"` + k.field + `":` + obj + `}` }
			mustDo := func(method, path, body string, want int) []byte {
				t.Helper()
				res := do(t, method, base+path, body)
				if res.status != want {
					t.Fatalf("%s %s: status %d, want %d: %s", method, path, res.status, want, res.body)
				}
				return res.body
			}
			wantErr := func(b []byte, code codes.Code, msg string) {
				t.Helper()
				got := decodeInto[errJSON](t, b)
				if got.Code != int(code) || !strings.Contains(got.Message, msg) {
					t.Errorf("error = %+v, want code %d containing %q", got, code, msg)
				}
			}

			// Create three; the collection's namespace defaults the object's.
			for _, n := range []string{"alpha", "beta", "gamma"} {
				app := "x"
				if n == "gamma" {
					app = "y"
				}
				o := decodeInto[object](t, mustDo("POST", k.base, wrap(k.obj(n, app)), 200))
				if o.Metadata.Name != n || o.Metadata.UID == "" || o.Metadata.ResourceVersion == "" {
					t.Fatalf("created %+v", o.Metadata)
				}
				if wantNS := map[bool]string{true: "argo", false: ""}[k.kind != "ClusterWorkflowTemplate"]; o.Metadata.Namespace != wantNS {
					t.Errorf("namespace = %q, want %q", o.Metadata.Namespace, wantNS)
				}
			}
			wantErr(mustDo("POST", k.base, wrap(k.obj("alpha", "x")), 409), codes.AlreadyExists, k.resource+` "alpha" already exists`)
			wantErr(mustDo("POST", k.base, wrap(k.invalid), 400), codes.InvalidArgument, "")
			wantErr(mustDo("POST", k.base, wrap(k.obj("Not_Valid", "x")), 400), codes.InvalidArgument, `metadata.name: Invalid value: "Not_Valid"`)
			wantErr(mustDo("POST", k.base, `{}`, 400), codes.InvalidArgument, "is required")
			if k.kind != "ClusterWorkflowTemplate" {
				other := strings.Replace(k.obj("delta", "x"), `"metadata":{`, `"metadata":{"namespace":"other",`, 1)
				wantErr(mustDo("POST", k.base, wrap(other), 400), codes.InvalidArgument, "does not match the namespace")
			}
			// A dry run validates and stores nothing.
			mustDo("POST", k.base, `{"`+k.field+`":`+k.obj("dry", "x")+`,"createOptions":{"dryRun":["All"]}}`, 200)
			wantErr(mustDo("GET", k.base+"/dry", "", 404), codes.NotFound, k.resource+` "dry" not found`)

			// Lint returns the object and stores nothing.
			lint := decodeInto[object](t, mustDo("POST", k.base+"/lint", wrap(k.obj("linted", "x")), 200))
			if lint.Metadata.Name != "linted" {
				t.Errorf("lint returned %+v", lint.Metadata)
			}
			mustDo("GET", k.base+"/linted", "", 404)
			wantErr(mustDo("POST", k.base+"/lint", wrap(k.invalid), 400), codes.InvalidArgument, "")

			// Get, list, label selector, namePattern, pagination.
			got := decodeInto[object](t, mustDo("GET", k.base+"/beta", "", 200))
			if got.Metadata.Name != "beta" || got.Metadata.Labels["app"] != "x" {
				t.Errorf("get beta = %+v", got.Metadata)
			}
			if diff := cmp.Diff([]string{"gamma", "beta", "alpha"}, names(decodeInto[objectList](t, mustDo("GET", k.base, "", 200)))); diff != "" {
				t.Errorf("list (-want +got)\n%s", diff)
			}
			if diff := cmp.Diff([]string{"beta", "alpha"}, names(decodeInto[objectList](t, mustDo("GET", k.base+"?listOptions.labelSelector=app%3Dx", "", 200)))); diff != "" {
				t.Errorf("list app=x (-want +got)\n%s", diff)
			}
			var paged []string
			cont := ""
			for range 5 {
				l := decodeInto[objectList](t, mustDo("GET", k.base+"?listOptions.limit=2&listOptions.continue="+cont, "", 200))
				paged = append(paged, names(l)...)
				if cont = l.Metadata.Continue; cont == "" {
					break
				}
			}
			if diff := cmp.Diff([]string{"gamma", "beta", "alpha"}, paged); diff != "" {
				t.Errorf("paged list (-want +got)\n%s", diff)
			}
			if k.kind == "WorkflowTemplate" {
				// Pages stay full when namePattern filters: "a" is in alpha, beta and gamma, "mm" only in gamma.
				l := decodeInto[objectList](t, mustDo("GET", k.base+"?namePattern=ta&listOptions.limit=1", "", 200))
				if diff := cmp.Diff([]string{"beta"}, names(l)); diff != "" || l.Metadata.Continue == "" {
					t.Errorf("namePattern page (-want +got, continue %q)\n%s", l.Metadata.Continue, diff)
				}
				l = decodeInto[objectList](t, mustDo("GET", k.base+"?namePattern=ta&listOptions.limit=1&listOptions.continue="+l.Metadata.Continue, "", 200))
				if diff := cmp.Diff([]string{}, names(l)); diff != "" || l.Metadata.Continue != "" {
					t.Errorf("namePattern page 2 (-want +got, continue %q)\n%s", l.Metadata.Continue, diff)
				}
			}
			if l := decodeInto[map[string]any](t, mustDo("GET", k.base+"?listOptions.labelSelector=app%3Dnone", "", 200)); l["items"] != nil {
				t.Errorf("empty list items = %v, want null", l["items"])
			}

			// Update: a stale resourceVersion conflicts (409, code 6); the current one wins.
			stale := got.Metadata.ResourceVersion
			upd := strings.Replace(k.obj("beta", "z"), `"name":"beta"`, `"name":"beta","resourceVersion":"`+stale+`"`, 1)
			after := decodeInto[object](t, mustDo("PUT", k.base+"/beta", wrap(upd), 200))
			if after.Metadata.Labels["app"] != "z" || after.Metadata.ResourceVersion == stale || after.Metadata.UID != got.Metadata.UID {
				t.Errorf("updated %+v (was rv %s uid %s)", after.Metadata, stale, got.Metadata.UID)
			}
			wantErr(mustDo("PUT", k.base+"/beta", wrap(upd), 409), codes.AlreadyExists, "the object has been modified")
			wantErr(mustDo("PUT", k.base+"/beta", wrap(k.obj("alpha", "z")), 400), codes.InvalidArgument, "does not match the name")
			wantErr(mustDo("PUT", k.base+"/missing", wrap(k.obj("missing", "z")), 404), codes.NotFound, k.resource+` "missing" not found`)
			wantErr(mustDo("PUT", k.base+"/beta", wrap(strings.Replace(k.invalid, `"bad"`, `"beta"`, 1)), 400), codes.InvalidArgument, "")

			if k.kind == "CronWorkflow" {
				for _, c := range []struct {
					verb string
					want bool
				}{{"suspend", true}, {"resume", false}, {"suspend", true}} {
					o := decodeInto[object](t, mustDo("PUT", k.base+"/beta/"+c.verb, `{}`, 200))
					if o.Spec.Suspend == nil || *o.Spec.Suspend != c.want {
						t.Errorf("%s: suspend = %v", c.verb, o.Spec.Suspend)
					}
					if g := decodeInto[object](t, mustDo("GET", k.base+"/beta", "", 200)); g.Spec.Suspend == nil || *g.Spec.Suspend != c.want {
						t.Errorf("%s: stored suspend = %v", c.verb, g.Spec.Suspend)
					}
				}
				wantErr(mustDo("PUT", k.base+"/missing/suspend", `{}`, 404), codes.NotFound, `cronworkflows.argoproj.io "missing" not found`)
			}

			// Delete answers {}; then the object is gone.
			if b := mustDo("DELETE", k.base+"/beta", "", 200); string(b) != "{}" {
				t.Errorf("delete body = %s", b)
			}
			wantErr(mustDo("GET", k.base+"/beta", "", 404), codes.NotFound, k.resource+` "beta" not found`)
			wantErr(mustDo("DELETE", k.base+"/beta", "", 404), codes.NotFound, k.resource+` "beta" not found`)
			wantErr(mustDo("DELETE", k.base+"/alpha?deleteOptions.preconditions.uid=nope", "", 409), codes.AlreadyExists, "precondition failed")
			mustDo("DELETE", k.base+"/alpha?deleteOptions.dryRun=All", "", 200)
			mustDo("GET", k.base+"/alpha", "", 200)
		})
	}
}

// A WorkflowTemplate may refer to a ClusterWorkflowTemplate, which must
// exist when it is created.
func TestTemplateRefValidation(t *testing.T) {
	base := "http://" + startServer(t)
	ref := `{"template":{"metadata":{"name":"caller"},"spec":{"entrypoint":"main","templates":[{"name":"main","steps":[[{"name":"a","templateRef":{"name":"shared","template":"main","clusterScope":true}}]]}]}}}`
	if res := do(t, "POST", base+"/api/v1/workflow-templates/argo", ref); res.status != 400 {
		t.Fatalf("create before its cluster template: %d %s", res.status, res.body)
	}
	if res := do(t, "POST", base+"/api/v1/cluster-workflow-templates", `{"template":{"metadata":{"name":"shared"},`+tmplSpec+`}}`); res.status != 200 {
		t.Fatalf("create cluster template: %d %s", res.status, res.body)
	}
	if res := do(t, "POST", base+"/api/v1/workflow-templates/argo", ref); res.status != 200 {
		t.Fatalf("create after its cluster template: %d %s", res.status, res.body)
	}
}

// The unimplemented services are routed: 501 with code 12, not 404.
func TestUnimplementedRoutes(t *testing.T) {
	base := "http://" + startServer(t)
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/api/v1/sync/argo", ""},
		{"GET", "/api/v1/event-sources/argo", ""},
		{"GET", "/api/v1/sensors/argo", ""},
	} {
		res := do(t, r.method, base+r.path, r.body)
		if e := decodeInto[errJSON](t, res.body); res.status != 501 || e.Code != int(codes.Unimplemented) {
			t.Errorf("%s %s: %d %s", r.method, r.path, res.status, res.body)
		}
	}
}

func TestKindsGRPC(t *testing.T) {
	addr := startServer(t)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), wireCodec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := func(err error) codes.Code { return status.Code(err) }
	spec := v1alpha1.WorkflowSpec{Entrypoint: "main", Templates: []v1alpha1.Template{{Name: "main", Container: nil, Suspend: &v1alpha1.SuspendTemplate{}}}}

	t.Run("WorkflowTemplate", func(t *testing.T) {
		c := workflowtemplate.NewWorkflowTemplateServiceClient(conn)
		in := &v1alpha1.WorkflowTemplate{Spec: spec}
		in.Name = "tmpl"
		created, err := c.CreateWorkflowTemplate(ctx, &workflowtemplate.WorkflowTemplateCreateRequest{Namespace: "ns1", Template: in})
		if err != nil {
			t.Fatal(err)
		}
		got := *created
		if got.Namespace != "ns1" || got.Spec.Entrypoint != "main" {
			t.Fatalf("created %+v", got.ObjectMeta)
		}
		got.Labels = map[string]string{"v": "2"}
		if _, err := c.UpdateWorkflowTemplate(ctx, &workflowtemplate.WorkflowTemplateUpdateRequest{Namespace: "ns1", Name: "tmpl", Template: &got}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.UpdateWorkflowTemplate(ctx, &workflowtemplate.WorkflowTemplateUpdateRequest{Namespace: "ns1", Name: "tmpl", Template: &got}); code(err) != codes.AlreadyExists {
			t.Errorf("stale update: %v", err)
		}
		list, err := c.ListWorkflowTemplates(ctx, &workflowtemplate.WorkflowTemplateListRequest{Namespace: "ns1", ListOptions: &metav1.ListOptions{LabelSelector: "v=2"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 {
			t.Errorf("list: %d items", len(list.Items))
		}
		if _, err := c.DeleteWorkflowTemplate(ctx, &workflowtemplate.WorkflowTemplateDeleteRequest{Namespace: "ns1", Name: "tmpl"}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetWorkflowTemplate(ctx, &workflowtemplate.WorkflowTemplateGetRequest{Namespace: "ns1", Name: "tmpl"}); code(err) != codes.NotFound {
			t.Errorf("get deleted: %v", err)
		}
	})

	t.Run("ClusterWorkflowTemplate", func(t *testing.T) {
		c := clusterworkflowtemplate.NewClusterWorkflowTemplateServiceClient(conn)
		in := &v1alpha1.ClusterWorkflowTemplate{Spec: spec}
		in.Name = "ctmpl"
		if _, err := c.CreateClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateCreateRequest{Template: in}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.LintClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateLintRequest{Template: in}); err != nil {
			t.Errorf("lint: %v", err)
		}
		got, err := c.GetClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateGetRequest{Name: "ctmpl"})
		if err != nil || got.Name != "ctmpl" {
			t.Fatalf("get: %v %v", got, err)
		}
		if _, err := c.DeleteClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateDeleteRequest{Name: "ctmpl"}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.DeleteClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateDeleteRequest{Name: "ctmpl"}); code(err) != codes.NotFound {
			t.Errorf("delete twice: %v", err)
		}
	})

	t.Run("CronWorkflow", func(t *testing.T) {
		c := cronworkflow.NewCronWorkflowServiceClient(conn)
		in := &v1alpha1.CronWorkflow{Spec: v1alpha1.CronWorkflowSpec{Schedules: []string{"0 * * * *"}, WorkflowSpec: spec}}
		in.Name = "cron"
		if _, err := c.CreateCronWorkflow(ctx, &cronworkflow.CreateCronWorkflowRequest{Namespace: "ns1", CronWorkflow: in}); err != nil {
			t.Fatal(err)
		}
		s, err := c.SuspendCronWorkflow(ctx, &cronworkflow.CronWorkflowSuspendRequest{Namespace: "ns1", Name: "cron"})
		if err != nil {
			t.Fatal(err)
		}
		if cw := s; cw.Spec.Suspend == nil || !*cw.Spec.Suspend {
			t.Errorf("suspended: %+v", cw.Spec.Suspend)
		}
		if _, err := c.ResumeCronWorkflow(ctx, &cronworkflow.CronWorkflowResumeRequest{Namespace: "ns1", Name: "nope"}); code(err) != codes.NotFound {
			t.Errorf("resume missing: %v", err)
		}
		bad := in.DeepCopy()
		bad.Spec.Schedules = []string{"never"}
		if _, err := c.LintCronWorkflow(ctx, &cronworkflow.LintCronWorkflowRequest{Namespace: "ns1", CronWorkflow: bad}); code(err) != codes.InvalidArgument {
			t.Errorf("lint bad schedule: %v", err)
		}
	})
}
