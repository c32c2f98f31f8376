package kube

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// NodeOffloader keeps a workflow's node map outside the object when even
// compressed it is too large for etcd. Versions are opaque strings written
// into status.offloadNodeStatusVersion.
type NodeOffloader interface {
	// Save stores nodes for the workflow uid and returns their version.
	// Saving the same nodes again may return the same version.
	Save(ctx context.Context, uid string, nodes v1alpha1.Nodes) (version string, err error)
	// Load returns the nodes saved under version (store.ErrNotFound when
	// there are none).
	Load(ctx context.Context, uid, version string) (v1alpha1.Nodes, error)
	// Prune deletes the versions of uid other than keep saved before before.
	Prune(ctx context.Context, uid, keep string, before time.Time) error
	// Delete deletes every version of uid (its workflow is gone).
	Delete(ctx context.Context, uid string) error
}

// nodeCodec turns a status's nodes into what the object carries and back.
type nodeCodec struct {
	compressAbove int // < 0: never
	offloadAbove  int
	off           NodeOffloader
}

// packed is how a node map travels in the object.
type packed struct {
	nodes      v1alpha1.Nodes // as is (small enough), else nil
	compressed string
	version    string // offloaded
}

// pack decides how nodes are written: as they are, compressed, or
// offloaded (saved through the offloader first).
func (c nodeCodec) pack(ctx context.Context, uid string, nodes v1alpha1.Nodes) (packed, error) {
	if len(nodes) == 0 || c.compressAbove < 0 {
		return packed{nodes: nodes}, nil
	}
	raw, err := json.Marshal(nodes)
	if err != nil {
		return packed{}, fmt.Errorf("encode nodes: %w", err)
	}
	if len(raw) <= c.compressAbove {
		return packed{nodes: nodes}, nil
	}
	z, err := compressNodes(raw)
	if err != nil {
		return packed{}, err
	}
	if len(z) <= c.offloadAbove || c.off == nil {
		return packed{compressed: z}, nil
	}
	v, err := c.off.Save(ctx, uid, nodes)
	if err != nil {
		return packed{}, fmt.Errorf("offload %d nodes (%d bytes compressed): %w", len(nodes), len(z), err)
	}
	return packed{version: v}, nil
}

// expand fills wf.Status.Nodes from compressedNodes or the offloader and
// clears both fields, in place. It is idempotent.
func (c nodeCodec) expand(ctx context.Context, wf *v1alpha1.Workflow) error {
	st := &wf.Status
	switch {
	case st.CompressedNodes != "":
		nodes, err := decompressNodes(st.CompressedNodes)
		if err != nil {
			return fmt.Errorf("workflow %s/%s: %w", wf.Namespace, wf.Name, err)
		}
		st.Nodes, st.CompressedNodes = nodes, ""
	case st.OffloadNodeStatusVersion != "":
		if c.off == nil {
			return fmt.Errorf("workflow %s/%s: nodes are offloaded (version %s) and no offloader is configured",
				wf.Namespace, wf.Name, st.OffloadNodeStatusVersion)
		}
		nodes, err := c.off.Load(ctx, string(wf.UID), st.OffloadNodeStatusVersion)
		if err != nil {
			return fmt.Errorf("workflow %s/%s: load offloaded nodes %s: %w", wf.Namespace, wf.Name, st.OffloadNodeStatusVersion, err)
		}
		st.Nodes, st.OffloadNodeStatusVersion = nodes, ""
	}
	return nil
}

// compressNodes is gzip then standard base64 of the nodes JSON.
func compressNodes(raw []byte) (string, error) {
	z, err := gzipBytes(raw)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(z), nil
}

func decompressNodes(s string) (v1alpha1.Nodes, error) {
	z, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("compressedNodes: base64: %w", err)
	}
	raw, err := gunzipBytes(z)
	if err != nil {
		return nil, fmt.Errorf("compressedNodes: %w", err)
	}
	var nodes v1alpha1.Nodes
	if err := json.Unmarshal(raw, &nodes); err != nil {
		return nil, fmt.Errorf("compressedNodes: decode: %w", err)
	}
	return nodes, nil
}

func gzipBytes(raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return buf.Bytes(), nil
}

// maxNodesJSON bounds what a gunzip may produce (a corrupt or hostile
// input must not exhaust memory).
const maxNodesJSON = 2 << 30

func gunzipBytes(z []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w", err)
	}
	defer zr.Close()
	raw, err := io.ReadAll(io.LimitReader(zr, maxNodesJSON+1))
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w", err)
	}
	if len(raw) > maxNodesJSON {
		return nil, fmt.Errorf("gunzip: more than %d bytes", maxNodesJSON)
	}
	return raw, nil
}

// parseRV reads a resourceVersion as a number (etcd revisions are); 0
// when it is not one.
func parseRV(rv string) int64 {
	v, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return 0
	}
	return v
}
