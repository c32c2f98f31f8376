package server

import (
	"errors"
	"io/fs"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/internal/server/auth"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// stepLogs serves GET /step-logs/{ns}/{wf}/{pod}: the raw kept log of one
// step (pod name or node ID), with HTTP ranges (http.ServeContent), so a
// viewer can open and scroll a log of any size by reading only what it
// shows. braid-only: argo-server's logs come only as the line stream of
// the API (logs.go), which cannot start in the middle of a file.
//
// It is authorized as the API's log calls are (get logs in the workflow's
// namespace), and a workflow that only the archive holds has its logs
// served too. ?container= other than main is an empty log (as the API's:
// only main's output is kept).
func (s *workflowServer) stepLogs(w http.ResponseWriter, r *http.Request) {
	ns, name, pod := r.PathValue("ns"), r.PathValue("wf"), r.PathValue("pod")
	if err := auth.Check(r.Context(), auth.Attributes{Verb: "get", Resource: "logs", Namespace: ns, Name: name}); err != nil {
		httpStatusError(w, err)
		return
	}
	if s.logSource == nil {
		httpStatusError(w, status.Error(codes.Unimplemented, "this server keeps no step logs"))
		return
	}
	wf, err := s.get(r.Context(), ns, name)
	if isNotFound(err) {
		if archived, ok := s.fromArchive(r.Context(), ns, name, ""); ok {
			wf, err = archived, nil
		}
	}
	if err != nil {
		httpStatusError(w, err)
		return
	}
	var node *v1alpha1.NodeStatus
	for id, n := range wf.Status.Nodes {
		if id == pod || wf.NodePodName(&n) == pod {
			node = &n
			break
		}
	}
	if node == nil || node.Type != v1alpha1.NodeTypePod {
		httpStatusError(w, status.Errorf(codes.NotFound, "workflow %s/%s has no step %q", ns, name, pod))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	if c := r.URL.Query().Get("container"); c != "" && c != "main" {
		h.Set("Content-Length", "0")
		return
	}
	f, err := s.logSource.Open(r.Context(), wf.Namespace, wf.Name, wf.NodePodName(node))
	if errors.Is(err, fs.ErrNotExist) {
		h.Set("Content-Length", "0") // not started, or it wrote nothing
		return
	}
	if err != nil {
		s.log.Error("open a step log", "workflow", wf.Namespace+"/"+wf.Name, "node", node.ID, "err", err)
		httpStatusError(w, status.Error(codes.Internal, "cannot read the step's log"))
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		httpStatusError(w, status.Error(codes.Internal, "cannot read the step's log"))
		return
	}
	// A running step's log grows: serve the size it has now (ServeContent
	// reads the size once, so a range past it is 416 until it grows).
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

// httpStatusError writes err's gRPC status as the API's JSON error, with
// the matching HTTP status.
func httpStatusError(w http.ResponseWriter, err error) {
	st := status.Convert(err)
	writeError(w, st.Code(), st.Message())
}
