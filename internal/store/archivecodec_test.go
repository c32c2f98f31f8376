package store

import (
	"fmt"
	"strings"
	"testing"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// What an archive stores reads back the same, small or gzipped, and bad
// bytes give an error that says which part is wrong.
func TestArchivedCodec(t *testing.T) {
	for _, size := range []int{0, 1, 200} {
		wf := &v1alpha1.Workflow{}
		wf.Name, wf.Namespace = "w", "ns"
		wf.Status.Phase = v1alpha1.WorkflowSucceeded
		if size > 0 {
			wf.Status.Nodes = v1alpha1.Nodes{}
			for i := range size {
				id := fmt.Sprintf("w-%d", i)
				wf.Status.Nodes[id] = v1alpha1.NodeStatus{ID: id, Name: id, Phase: v1alpha1.NodeSucceeded}
			}
		}
		summary, err := ArchivedSummary(wf)
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := ArchivedNodes(wf.Status.Nodes)
		if err != nil {
			t.Fatal(err)
		}
		gz := len(nodes) >= 2 && nodes[0] == 0x1f && nodes[1] == 0x8b
		if (size == 200) != gz {
			t.Errorf("%d nodes: gzipped %v", size, gz)
		}
		got, err := DecodeArchived(summary, nodes)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "w" || got.Kind != "Workflow" || got.APIVersion != v1alpha1.APIVersion || len(got.Status.Nodes) != size {
			t.Errorf("%d nodes: got %s %s/%s with %d nodes", size, got.APIVersion, got.Kind, got.Name, len(got.Status.Nodes))
		}
	}
	for in, want := range map[[2]string]string{
		{"{", ""}:                  "decode workflow",
		{"{}", "\x1f\x8bnot gzip"}: "decompress nodes",
		{"{}", "[1]"}:              "decode nodes",
	} {
		if _, err := DecodeArchived([]byte(in[0]), []byte(in[1])); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", in, err, want)
		}
	}
}
