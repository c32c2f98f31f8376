package store

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// gzipNodesFrom is how many nodes an archive stores as plain JSON; more are
// gzipped.
const gzipNodesFrom = 16

// ArchivedSummary is how every archive stores a workflow without its
// nodes: its JSON with apiVersion and kind set and status.nodes left out.
func ArchivedSummary(wf *v1alpha1.Workflow) ([]byte, error) {
	c := *wf
	c.APIVersion, c.Kind = v1alpha1.APIVersion, string(KindWorkflow)
	c.Status.Nodes = nil
	b, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("encode workflow: %w", err)
	}
	return b, nil
}

// ArchivedNodes is how every archive stores a workflow's nodes: their JSON,
// gzipped when there are more than gzipNodesFrom of them (the reader tells
// the forms apart by gzip's magic number; JSON starts with '{'), or nil
// when there are none. A big map is encoded one node at a time straight
// into the compressor (keys sorted, as json.Marshal writes them), so
// archiving a workflow of 100,000 nodes never holds their whole JSON.
func ArchivedNodes(nodes v1alpha1.Nodes) ([]byte, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	if len(nodes) <= gzipNodesFrom {
		b, err := json.Marshal(nodes)
		if err != nil {
			return nil, fmt.Errorf("encode nodes: %w", err)
		}
		return b, nil
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err == nil {
		err = writeNodes(zw, nodes)
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("encode nodes: %w", err)
	}
	return buf.Bytes(), nil
}

// writeNodes writes the JSON object of nodes one node at a time: the
// tokens json.Marshal writes, with a newline after each key and value.
func writeNodes(w io.Writer, nodes v1alpha1.Nodes) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	bw.WriteByte('{')
	for i, id := range slices.Sorted(maps.Keys(nodes)) {
		if i > 0 {
			bw.WriteByte(',')
		}
		n := nodes[id]
		// Encode appends a newline, which JSON allows between tokens; the
		// reader is encoding/json.
		if err := enc.Encode(id); err != nil {
			return err
		}
		bw.WriteByte(':')
		if err := enc.Encode(&n); err != nil {
			return err
		}
	}
	bw.WriteByte('}')
	return bw.Flush()
}

// DecodeArchived reads back what ArchivedSummary and ArchivedNodes wrote;
// nodes may be nil (a list reads the summary alone).
func DecodeArchived(summary, nodes []byte) (*v1alpha1.Workflow, error) {
	wf := &v1alpha1.Workflow{}
	if err := json.Unmarshal(summary, wf); err != nil {
		return nil, fmt.Errorf("decode workflow: %w", err)
	}
	wf.APIVersion, wf.Kind = v1alpha1.APIVersion, string(KindWorkflow)
	if len(nodes) == 0 {
		return wf, nil
	}
	if len(nodes) >= 2 && nodes[0] == 0x1f && nodes[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(nodes))
		if err != nil {
			return nil, fmt.Errorf("decompress nodes: %w", err)
		}
		defer func() { _ = zr.Close() }()
		if nodes, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("decompress nodes: %w", err)
		}
	}
	if err := json.Unmarshal(nodes, &wf.Status.Nodes); err != nil {
		return nil, fmt.Errorf("decode nodes: %w", err)
	}
	return wf, nil
}
