package server

// One workflow in O(node) memory: the REST routes of GetWorkflow and
// GetArchivedWorkflow.
//
// The gateway answered a GET with the Struct of the whole workflow, which
// for 100,000 nodes (limits.maxNodes) costs about a gigabyte: the JSON,
// a map tree of it, the Struct, and protojson's output, all at once. Here
// the workflow, as the store returns it, is written straight to the
// response through a bufio.Writer: its JSON without the nodes in one
// piece (small), and the nodes one at a time, in the place and order
// where the Struct had them. The bytes are those the gateway wrote for
// toStructFields(wf, fields) (appendItemJSON in convert.go), `fields`
// included; so are the headers, and the errors, which go through the
// gateway's error handler before the first byte.
//
// gRPC's GetWorkflow and GetArchivedWorkflow still answer with a Struct.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apiclient/workflowarchive"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The REST routes of GetWorkflow and GetArchivedWorkflow.
const (
	getPattern        = "/api/v1/workflows/{namespace}/{name}"
	archiveGetPattern = "/api/v1/archived-workflows/{uid}"
)

// getBufferSize is the bufio.Writer between a GET's JSON and the response.
const getBufferSize = 64 << 10

// getRoute is a GET of one workflow: the RPC it stands for, its path
// variables, its request message, and how to read the workflow, with the
// `fields` to shape it by.
type getRoute struct {
	pattern, rpc string
	newReq       func() any
	get          func(context.Context, any) (*v1alpha1.Workflow, string, error)
}

// registerGetStream serves the REST routes of GetWorkflow and
// GetArchivedWorkflow with serveGet. Register it after the generated
// handlers, whose routes it replaces; the gateway's middleware (auth) runs
// before it as before theirs.
func registerGetStream(gw *runtime.ServeMux, wfs *workflowServer, archive *archiveServer, header func(http.Header)) error {
	for _, r := range getRoutes(wfs, archive) {
		if err := gw.HandlePath(http.MethodGet, r.pattern, serveGet(gw, wfs.log, r, header)); err != nil {
			return fmt.Errorf("get route %s: %w", r.pattern, err)
		}
	}
	return nil
}

// getRoutes are the REST GETs of one workflow: GetWorkflow and
// GetArchivedWorkflow.
func getRoutes(wfs *workflowServer, archive *archiveServer) []getRoute {
	return []getRoute{
		{getPattern, "/workflow.WorkflowService/GetWorkflow",
			func() any { return &workflow.WorkflowGetRequest{} },
			func(ctx context.Context, m any) (*v1alpha1.Workflow, string, error) {
				req := m.(*workflow.WorkflowGetRequest)
				wf, err := wfs.getRequested(ctx, req)
				return wf, req.GetFields(), err
			}},
		{archiveGetPattern, "/workflowarchive.ArchivedWorkflowService/GetArchivedWorkflow",
			func() any { return &workflowarchive.GetArchivedWorkflowRequest{} },
			func(ctx context.Context, m any) (*v1alpha1.Workflow, string, error) {
				req := m.(*workflowarchive.GetArchivedWorkflowRequest)
				wf, err := archive.get(ctx, "get", req.GetUid(), req.GetNamespace(), req.GetName())
				return wf, "", err
			}},
	}
}

// getRequested is GetWorkflow's lookup: the workflow by name (or
// @latest), of the uid asked for if one is; one that is no longer in the
// store is looked for in the archive.
func (s *workflowServer) getRequested(ctx context.Context, req *workflow.WorkflowGetRequest) (*v1alpha1.Workflow, error) {
	wf, err := s.get(ctx, req.GetNamespace(), req.GetName())
	uid := req.GetUid()
	if err == nil && uid != "" && string(wf.GetUID()) != uid {
		err = status.Errorf(codes.NotFound, "workflows.argoproj.io %q not found", req.GetName())
	}
	if isNotFound(err) {
		if archived, ok := s.fromArchive(ctx, req.GetNamespace(), req.GetName(), uid); ok {
			return archived, nil
		}
	}
	return wf, err
}

// serveGet answers a GET of one workflow as the generated handler did:
// the same request decoding and errors, and the same body, written as it
// is made.
func serveGet(gw *runtime.ServeMux, log *slog.Logger, route getRoute, header func(http.Header)) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		_, m := runtime.MarshalerForRequest(gw, r)
		actx, err := runtime.AnnotateIncomingContext(ctx, gw, r, route.rpc, runtime.WithHTTPPathPattern(route.pattern))
		if err != nil {
			runtime.HTTPError(ctx, gw, m, w, r, err)
			return
		}
		ctx = actx
		req := route.newReq()
		if err := decodeRequest(req, r, params); err != nil {
			runtime.HTTPError(ctx, gw, m, w, r, err)
			return
		}
		wf, fields, err := route.get(ctx, req)
		if err != nil {
			runtime.HTTPError(ctx, gw, m, w, r, err)
			return
		}
		w.Header().Set("Content-Type", m.ContentType(nil))
		if strings.Contains(strings.ToLower(r.Header.Get("TE")), "trailers") {
			w.Header().Set("Transfer-Encoding", "chunked") // as the gateway's, which may send trailers then
		}
		if header != nil {
			header(w.Header())
		}
		sw := &startedWriter{ResponseWriter: w}
		bw := bufio.NewWriterSize(sw, getBufferSize)
		err = writeWorkflowJSON(bw, wf, fields)
		if err == nil {
			err = bw.Flush()
		}
		switch {
		case err == nil:
		case !sw.started:
			runtime.HTTPError(ctx, gw, m, w, r, err)
		default:
			if ctx.Err() == nil && log != nil {
				log.Warn("workflow cut short", "path", r.URL.Path, "err", err)
			}
			panic(http.ErrAbortHandler) // the client cannot take a part for the whole
		}
	}
}

