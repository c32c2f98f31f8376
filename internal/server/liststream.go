package server

// Lists in O(page) memory: ListWorkflows and ListArchivedWorkflows, and
// their REST routes.
//
// A list the client does not page (no listOptions.limit) is still read a
// page at a time (listPageSize) from the store; workflows come in Argo's
// order (store.OrderArgo), so that nothing sorts the whole list in memory.
// Each workflow becomes its JSON item on its own: the REST routes write
// the items as they come (serveList), and gRPC, which must send one
// message, holds the items' Structs only. With `fields`, the store is
// asked for those paths only (store.ListOptions.Fields); a workflow's
// nodes are read only when `fields` keeps them.
//
// The REST JSON is byte for byte what the gateway wrote for the Struct of
// the whole list: keys sorted ("items" before "metadata"), and each item
// written as protojson writes it (appendItemJSON in convert.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apiclient/workflowarchive"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// listPageSize is how many workflows a list reads from the store at a time
// when the client asks for all of them.
const listPageSize = 500

// The REST routes of ListWorkflows and ListArchivedWorkflows.
const (
	listPattern        = "/api/v1/workflows/{namespace}"
	archiveListPattern = "/api/v1/archived-workflows"
)

// listFieldsNeeded are the paths of a workflow the list itself reads,
// whatever `fields` keeps: to sort a page, to tell the same workflow
// twice, and to read its nodes.
var listFieldsNeeded = []string{
	"metadata.name", "metadata.namespace", "metadata.uid", "metadata.creationTimestamp", "status.finishedAt",
}

// listShape is what Argo's `fields` parameter keeps of a list: the items
// and the list's metadata, each whole, in part (a tree of paths to keep,
// or with drop, to drop), or not at all.
type listShape struct {
	drop                bool
	keepItems, keepMeta bool
	items, meta         fieldTree // nil: whole
}

func parseListShape(fields string) listShape {
	fields = strings.TrimSpace(fields)
	if fields == "" {
		return listShape{keepItems: true, keepMeta: true}
	}
	sh := listShape{drop: strings.HasPrefix(fields, "-")}
	t := parseFields(strings.TrimPrefix(fields, "-"))
	part := func(key string) (bool, fieldTree) {
		sub, named := t[key]
		if sh.drop {
			return !named || sub != nil, sub
		}
		return named, sub
	}
	sh.keepItems, sh.items = part("items")
	sh.keepMeta, sh.meta = part("metadata")
	return sh
}

// shaped is v with a tree of the shape applied (kept, or with drop,
// dropped); a nil tree keeps all of v.
func shaped[T any](v *T, t fieldTree, drop bool) (*T, error) {
	if t == nil {
		return v, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "encode %T: %v", v, err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, status.Errorf(codes.Internal, "decode %T: %v", v, err)
	}
	if drop {
		dropFields(m, t)
	} else {
		m, _ = keepFields(m, t).(map[string]any)
	}
	if data, err = json.Marshal(m); err != nil {
		return nil, status.Errorf(codes.Internal, "encode %T: %v", v, err)
	}
	out := new(T)
	if err := json.Unmarshal(data, out); err != nil {
		return nil, status.Errorf(codes.Internal, "decode %T: %v", v, err)
	}
	return out, nil
}

// storeFields are the paths of a workflow that a list with these `fields`
// reads (store.ListOptions.Fields); nil asks for whole workflows. Each
// path is cut after its second key: a Workflow has no array above that
// depth, so a store can read each one as a JSON path, and the shape then
// keeps the parts asked for.
func storeFields(sh listShape) []string {
	switch {
	case sh.drop, sh.keepItems && sh.items == nil: // whole items, or all but some paths
		return nil
	case !sh.keepItems: // a page's continue only
		return listFieldsNeeded
	}
	paths := append([]string(nil), listFieldsNeeded...)
	for k, sub := range sh.items {
		if sub == nil {
			paths = append(paths, k)
			continue
		}
		for k2 := range sub {
			paths = append(paths, k+"."+k2)
		}
	}
	return paths
}

