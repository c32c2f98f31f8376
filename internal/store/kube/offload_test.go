package kube_test

import (
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/kube"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// pgOffloader opens the offloader on $BRAID_TEST_POSTGRES, or skips.
func pgOffloader(t *testing.T) *kube.PGOffloader {
	t.Helper()
	dsn := os.Getenv("BRAID_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("BRAID_REQUIRE_POSTGRES") == "1" {
			t.Fatal("BRAID_TEST_POSTGRES is unset and BRAID_REQUIRE_POSTGRES=1")
		}
		t.Skip("BRAID_TEST_POSTGRES is unset: run `eval \"$(hack/postgres.sh up | tail -1)\"`")
	}
	p, err := kube.OpenPGOffloader(ctxT(t), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func TestPGOffloader(t *testing.T) {
	p := pgOffloader(t)
	ctx := ctxT(t)
	uid := "test-" + randHex(8)
	t.Cleanup(func() { _ = p.Delete(ctx, uid) })
	n1, n2 := bigNodes("a", 3), bigNodes("a", 4)
	v1, err := p.Save(ctx, uid, n1)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := p.Save(ctx, uid, n1); err != nil || again != v1 {
		t.Fatalf("saving the same nodes again: %q %v, want %q", again, err, v1)
	}
	v2, err := p.Save(ctx, uid, n2)
	if err != nil || v2 == v1 {
		t.Fatalf("second version %q (first %q): %v", v2, v1, err)
	}
	for v, want := range map[string]v1alpha1.Nodes{v1: n1, v2: n2} {
		got, err := p.Load(ctx, uid, v)
		if err != nil || !sameJSON(got, want) {
			t.Fatalf("load %s: %v, %d nodes", v, err, len(got))
		}
	}
	if _, err := p.Load(ctx, uid, "sha256:none"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("load of a missing version: %v, want ErrNotFound", err)
	}
	// Prune keeps the current version and what is younger than the cut.
	if err := p.Prune(ctx, uid, v2, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if vs, _ := p.Versions(ctx, uid); len(vs) != 2 {
		t.Fatalf("a prune with an hour's grace left %v", vs)
	}
	if err := p.Prune(ctx, uid, v2, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if vs, _ := p.Versions(ctx, uid); !slices.Equal(vs, []string{v2}) {
		t.Fatalf("after prune: %v, want [%s]", vs, v2)
	}
	if err := p.Delete(ctx, uid); err != nil {
		t.Fatal(err)
	}
	if vs, _ := p.Versions(ctx, uid); len(vs) != 0 {
		t.Fatalf("after delete: %v", vs)
	}
}

// TestOffloadRoundTrip: nodes above the offload limit go to PostgreSQL,
// the object carries only their version, and every reader gets the nodes.
func TestOffloadRoundTrip(t *testing.T) {
	p := pgOffloader(t)
	c := newCluster(t)
	opts := kube.Options{CompressAbove: 1 << 10, OffloadAbove: 4 << 10, Offloader: p, OffloadGrace: -time.Hour}
	s := newStore(t, c, opts)
	ctx := ctxT(t)
	wf := newWorkflow(c.ns, "off", nil)
	if err := s.Create(ctx, wf); err != nil {
		t.Fatal(err)
	}
	uid := string(wf.UID)
	wf.Status.Nodes = bigNodes(wf.Name, 500)
	if err := s.UpdateWorkflowStatus(ctx, wf, nil); err != nil {
		t.Fatal(err)
	}
	raw := c.rawWorkflow(t, wf.Name)
	v1, _, _ := unstructured.NestedString(raw.Object, "status", "offloadNodeStatusVersion")
	z, _, _ := unstructured.NestedString(raw.Object, "status", "compressedNodes")
	if _, has, _ := unstructured.NestedMap(raw.Object, "status", "nodes"); has || z != "" || v1 == "" {
		t.Fatalf("stored: nodes %v, compressed %d bytes, version %q; want only a version", has, len(z), v1)
	}
	requireNodes(t, get(t, s, c.ns, wf.Name), wf.Status.Nodes)
	other := newStore(t, c, opts)
	requireNodes(t, get(t, other, c.ns, wf.Name), wf.Status.Nodes)

	// A new version replaces the old one (no grace here): one row is left.
	wf.Status.Nodes = bigNodes(wf.Name, 600)
	if err := s.UpdateWorkflowStatus(ctx, wf, nil); err != nil {
		t.Fatal(err)
	}
	v2, _, _ := unstructured.NestedString(c.rawWorkflow(t, wf.Name).Object, "status", "offloadNodeStatusVersion")
	if vs, err := p.Versions(ctx, uid); err != nil || !slices.Equal(vs, []string{v2}) || v2 == v1 {
		t.Fatalf("versions after the second write: %v (%v), want [%s]", vs, err, v2)
	}
	eventually(t, "the other store sees 601 nodes", func() error {
		if n := len(get(t, other, c.ns, wf.Name).Status.Nodes); n != 601 {
			return errors.New("not yet")
		}
		return nil
	})
	// A reader without the offloader cannot read the nodes and says so.
	plain := newStore(t, c, kube.Options{})
	if _, err := plain.Get(ctx, store.KindWorkflow, c.ns, wf.Name); err == nil {
		t.Fatal("a store without an offloader returned an offloaded workflow")
	}
	// Deleting the workflow deletes its offloaded nodes.
	if err := s.Delete(ctx, store.KindWorkflow, c.ns, wf.Name); err != nil {
		t.Fatal(err)
	}
	if vs, _ := p.Versions(ctx, uid); len(vs) != 0 {
		t.Fatalf("after delete: %v", vs)
	}
}