// writeWorkflowJSON writes the JSON the gateway wrote for
// toStructFields(wf, fields): the workflow without its nodes is encoded
// whole, and its nodes one by one into status.nodes.
func writeWorkflowJSON(bw *bufio.Writer, wf *v1alpha1.Workflow, fields string) error {
	var t fieldTree
	drop := false
	if fields = strings.TrimSpace(fields); fields != "" {
		drop = strings.HasPrefix(fields, "-")
		t = parseFields(strings.TrimPrefix(fields, "-"))
	}
	rest := *wf
	rest.Status.Nodes = nil // omitted from the JSON: written by nodes
	data, err := json.Marshal(&rest)
	if err != nil {
		return status.Errorf(codes.Internal, "encode workflow %s: %v", wf.Name, err)
	}
	jw := &jsonWorkflowWriter{bw: bw}
	var fill func(fieldTree, bool) error
	if len(wf.Status.Nodes) > 0 { // as omitempty: no key for none
		fill = func(t fieldTree, drop bool) error { return jw.nodes(wf.Status.Nodes, t, drop) }
	}
	if err := jw.object(data, t, drop, []string{"status", "nodes"}, fill); err != nil {
		return fmt.Errorf("workflow %s: %w", wf.Name, err)
	}
	return nil
}

// jsonWorkflowWriter writes a workflow's JSON as appendItemJSON writes it.
type jsonWorkflowWriter struct {
	bw  *bufio.Writer
	buf []byte // a member's JSON, reused
}

// object writes the object at the start of src as appendObject does (keys
// sorted, shaped by t), with one more member, not in src, at path (a key
// in each nested object), whose value fill writes; with no fill, none.
func (j *jsonWorkflowWriter) object(src []byte, t fieldTree, drop bool, path []string, fill func(fieldTree, bool) error) error {
	members, _, err := objectMembers(nil, skipSpace(src))
	if err != nil {
		return status.Errorf(codes.Internal, "encode: %v", err)
	}
	if len(path) == 1 && fill != nil {
		k := []byte(path[0])
		members = slices.DeleteFunc(members, func(m member) bool { return bytes.Equal(m.key, k) })
		i, _ := slices.BinarySearchFunc(members, k, func(m member, k []byte) int { return bytes.Compare(m.key, k) })
		members = slices.Insert(members, i, member{key: k}) // raw nil: fill's
	}
	_ = j.bw.WriteByte('{')
	n := 0
	for i, m := range members {
		if i+1 < len(members) && bytes.Equal(members[i+1].key, m.key) {
			continue // a repeated key: the last one counts, as in a map
		}
		keep, sub, subDrop := memberShape(t, drop, m.key)
		if !keep {
			continue
		}
		if n > 0 {
			_ = j.bw.WriteByte(',')
		}
		n++
		if j.buf, err = appendProtoString(j.buf[:0], m.key); err != nil {
			return status.Errorf(codes.Internal, "encode: %v", err)
		}
		j.buf = append(j.buf, ':')
		switch {
		case m.raw == nil:
			_, _ = j.bw.Write(j.buf)
			err = fill(sub, subDrop)
		case len(path) > 1 && string(m.key) == path[0] && len(m.raw) > 0 && m.raw[0] == '{':
			_, _ = j.bw.Write(j.buf)
			err = j.object(m.raw, sub, subDrop, path[1:], fill)
		default:
			if j.buf, err = appendItemJSON(j.buf, m.raw, sub, subDrop); err == nil {
				_, err = j.bw.Write(j.buf)
			}
		}
		if err != nil {
			return err
		}
	}
	return j.bw.WriteByte('}')
}

// nodes writes status.nodes, node by node in the order of their IDs, each
// shaped by the member of t its ID names.
func (j *jsonWorkflowWriter) nodes(nodes v1alpha1.Nodes, t fieldTree, drop bool) error {
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(false) // fewer escapes to decode: the same strings
	_ = j.bw.WriteByte('{')
	n := 0
	for _, id := range slices.Sorted(maps.Keys(nodes)) {
		key := []byte(id)
		keep, sub, subDrop := memberShape(t, drop, key)
		if !keep {
			continue
		}
		data.Reset()
		if err := enc.Encode(nodes[id]); err != nil {
			return status.Errorf(codes.Internal, "encode node %s: %v", id, err)
		}
		j.buf = j.buf[:0]
		if n > 0 {
			j.buf = append(j.buf, ',')
		}
		n++
		var err error
		if j.buf, err = appendProtoString(j.buf, key); err != nil {
			return status.Errorf(codes.Internal, "encode node %s: %v", id, err)
		}
		if j.buf, err = appendItemJSON(append(j.buf, ':'), data.Bytes(), sub, subDrop); err != nil {
			return fmt.Errorf("node %s: %w", id, err)
		}
		if _, err := j.bw.Write(j.buf); err != nil {
			return err
		}
	}
	return j.bw.WriteByte('}')
}