// listSink receives the items of a list in order, each to shape as the
// list's `fields` say.
type listSink interface {
	item(*v1alpha1.Workflow) error
}

// listWorkflows lists as req asks and hands each item, shaped by its
// `fields`, to sink, in Argo's order; it returns the list's metadata.
//
// With listOptions.limit (or continue), the client pages: one store page,
// newest created first, sorted as Argo sorts a page. Without, the store
// gives the whole list in Argo's order, listPageSize at a time. With
// ext.showRemainingItemCount=true the metadata says how many workflows
// follow (none after a whole list).
func (s *workflowServer) listWorkflows(ctx context.Context, req *workflow.WorkflowListRequest, sh listShape, sink listSink) (metav1.ListMeta, error) {
	var meta metav1.ListMeta
	q, err := parseListRequest(req)
	if err != nil {
		return meta, err
	}
	q.opts.Fields = storeFields(sh)
	withNodes := fieldsKeep(req.GetFields(), "items.status.nodes")
	if withNodes {
		q.opts.Fields = listFieldsNeeded // each is read whole below
	}
	emit := func(wf *v1alpha1.Workflow) error {
		if !sh.keepItems {
			return nil
		}
		if withNodes {
			o, err := s.store.Get(ctx, store.KindWorkflow, wf.Namespace, wf.Name)
			switch {
			case errors.Is(err, store.ErrNotFound):
				return nil // deleted since it was listed
			case err != nil:
				return storeError(err, wf.Name)
			}
			full, ok := o.(*v1alpha1.Workflow)
			if !ok {
				return status.Errorf(codes.Internal, "store returned %T for a workflow", o)
			}
			if full.UID != wf.UID {
				return nil // deleted, and created again, since it was listed
			}
			wf = full
		}
		return sink.item(wf)
	}
	if q.opts.Limit > 0 || q.opts.Continue != "" {
		wfs, next, err := s.listPage(ctx, req.GetNamespace(), q)
		if err != nil {
			return meta, err
		}
		// Argo sorts each page: unfinished first, newest created first,
		// then finished ones, latest finished first (ARGO-API §2.1).
		v1alpha1.SortWorkflows(wfs)
		for _, wf := range wfs {
			if err := emit(wf); err != nil {
				return meta, err
			}
		}
		meta.Continue = next
		if q.showRemaining {
			meta.RemainingItemCount, err = s.remaining(ctx, req.GetNamespace(), q.opts, next)
		}
		return meta, err
	}
	if q.showRemaining {
		meta.RemainingItemCount = new(int64)
	}
	if !sh.keepItems {
		return meta, nil
	}
	return meta, s.walkWorkflows(ctx, req.GetNamespace(), q, emit)
}

// remaining is a page's remainingItemCount: how many workflows after the
// page (at its continue token next) pass the same filters, as the store
// counts them without reading them; nil when the store cannot count.
func (s *workflowServer) remaining(ctx context.Context, namespace string, opts store.ListOptions, next string) (*int64, error) {
	if next == "" {
		return new(int64), nil
	}
	c := s.caps.Counter
	if c == nil {
		return nil, nil
	}
	opts.Continue, opts.Limit, opts.Fields = next, 0, nil
	n, err := c.Count(ctx, store.KindWorkflow, namespace, opts)
	if err != nil {
		return nil, storeError(err, "")
	}
	return &n, nil
}

// listPage is one store page of workflows that pass q's filters.
func (s *workflowServer) listPage(ctx context.Context, namespace string, q listQuery) ([]*v1alpha1.Workflow, string, error) {
	objs, next, err := s.store.List(ctx, store.KindWorkflow, namespace, q.opts)
	if err != nil {
		return nil, "", storeError(err, "")
	}
	wfs := make([]*v1alpha1.Workflow, 0, len(objs))
	for _, o := range objs {
		wf, ok := o.(*v1alpha1.Workflow)
		if !ok {
			return nil, "", status.Errorf(codes.Internal, "store returned %T for a workflow", o)
		}
		wfs = append(wfs, wf)
	}
	return wfs, next, nil
}

