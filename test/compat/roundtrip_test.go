package compat

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	clusterpkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/clusterworkflowtemplate"
	cronpkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/cronworkflow"
	"github.com/argoproj/argo-workflows/v4/pkg/apiclient/workflow"
	templatepkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/workflowtemplate"
	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	"google.golang.org/grpc/codes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The round trip compares, for every object of the conformance corpus, what
// was sent with what the server answers on a later get. Equal must be:
//   - the spec, whole, both encoded as JSON through Argo's Go types (so
//     zero values such as "inputs":{} read the same on both sides);
//   - metadata.name (or generateName, and a name starting with it);
//   - every label and annotation sent, with its value.
//
// Ignored, because the server writes them or the wire cannot carry them:
//   - status: the controller's (phase, nodes, times, stored templates);
//   - metadata.uid, resourceVersion, creationTimestamp, generation,
//     managedFields: assigned by the server on create and update;
//   - metadata.namespace: the corpus leaves it empty, and the request's
//     namespace is used (checked to be the one answered);
//   - labels and annotations under workflows.argoproj.io/ that were not
//     sent: braid adds them as Argo's controller does (phase, completed,
//     pod-name-format, ...); and on a workflow, those its
//     spec.workflowMetadata (labels, labelsFrom, annotations) gives it, as
//     Argo's controller copies them; any other added key is a difference;
//   - the random end of a name made from generateName, which is cut to 58
//     characters first, as Kubernetes does;
//   - apiVersion and kind (TypeMeta): Argo's protobuf messages have no
//     field for them, so they never cross the gRPC wire.
//
// Before sending, workflows get spec.suspend: true and cron workflows
// spec.suspend: true, so that nothing runs; the sent copy includes them.

// rtDoc is one document of the corpus.
type rtDoc struct {
	where string // file#index
	kind  string
	raw   []byte
}

var rtKinds = []string{"ClusterWorkflowTemplate", "WorkflowTemplate", "CronWorkflow", "Workflow"}

