package kube_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/kube"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestStatusSubresource(t *testing.T) {
	c := newCluster(t)
	s := newStore(t, c, kube.Options{})
	ctx := ctxT(t)
	if sub, err := s.StatusSubresource(ctx); err != nil || !sub {
		t.Fatal("the Workflow CRD has no status subresource")
	}
	wf := newWorkflow(c.ns, "st", nil)
	if err := s.Create(ctx, wf); err != nil {
		t.Fatal(err)
	}
	stale := wf.DeepCopy()
	w0 := s.Writes()
	wf.Status.Phase = v1alpha1.WorkflowRunning
	wf.Status.Nodes = bigNodes(wf.Name, 5)
	rv := wf.ResourceVersion
	if err := s.UpdateWorkflowStatus(ctx, wf, nil); err != nil {
		t.Fatal(err)
	}
	if wf.ResourceVersion == rv {
		t.Fatal("UpdateWorkflowStatus did not set the new resourceVersion")
	}
	if d := s.Writes() - w0; d != 1 {
		t.Fatalf("one status update cost %d API writes", d)
	}
	stale.Status.Phase = v1alpha1.WorkflowFailed
	if err := s.UpdateWorkflowStatus(ctx, stale, nil); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("status update at a stale resourceVersion: %v, want ErrConflict", err)
	}
	raw := c.rawWorkflow(t, wf.Name)
	if p, _, _ := unstructured.NestedString(raw.Object, "status", "phase"); p != "Running" {
		t.Fatalf("stored phase %q", p)
	}
	// Create with a status: the status lands too.
	withStatus := newWorkflow(c.ns, "created-running", nil)
	withStatus.Status.Phase = v1alpha1.WorkflowRunning
	if err := s.Create(ctx, withStatus); err != nil {
		t.Fatal(err)
	}
	if p, _, _ := unstructured.NestedString(c.rawWorkflow(t, withStatus.Name).Object, "status", "phase"); p != "Running" {
		t.Fatalf("created with phase Running, stored %q", p)
	}
	if err := s.Delete(ctx, store.KindWorkflow, c.ns, withStatus.Name); err != nil {
		t.Fatal(err)
	}
	// Update changes the spec and the status: both land (two writes).
	wf.Spec.Entrypoint = "other"
	wf.Status.Message = "spec changed"
	w0 = s.Writes()
	if err := s.Update(ctx, wf); err != nil {
		t.Fatal(err)
	}
	if d := s.Writes() - w0; d != 2 {
		t.Fatalf("an update of spec and status cost %d writes, want 2", d)
	}
	got := get(t, s, c.ns, wf.Name)
	if got.Spec.Entrypoint != "other" || got.Status.Message != "spec changed" || len(got.Status.Nodes) != 6 {
		t.Fatalf("after update: entrypoint %q message %q nodes %d", got.Spec.Entrypoint, got.Status.Message, len(got.Status.Nodes))
	}
	// A workflow from List has no nodes; updating it keeps the stored ones.
	list, _, err := s.List(ctx, store.KindWorkflow, c.ns, store.ListOptions{})
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %d", err, len(list))
	}
	lw := list[0].(*v1alpha1.Workflow)
	if lw.Status.Nodes != nil {
		t.Fatal("List returned nodes")
	}
	lw.Labels = map[string]string{"k": "v"}
	w0 = s.Writes()
	if err := s.Update(ctx, lw); err != nil {
		t.Fatal(err)
	}
	if d := s.Writes() - w0; d != 1 {
		t.Fatalf("a label update cost %d writes, want 1", d)
	}
	if got := get(t, s, c.ns, wf.Name); len(got.Status.Nodes) != 6 || got.Labels["k"] != "v" {
		t.Fatalf("after a nodeless update: %d nodes, labels %v", len(got.Status.Nodes), got.Labels)
	}
}