// walkWorkflows hands every workflow that passes q's filters to fn, in
// Argo's order, reading listPageSize at a time. A workflow that finishes
// while the list is read moves from the unfinished ones to the top of the
// finished ones; one that was already handed over as unfinished is not
// handed over again.
func (s *workflowServer) walkWorkflows(ctx context.Context, namespace string, q listQuery, fn func(*v1alpha1.Workflow) error) error {
	q.opts.Order, q.opts.Limit = store.OrderArgo, listPageSize
	unfinished := map[types.UID]struct{}{}
	for {
		wfs, next, err := s.listPage(ctx, namespace, q)
		if err != nil {
			return err
		}
		for _, wf := range wfs {
			if wf.Status.FinishedAt.IsZero() {
				unfinished[wf.UID] = struct{}{}
			} else if _, seen := unfinished[wf.UID]; seen {
				continue
			}
			if err := fn(wf); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		q.opts.Continue = next
	}
}

// itemSink collects the items of a gRPC list, shaped.
type itemSink struct {
	shape listShape
	items []v1alpha1.Workflow
}

func (c *itemSink) item(wf *v1alpha1.Workflow) error {
	if !c.shape.keepItems {
		return nil
	}
	out, err := shaped(wf, c.shape.items, c.shape.drop)
	if err != nil {
		return err
	}
	c.items = append(c.items, *out)
	return nil
}

// list is the whole list of a gRPC answer: the items, and the list's
// metadata as the shape keeps it (the protobuf message has no way to
// leave a part out: a dropped part is empty).
func (sh listShape) list(items []v1alpha1.Workflow, meta metav1.ListMeta) (*v1alpha1.WorkflowList, error) {
	out := &v1alpha1.WorkflowList{Items: items}
	if !sh.keepMeta {
		return out, nil
	}
	m, err := shaped(&meta, sh.meta, sh.drop)
	if err != nil {
		return nil, err
	}
	out.ListMeta = *m
	return out, nil
}

// registerListStream serves the REST routes of ListWorkflows and
// ListArchivedWorkflows with serveList. Register it after the generated
// handlers, whose routes it replaces; the gateway's middleware (auth) runs
// before it as before theirs.
func registerListStream(gw *runtime.ServeMux, wfs *workflowServer, archive *archiveServer, header func(http.Header)) error {
	routes := []struct {
		pattern string
		h       runtime.HandlerFunc
	}{
		{listPattern, serveList(gw, wfs.log, header,
			func() any { return &workflow.WorkflowListRequest{} },
			func(m any, _ url.Values) listShape {
				return parseListShape(m.(*workflow.WorkflowListRequest).GetFields())
			},
			func(ctx context.Context, m any, sh listShape, sink listSink) (metav1.ListMeta, error) {
				return wfs.listWorkflows(ctx, m.(*workflow.WorkflowListRequest), sh, sink)
			})},
		{archiveListPattern, serveList(gw, archive.log, header,
			func() any { return &workflowarchive.ListArchivedWorkflowsRequest{} },
			// The request message has no `fields`: the query's is read
			// as the live list reads its own.
			func(_ any, q url.Values) listShape { return parseListShape(q.Get("fields")) },
			func(ctx context.Context, m any, _ listShape, sink listSink) (metav1.ListMeta, error) {
				return archive.listArchived(ctx, m.(*workflowarchive.ListArchivedWorkflowsRequest), sink)
			})},
	}
	for _, r := range routes {
		if err := gw.HandlePath(http.MethodGet, r.pattern, r.h); err != nil {
			return fmt.Errorf("list route %s: %w", r.pattern, err)
		}
	}
	return nil
}

// serveList answers a list GET: it decodes the request (path variables
// vars, then the query), and writes each item as soon as it is read. An
// error before the first byte is answered as the gateway answers it; one
// after cuts the response, so that the client cannot take a partial list
// for a whole one.
func serveList(gw *runtime.ServeMux, log *slog.Logger, header func(http.Header), newReq func() any,
	shapeOf func(any, url.Values) listShape,
	list func(context.Context, any, listShape, listSink) (metav1.ListMeta, error)) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		ctx := r.Context()
		_, m := runtime.MarshalerForRequest(gw, r)
		req := newReq()
		if err := decodeRequest(req, r, params); err != nil {
			runtime.HTTPError(ctx, gw, m, w, r, err)
			return
		}
		sh := shapeOf(req, r.Form)
		jw := &jsonListWriter{w: w, m: m, shape: sh, rc: http.NewResponseController(w), open: func() error {
			w.Header().Set("Content-Type", m.ContentType(nil))
			if header != nil {
				header(w.Header())
			}
			return nil
		}}
		meta, err := list(ctx, req, sh, jw)
		if err == nil {
			err = jw.finish(sh, meta)
		}
		if err == nil {
			return
		}
		if !jw.started {
			runtime.HTTPError(ctx, gw, m, w, r, err)
			return
		}
		if ctx.Err() == nil && log != nil {
			log.Warn("list cut short", "path", r.URL.Path, "err", err)
		}
		panic(http.ErrAbortHandler)
	}
}

