package store

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// gzipNodesAbove is the size of a node map's JSON from which an archive
// stores it gzipped.
const gzipNodesAbove = 4096

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
// gzipped when it is 4 KiB or more (the reader tells the forms apart by
// gzip's magic number; JSON starts with '{'), or nil when there are none.
func ArchivedNodes(nodes v1alpha1.Nodes) ([]byte, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(nodes)
	if err != nil {
		return nil, fmt.Errorf("encode nodes: %w", err)
	}
	if len(b) < gzipNodesAbove {
		return b, nil
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err == nil {
		if _, err = zw.Write(b); err == nil {
			err = zw.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("compress nodes: %w", err)
	}
	return buf.Bytes(), nil
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