func TestCompressionRoundTrip(t *testing.T) {
	c := newCluster(t)
	s := newStore(t, c, kube.Options{CompressAbove: 4 << 10})
	ctx := ctxT(t)
	wf := newWorkflow(c.ns, "zip", nil)
	if err := s.Create(ctx, wf); err != nil {
		t.Fatal(err)
	}
	wf.Status.Nodes = bigNodes(wf.Name, 100)
	if err := s.UpdateWorkflowStatus(ctx, wf, nil); err != nil {
		t.Fatal(err)
	}
	raw := c.rawWorkflow(t, wf.Name)
	z, _, _ := unstructured.NestedString(raw.Object, "status", "compressedNodes")
	if _, has, _ := unstructured.NestedMap(raw.Object, "status", "nodes"); has || z == "" {
		t.Fatalf("stored: nodes present %v, compressedNodes %d bytes; want compressed only", has, len(z))
	}
	if n := decodeCompressed(t, z); !sameJSON(n, wf.Status.Nodes) {
		t.Fatal("compressedNodes does not decode (gzip + base64 of the nodes JSON) to the nodes written")
	}
	// Every reader sees the nodes: this store, and a new one (informer).
	requireNodes(t, get(t, s, c.ns, wf.Name), wf.Status.Nodes)
	other := newStore(t, c, kube.Options{})
	requireNodes(t, get(t, other, c.ns, wf.Name), wf.Status.Nodes)
	// A workflow from List (no nodes) updated keeps its compressed nodes.
	list, _, err := s.List(ctx, store.KindWorkflow, c.ns, store.ListOptions{Name: wf.Name})
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %d", err, len(list))
	}
	lw := list[0].(*v1alpha1.Workflow)
	lw.Labels = map[string]string{"listed": "yes"}
	if err := s.Update(ctx, lw); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, c.ns, wf.Name); got.Labels["listed"] != "yes" {
		t.Fatal("label update lost")
	} else {
		requireNodes(t, got, wf.Status.Nodes)
	}
	wf.ResourceVersion = lw.ResourceVersion
	// Back under the threshold: plain nodes again.
	wf.Status.Nodes = bigNodes(wf.Name, 2)
	if err := s.UpdateWorkflowStatus(ctx, wf, nil); err != nil {
		t.Fatal(err)
	}
	raw = c.rawWorkflow(t, wf.Name)
	if z, _, _ := unstructured.NestedString(raw.Object, "status", "compressedNodes"); z != "" {
		t.Fatal("small nodes are still compressed")
	}
	eventually(t, "the other store sees 3 nodes", func() error {
		if n := len(get(t, other, c.ns, wf.Name).Status.Nodes); n != 3 {
			return errors.New("not yet")
		}
		return nil
	})
}