// jsonListWriter writes a list's JSON as its items come: `{"items":[`,
// the items, and at the end `],"metadata":{...}}`, or what `fields` keeps
// of that.
type jsonListWriter struct {
	w       http.ResponseWriter
	m       runtime.Marshaler // the gateway's, for the metadata
	shape   listShape
	buf     []byte // an item's JSON, reused
	rc      *http.ResponseController
	open    func() error // sets the headers
	started bool         // the status and some of the body are written
	items   int
}

// flushEvery is how many items go out between flushes: the first one at
// once, then in batches the size of a store page.
const flushEvery = listPageSize

func (j *jsonListWriter) start() error {
	if j.started {
		return nil
	}
	if err := j.open(); err != nil {
		return err
	}
	j.started = true
	j.w.WriteHeader(http.StatusOK)
	_, err := j.w.Write([]byte("{"))
	return err
}

func (j *jsonListWriter) item(wf *v1alpha1.Workflow) error {
	if !j.shape.keepItems {
		return nil
	}
	data, err := json.Marshal(wf)
	if err != nil {
		return status.Errorf(codes.Internal, "encode workflow %s: %v", wf.Name, err)
	}
	sep := ","
	if j.items == 0 {
		sep = `"items":[`
	}
	if j.buf, err = appendItemJSON(append(j.buf[:0], sep...), data, j.shape.items, j.shape.drop); err != nil {
		return err
	}
	if err := j.start(); err != nil {
		return err
	}
	if _, err := j.w.Write(j.buf); err != nil {
		return err
	}
	j.items++
	if j.items%flushEvery == 1 {
		if err := j.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
	}
	return nil
}

// finish writes the end of the list: the items' close (or a null list)
// and the metadata, as far as the shape keeps them.
func (j *jsonListWriter) finish(sh listShape, meta metav1.ListMeta) error {
	var tail []byte
	switch {
	case !sh.keepItems:
	case j.items == 0:
		tail = append(tail, `"items":null`...)
	default:
		tail = append(tail, ']')
	}
	if sh.keepMeta {
		data, err := json.Marshal(meta)
		if err != nil {
			return status.Errorf(codes.Internal, "encode the list's metadata: %v", err)
		}
		b, err := appendItemJSON(nil, data, sh.meta, sh.drop)
		if err != nil {
			return err
		}
		if sh.keepItems {
			tail = append(tail, ',')
		}
		tail = append(append(tail, `"metadata":`...), b...)
	}
	if err := j.start(); err != nil {
		return err
	}
	_, err := j.w.Write(append(tail, '}'))
	return err
}