// conformanceDir is $BRAID_CONFORMANCE_DIR, else ../../../shared/conformance.
func conformanceDir(t *testing.T) string {
	dir := os.Getenv("BRAID_CONFORMANCE_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "conformance")
	}
	if _, err := os.Stat(filepath.Join(dir, "examples")); err != nil {
		if os.Getenv("BRAID_REQUIRE_CONFORMANCE") == "1" {
			t.Fatalf("no conformance corpus at %s, and BRAID_REQUIRE_CONFORMANCE=1 (set BRAID_CONFORMANCE_DIR): %v", dir, err)
		}
		t.Skipf("no conformance corpus at %s (set BRAID_CONFORMANCE_DIR): %v", dir, err)
	}
	return dir
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// corpusDocs reads every document of the corpus's examples whose kind the
// API serves.
func corpusDocs(t *testing.T, dir string) []rtDoc {
	t.Helper()
	var docs []rtDoc
	err := filepath.WalkDir(filepath.Join(dir, "examples"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		for i, part := range docSep.Split(string(data), -1) {
			var head struct {
				Kind string `json:"kind"`
			}
			if err := yaml.Unmarshal([]byte(part), &head); err != nil {
				return fmt.Errorf("%s#%d: %w", rel, i, err)
			}
			if slices.Contains(rtKinds, head.Kind) {
				docs = append(docs, rtDoc{where: fmt.Sprintf("%s#%d", rel, i), kind: head.Kind, raw: []byte(part)})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 100 {
		t.Fatalf("only %d objects in the corpus at %s", len(docs), dir)
	}
	return docs
}

// rtObject is what the round trip compares of one object.
type rtObject struct {
	meta metav1.ObjectMeta
	spec any // the typed spec
}

// added are the label and annotation keys a workflow's
// spec.workflowMetadata gives it.
func (o rtObject) added() (labels, annotations map[string]bool) {
	labels, annotations = map[string]bool{}, map[string]bool{}
	if s, ok := o.spec.(wfv1.WorkflowSpec); ok && s.WorkflowMetadata != nil {
		for k := range s.WorkflowMetadata.Labels {
			labels[k] = true
		}
		for k := range s.WorkflowMetadata.LabelsFrom {
			labels[k] = true
		}
		for k := range s.WorkflowMetadata.Annotations {
			annotations[k] = true
		}
	}
	return labels, annotations
}

// decode reads d into Argo's type, readied to send.
func decode(d rtDoc) (any, error) {
	var obj any
	switch d.kind {
	case "Workflow":
		obj = &wfv1.Workflow{}
	case "WorkflowTemplate":
		obj = &wfv1.WorkflowTemplate{}
	case "ClusterWorkflowTemplate":
		obj = &wfv1.ClusterWorkflowTemplate{}
	case "CronWorkflow":
		obj = &wfv1.CronWorkflow{}
	}
	if err := yaml.Unmarshal(d.raw, obj); err != nil {
		return nil, err
	}
	switch o := obj.(type) {
	case *wfv1.Workflow:
		suspended(o)
	case *wfv1.CronWorkflow:
		o.Spec.Suspend = true
	}
	return obj, nil
}

func objectOf(obj any) rtObject {
	switch o := obj.(type) {
	case *wfv1.Workflow:
		return rtObject{o.ObjectMeta, o.Spec}
	case *wfv1.WorkflowTemplate:
		return rtObject{o.ObjectMeta, o.Spec}
	case *wfv1.ClusterWorkflowTemplate:
		return rtObject{o.ObjectMeta, o.Spec}
	case *wfv1.CronWorkflow:
		return rtObject{o.ObjectMeta, o.Spec}
	}
	panic(fmt.Sprintf("kind %T", obj))
}

// rtClient holds a transport's service clients for the workers (which
// must not call t.Fatal).
type rtClient struct {
	*env
	wfs   workflow.WorkflowServiceClient
	wts   templatepkg.WorkflowTemplateServiceClient
	cwts  clusterpkg.ClusterWorkflowTemplateServiceClient
	crons cronpkg.CronWorkflowServiceClient
}

func newRTClient(t *testing.T, e *env) *rtClient {
	return &rtClient{env: e, wfs: e.wf(), wts: e.wt(t), cwts: e.cwt(t), crons: e.cron(t)}
}

// rtCreate creates obj over e's transport and returns the name answered.
func (e *rtClient) rtCreate(obj any) (string, error) {
	var got any
	var err error
	switch o := obj.(type) {
	case *wfv1.Workflow:
		got, err = e.wfs.CreateWorkflow(e.ctx, &workflow.WorkflowCreateRequest{Namespace: e.ns, Workflow: o})
	case *wfv1.WorkflowTemplate:
		got, err = e.wts.CreateWorkflowTemplate(e.ctx, &templatepkg.WorkflowTemplateCreateRequest{Namespace: e.ns, Template: o})
	case *wfv1.ClusterWorkflowTemplate:
		got, err = e.cwts.CreateClusterWorkflowTemplate(e.ctx, &clusterpkg.ClusterWorkflowTemplateCreateRequest{Template: o})
	case *wfv1.CronWorkflow:
		got, err = e.crons.CreateCronWorkflow(e.ctx, &cronpkg.CreateCronWorkflowRequest{Namespace: e.ns, CronWorkflow: o})
	}
	if err != nil {
		return "", err
	}
	return objectOf(got).meta.Name, nil
}

// rtGet reads back an object of kind by name over e's transport.
func (e *rtClient) rtGet(kind, name string) (rtObject, error) {
	var got any
	var err error
	switch kind {
	case "Workflow":
		got, err = e.wfs.GetWorkflow(e.ctx, &workflow.WorkflowGetRequest{Namespace: e.ns, Name: name})
	case "WorkflowTemplate":
		got, err = e.wts.GetWorkflowTemplate(e.ctx, &templatepkg.WorkflowTemplateGetRequest{Namespace: e.ns, Name: name})
	case "ClusterWorkflowTemplate":
		got, err = e.cwts.GetClusterWorkflowTemplate(e.ctx, &clusterpkg.ClusterWorkflowTemplateGetRequest{Name: name})
	case "CronWorkflow":
		got, err = e.crons.GetCronWorkflow(e.ctx, &cronpkg.GetCronWorkflowRequest{Namespace: e.ns, Name: name})
	}
	if err != nil {
		return rtObject{}, err
	}
	return objectOf(got), nil
}

// compareObject lists how got differs from sent (at most a few spec paths).
func compareObject(sent, got rtObject, namespaced bool, ns string) []string {
	var diffs []string
	switch {
	case sent.meta.Name != "" && got.meta.Name != sent.meta.Name:
		diffs = append(diffs, fmt.Sprintf("metadata.name %q, sent %q", got.meta.Name, sent.meta.Name))
	case sent.meta.Name == "" && (got.meta.GenerateName != sent.meta.GenerateName || !strings.HasPrefix(got.meta.Name, sent.meta.GenerateName[:min(58, len(sent.meta.GenerateName))])):
		diffs = append(diffs, fmt.Sprintf("metadata.generateName %q name %q, sent generateName %q", got.meta.GenerateName, got.meta.Name, sent.meta.GenerateName))
	}
	if namespaced && got.meta.Namespace != ns {
		diffs = append(diffs, fmt.Sprintf("metadata.namespace %q, want %q", got.meta.Namespace, ns))
	}
	labels, annotations := sent.added()
	diffs = append(diffs, compareKeys("labels", sent.meta.Labels, got.meta.Labels, labels)...)
	diffs = append(diffs, compareKeys("annotations", sent.meta.Annotations, got.meta.Annotations, annotations)...)
	var a, b any
	sa, _ := json.Marshal(sent.spec)
	sb, _ := json.Marshal(got.spec)
	_ = json.Unmarshal(sa, &a)
	_ = json.Unmarshal(sb, &b)
	var specDiffs []string
	diffJSON("spec", a, b, &specDiffs)
	if len(specDiffs) > 4 {
		specDiffs = append(specDiffs[:4], fmt.Sprintf("(%d more spec differences)", len(specDiffs)-4))
	}
	return append(diffs, specDiffs...)
}

// compareKeys: every key sent is answered with its value; keys answered
// but not sent must be braid's own (workflows.argoproj.io/) or added.
func compareKeys(what string, sent, got map[string]string, added map[string]bool) []string {
	var diffs []string
	for k, v := range sent {
		if g, ok := got[k]; !ok || g != v {
			diffs = append(diffs, fmt.Sprintf("metadata.%s[%s] = %q, sent %q", what, k, g, v))
		}
	}
	for k, v := range got {
		if _, ok := sent[k]; !ok && !added[k] && !strings.HasPrefix(k, "workflows.argoproj.io/") {
			diffs = append(diffs, fmt.Sprintf("metadata.%s[%s] = %q was added", what, k, v))
		}
	}
	sort.Strings(diffs)
	return diffs
}

// diffJSON appends the paths where a and b (decoded JSON) differ.
func diffJSON(path string, a, b any, out *[]string) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := maps.Clone(av)
		maps.Copy(keys, bv)
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			diffJSON(path+"."+k, av[k], bv[k], out)
		}
		return
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			break
		}
		for i := range av {
			diffJSON(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		sa, _ := json.Marshal(a)
		sb, _ := json.Marshal(b)
		*out = append(*out, fmt.Sprintf("%s: got %s, sent %s", path, clip(sb), clip(sa)))
	}
}

func clip(b []byte) string {
	if len(b) > 120 {
		return string(b[:120]) + "..."
	}
	return string(b)
}

// failures groups the round trip's failures by message, so that one fault
// shared by a hundred objects is reported once, with examples.
type failures struct {
	mu     sync.Mutex
	byMsg  map[string][]string
	order  []string
	passed int
}

func (f *failures) add(where, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byMsg == nil {
		f.byMsg = map[string][]string{}
	}
	if _, ok := f.byMsg[msg]; !ok {
		f.order = append(f.order, msg)
	}
	f.byMsg[msg] = append(f.byMsg[msg], where)
}

func (f *failures) ok() {
	f.mu.Lock()
	f.passed++
	f.mu.Unlock()
}

func (f *failures) report(t *testing.T, total int) {
	t.Helper()
	for _, msg := range f.order {
		where := f.byMsg[msg]
		sort.Strings(where)
		eg := where
		if len(eg) > 3 {
			eg = append(slices.Clone(eg[:3]), "...")
		}
		t.Errorf("%d object(s): %s\n    in %s", len(where), msg, strings.Join(eg, ", "))
	}
	t.Logf("%d of %d objects round-tripped", f.passed, total)
}

// TestRoundTrip: every Workflow, WorkflowTemplate, ClusterWorkflowTemplate
// and CronWorkflow of the conformance corpus, created through Argo's
// client, reads back equal (see the comment at the top of the file). In
// "grpc" objects are created over gRPC and read back over gRPC and over
// REST; in "http1" created and read over REST. The two run one after the
// other: ClusterWorkflowTemplates are cluster-wide and keep their names.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	docs := corpusDocs(t, conformanceDir(t))
	s := sharedServer(t)
	for _, http1 := range []bool{false, true} {
		name := map[bool]string{false: "grpc", true: "http1"}[http1]
		t.Run(name, func(t *testing.T) {
			e := newRTClient(t, newEnv(t, s, http1, "roundtrip-"+name))
			readers := []*rtClient{e}
			if !http1 {
				readers = append(readers, newRTClient(t, newEnv(t, s, true, e.ns)))
			}
			t.Cleanup(func() { deleteClusterTemplates(t, readers[len(readers)-1].env, docs) })
			var f failures
			for _, kinds := range [][]string{{"ClusterWorkflowTemplate", "WorkflowTemplate"}, {"CronWorkflow", "Workflow"}} {
				var batch []rtDoc
				for _, d := range docs {
					if slices.Contains(kinds, d.kind) {
						batch = append(batch, d)
					}
				}
				// A template may refer to another (templateRef), which must
				// exist first: a create refused for a missing one is tried
				// again after the others, up to three passes.
				for pass := 1; pass <= 3 && len(batch) > 0; pass++ {
					var mu sync.Mutex
					var again []rtDoc
					runWorkers(4, batch, func(d rtDoc) {
						if roundTrip(e, readers, d, &f, pass == 3) {
							mu.Lock()
							again = append(again, d)
							mu.Unlock()
						}
					})
					batch = again
				}
			}
			f.report(t, len(docs))
		})
	}
}

// runWorkers calls do on every doc from n goroutines.
func runWorkers(n int, docs []rtDoc, do func(rtDoc)) {
	ch := make(chan rtDoc)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range ch {
				do(d)
			}
		}()
	}
	for _, d := range docs {
		ch <- d
	}
	close(ch)
	wg.Wait()
}