// TestCorruptCompressedNodes: a status that does not decode is an error
// for Get, not a panic nor an empty node map.
func TestCorruptCompressedNodes(t *testing.T) {
	c := newCluster(t)
	s := newStore(t, c, kube.Options{})
	ctx := ctxT(t)
	wf := newWorkflow(c.ns, "corrupt", nil)
	if err := s.Create(ctx, wf); err != nil {
		t.Fatal(err)
	}
	raw := c.rawWorkflow(t, wf.Name)
	for _, z := range []string{"!!not base64", base64.StdEncoding.EncodeToString([]byte("not gzip"))} {
		_ = unstructured.SetNestedField(raw.Object, z, "status", "compressedNodes")
		var err error
		raw, err = c.dyn.Resource(wfGVR).Namespace(c.ns).UpdateStatus(ctx, raw, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rv := raw.GetResourceVersion()
		eventually(t, "the informer sees rv "+rv, func() error {
			list, _, err := s.List(ctx, store.KindWorkflow, c.ns, store.ListOptions{Name: wf.Name})
			if err != nil || len(list) != 1 || list[0].GetResourceVersion() != rv {
				return errors.New("not yet")
			}
			return nil
		})
		if _, err := s.Get(ctx, store.KindWorkflow, c.ns, wf.Name); err == nil {
			t.Fatalf("compressedNodes %q: Get gave no error", z)
		}
	}
}

// Test10000Nodes writes a 10,000-node status with the default options: it
// is compressed and fits etcd's 1.5 MiB request limit without an offloader.
func Test10000Nodes(t *testing.T) {
	const etcdLimit = 3 << 19 // 1.5 MiB
	nodes := bigNodes("big", 10000)
	js, _ := json.Marshal(nodes)
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	_, _ = zw.Write(js)
	_ = zw.Close()
	b64 := base64.StdEncoding.EncodedLen(buf.Len())
	t.Logf("10,000 nodes: JSON %d bytes, gzip %d bytes, base64 %d bytes (%.1f%% of etcd's 1.5 MiB)",
		len(js), buf.Len(), b64, 100*float64(b64)/etcdLimit)
	if b64 > kube.DefaultOffloadAbove {
		t.Fatalf("10,000 compressed nodes take %d bytes, above the offload limit %d", b64, kube.DefaultOffloadAbove)
	}

	c := newCluster(t)
	s := newStore(t, c, kube.Options{})
	ctx := ctxT(t)
	wf := newWorkflow(c.ns, "big", nil)
	if err := s.Create(ctx, wf); err != nil {
		t.Fatal(err)
	}
	wf.Status.Phase = v1alpha1.WorkflowRunning
	wf.Status.Nodes = nodes
	start := time.Now()
	if err := s.UpdateWorkflowStatus(ctx, wf, nil); err != nil {
		t.Fatalf("write 10,000 nodes: %v", err)
	}
	took := time.Since(start)
	raw := c.rawWorkflow(t, wf.Name)
	size, _ := json.Marshal(raw.Object)
	z, _, _ := unstructured.NestedString(raw.Object, "status", "compressedNodes")
	t.Logf("stored object: %d bytes (compressedNodes %d); status write took %v", len(size), len(z), took)
	if len(size) > etcdLimit || z == "" {
		t.Fatalf("stored object is %d bytes, compressed %d", len(size), len(z))
	}
	start = time.Now()
	requireNodes(t, get(t, newStore(t, c, kube.Options{}), c.ns, wf.Name), nodes)
	t.Logf("a new store's first Get (informer sync, decompress, copy) took %v", time.Since(start))
}

func TestListFiltersAndPaging(t *testing.T) {
	c := newCluster(t)
	s := newStore(t, c, kube.Options{})
	ctx := ctxT(t)
	names := []string{"alpha-1", "alpha-2", "beta-1", "beta-2", "gamma-1", "gamma-2", "gamma-3"}
	created := time.Now().Add(-time.Second)
	for i, n := range names {
		wf := newWorkflow(c.ns, n, map[string]string{"team": n[:len(n)-2], "idx": string(rune('0' + i))})
		if err := s.Create(ctx, wf); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			wf.Status.Phase = v1alpha1.WorkflowSucceeded
			if err := s.UpdateWorkflowStatus(ctx, wf, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name string
		opts store.ListOptions
		want []string
	}{
		{"all", store.ListOptions{}, names},
		{"label", store.ListOptions{LabelSelector: "team=gamma"}, []string{"gamma-1", "gamma-2", "gamma-3"}},
		{"label set", store.ListOptions{LabelSelector: "team in (alpha,beta),idx!=0"}, []string{"alpha-2", "beta-1", "beta-2"}},
		{"phase", store.ListOptions{FieldSelector: "status.phase=Succeeded"}, []string{"alpha-1", "beta-1", "gamma-1", "gamma-3"}},
		{"not phase", store.ListOptions{FieldSelector: "status.phase!=Succeeded"}, []string{"alpha-2", "beta-2", "gamma-2"}},
		{"name field", store.ListOptions{FieldSelector: "metadata.name==beta-2,metadata.namespace=" + c.ns}, []string{"beta-2"}},
		{"exact", store.ListOptions{Name: "beta-1"}, []string{"beta-1"}},
		{"prefix", store.ListOptions{Name: "gam", NameFilter: "Prefix"}, []string{"gamma-1", "gamma-2", "gamma-3"}},
		{"contains", store.ListOptions{Name: "-2", NameFilter: "Contains"}, []string{"alpha-2", "beta-2", "gamma-2"}},
		{"not equals", store.ListOptions{Name: "alpha-1", NameFilter: "NotEquals", LabelSelector: "team=alpha"}, []string{"alpha-2"}},
		{"created window", store.ListOptions{CreatedAfter: created.Add(-time.Hour), CreatedBefore: time.Now().Add(time.Hour)}, names},
		{"created after now", store.ListOptions{CreatedAfter: time.Now().Add(time.Hour)}, nil},
		{"created before", store.ListOptions{CreatedBefore: created.Add(-time.Hour)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, next, err := s.List(ctx, store.KindWorkflow, c.ns, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := sortedNames(objs); !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v (next %q)", got, tt.want, next)
			}
		})
	}
	// Paging: pages of 3 cover every workflow once, newest first.
	var all []store.Object
	cont, pages := "", 0
	for {
		objs, next, err := s.List(ctx, store.KindWorkflow, c.ns, store.ListOptions{Limit: 3, Continue: cont})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(objs) > 3 {
			t.Fatalf("page of %d", len(objs))
		}
		all = append(all, objs...)
		if next == "" {
			break
		}
		cont = next
	}
	if got := sortedNames(all); pages != 3 || !slices.Equal(got, names) {
		t.Fatalf("%d pages gave %v", pages, got)
	}
	for i := 1; i < len(all); i++ {
		if all[i].GetCreationTimestamp().After(all[i-1].GetCreationTimestamp().Time) {
			t.Fatalf("not newest first at %d", i)
		}
	}
	if _, _, err := s.List(ctx, store.KindWorkflow, c.ns, store.ListOptions{Continue: "!!"}); err == nil {
		t.Fatal("a bad continue token was accepted")
	}
}

// TestWriteLatency measures UpdateWorkflowStatus of a small workflow.
func TestWriteLatency(t *testing.T) {
	c := newCluster(t)
	s := newStore(t, c, kube.Options{})
	ctx := ctxT(t)
	wf := newWorkflow(c.ns, "lat", nil)
	if err := s.Create(ctx, wf); err != nil {
		t.Fatal(err)
	}
	const n = 50
	w0 := s.Writes()
	var d []time.Duration
	for i := range n {
		wf.Status.Nodes = bigNodes(wf.Name, 1+i%5)
		start := time.Now()
		if err := s.UpdateWorkflowStatus(ctx, wf, nil); err != nil {
			t.Fatal(err)
		}
		d = append(d, time.Since(start))
	}
	if w := s.Writes() - w0; w != n {
		t.Fatalf("%d status updates counted %d writes", n, w)
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	t.Logf("UpdateWorkflowStatus (2-6 nodes): median %v, p90 %v, max %v over %d writes", d[n/2], d[n*9/10], d[n-1], n)
}

func get(t *testing.T, s *kube.Store, ns, name string) *v1alpha1.Workflow {
	t.Helper()
	o, err := s.Get(ctxT(t), store.KindWorkflow, ns, name)
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return o.(*v1alpha1.Workflow)
}

func requireNodes(t *testing.T, wf *v1alpha1.Workflow, want v1alpha1.Nodes) {
	t.Helper()
	if wf.Status.CompressedNodes != "" || wf.Status.OffloadNodeStatusVersion != "" {
		t.Fatal("a reader sees compressedNodes or offloadNodeStatusVersion")
	}
	if len(wf.Status.Nodes) != len(want) {
		t.Fatalf("%d nodes, want %d", len(wf.Status.Nodes), len(want))
	}
	if !sameJSON(wf.Status.Nodes, want) {
		t.Fatal("nodes differ from those written")
	}
}

// sameJSON compares as the API does (times decode in the local zone).
func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func decodeCompressed(t *testing.T, z string) v1alpha1.Nodes {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(z)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var n v1alpha1.Nodes
	if err := json.NewDecoder(zr).Decode(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func sortedNames(objs []store.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	sort.Strings(out)
	return out
}