// roundTrip creates d over e, reads it back through each reader, compares,
// and deletes a workflow at once. Unless final, a create refused because
// something it refers to is not found is not a failure: it answers true,
// to be tried again.
func roundTrip(e *rtClient, readers []*rtClient, d rtDoc, f *failures, final bool) (again bool) {
	where := d.kind + " " + d.where
	obj, err := decode(d)
	if err != nil {
		f.add(where, "decode: "+err.Error())
		return false
	}
	sent := objectOf(obj)
	name, err := e.rtCreate(obj)
	if sent.meta.Name == "" && sent.meta.GenerateName == "" {
		// A defect of the corpus (fun-with-gifs.yaml has its generateName
		// under labels): the server must refuse it.
		if codeOf(err) != codes.InvalidArgument {
			f.add(where, fmt.Sprintf("create of an object with neither name nor generateName over %s: %v, want InvalidArgument", e.name, err))
		} else {
			f.ok()
		}
		return false
	}
	if err != nil {
		if !final && strings.Contains(err.Error(), " not found") {
			return true
		}
		f.add(where, "create over "+e.name+": "+err.Error())
		return false
	}
	if name == "" {
		f.add(where, "create over "+e.name+" answered no name")
		return false
	}
	if d.kind == "Workflow" {
		defer func() {
			if _, err := readers[len(readers)-1].wfs.DeleteWorkflow(e.ctx, &workflow.WorkflowDeleteRequest{Namespace: e.ns, Name: name}); err != nil {
				f.add(where, "delete: "+err.Error())
			}
		}()
	}
	good := true
	for _, r := range readers {
		got, err := r.rtGet(d.kind, name)
		if err != nil {
			f.add(where, "get over "+r.name+": "+err.Error())
			good = false
			continue
		}
		for _, diff := range compareObject(sent, got, d.kind != "ClusterWorkflowTemplate", e.ns) {
			f.add(where, "read over "+r.name+": "+diff)
			good = false
		}
	}
	if good {
		f.ok()
	}
	return false
}

// deleteClusterTemplates deletes the corpus's ClusterWorkflowTemplates (a
// missing one is fine), so that the next transport can create them.
func deleteClusterTemplates(t *testing.T, e *env, docs []rtDoc) {
	for _, d := range docs {
		if d.kind != "ClusterWorkflowTemplate" {
			continue
		}
		obj, err := decode(d)
		if err != nil {
			continue
		}
		name := objectOf(obj).meta.Name
		if _, err := e.cwt(t).DeleteClusterWorkflowTemplate(e.ctx, &clusterpkg.ClusterWorkflowTemplateDeleteRequest{Name: name}); err != nil && codeOf(err) != codes.NotFound {
			t.Errorf("delete ClusterWorkflowTemplate %s: %v", name, err)
		}
	}
}
