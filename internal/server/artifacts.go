package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/server/auth"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// artifactServer serves argo-server's artifact routes (ARGO-API §2.4):
// plain HTTP, raw bytes, plain-text errors.
type artifactServer struct {
	wf      *workflowServer
	drivers *artifact.Drivers
}

func (a *artifactServer) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /artifacts/{ns}/{wf}/{node}/{name}", a.byName("outputs"))
	mux.HandleFunc("GET /input-artifacts/{ns}/{wf}/{node}/{name}", a.byName("inputs"))
	mux.HandleFunc("GET /artifacts-by-uid/{uid}/{node}/{name}", a.byUID("outputs"))
	mux.HandleFunc("GET /input-artifacts-by-uid/{uid}/{node}/{name}", a.byUID("inputs"))
	mux.HandleFunc("GET /artifact-files/{ns}/{kind}/{id}/{node}/{io}/{name}", a.files)
	mux.HandleFunc("GET /artifact-files/{ns}/{kind}/{id}/{node}/{io}/{name}/{rest...}", a.files)
}

func (a *artifactServer) byName(side string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		wf, err := a.wf.get(r.Context(), r.PathValue("ns"), r.PathValue("wf"))
		if isNotFound(err) {
			if archived, ok := a.wf.fromArchive(r.Context(), r.PathValue("ns"), r.PathValue("wf"), ""); ok {
				wf, err = archived, nil
			}
		}
		a.serve(w, r, wf, err, side, "")
	}
}

func (a *artifactServer) byUID(side string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		wf, err := a.archived(r.Context(), r.PathValue("uid"))
		a.serve(w, r, wf, err, side, "")
	}
}

// files serves /artifact-files/{ns}/{workflows|archived-workflows}/{name or
// uid}/{node}/{outputs|inputs}/{name}[/{path}]: a file of a directory
// artifact when a path is given, else the artifact itself.
func (a *artifactServer) files(w http.ResponseWriter, r *http.Request) {
	side := r.PathValue("io")
	if side != "outputs" && side != "inputs" {
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return
	}
	var (
		wf  *v1alpha1.Workflow
		err error
	)
	switch r.PathValue("kind") {
	case "workflows":
		wf, err = a.wf.get(r.Context(), r.PathValue("ns"), r.PathValue("id"))
	case "archived-workflows":
		wf, err = a.archived(r.Context(), r.PathValue("id"))
	default:
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return
	}
	a.serve(w, r, wf, err, side, r.PathValue("rest"))
}

func (a *artifactServer) archived(ctx context.Context, uid string) (*v1alpha1.Workflow, error) {
	arch := a.wf.caps.Archive
	if arch == nil {
		return nil, store.ErrNotFound
	}
	return arch.GetArchived(ctx, uid)
}

// serve finds the node's artifact and streams it, or a file inside it.
func (a *artifactServer) serve(w http.ResponseWriter, r *http.Request, wf *v1alpha1.Workflow, err error, side, sub string) {
	if err != nil {
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	// The route names the namespace only for live workflows: every
	// download is authorized against the workflow's own.
	if err := auth.Check(r.Context(), auth.Attributes{Verb: "get", Resource: "workflows", Namespace: wf.Namespace, Name: wf.Name}); err != nil {
		code := http.StatusForbidden
		if status.Code(err) == codes.Unauthenticated {
			code = http.StatusUnauthorized
		}
		http.Error(w, status.Convert(err).Message(), code)
		return
	}
	art, ok := findArtifact(wf, r.PathValue("node"), side, r.PathValue("name"))
	if !ok {
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	if sub != "" {
		if art, err = subArtifact(art, sub); err != nil {
			http.Error(w, "Bad Request", http.StatusBadRequest)
			return
		}
	}
	drv, err := a.drivers.For(&art.ArtifactLocation)
	if err != nil {
		http.Error(w, fmt.Sprintf("artifact %q cannot be downloaded: %v", art.Name, err), http.StatusBadRequest)
		return
	}
	ctx := artifact.WithNamespace(r.Context(), wf.Namespace)
	rc, err := drv.OpenStream(ctx, art)
	if errors.Is(err, artifact.ErrIsDirectory) || (errors.Is(err, artifact.ErrNotFound) && isLister(drv)) {
		// A directory saved with archive none (S3 keeps it as the
		// objects under key/, so its key alone is "not found").
		a.serveDir(ctx, w, wf, art, drv, errors.Is(err, artifact.ErrIsDirectory))
		return
	}
	if err != nil && sub != "" && !errors.Is(err, artifact.ErrUnsupported) {
		// A path inside an artifact that is a file (a tgz, say): it has no
		// files to browse, which is the caller's mistake, not the server's.
		http.Error(w, fmt.Sprintf("artifact %q has no file %q: only a directory saved with archive none can be browsed (download the artifact instead)", art.Name, sub), http.StatusNotFound)
		return
	}
	if !a.openFailed(w, wf, art, err) {
		return
	}
	defer rc.Close()
	name := path.Base(artifactKey(&art.ArtifactLocation))
	if name == "." || name == "/" {
		name = art.Name
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf("filename=%q", name))
	if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
		w.Header().Set("Content-Type", ct)
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	// Streamed: an *os.File goes by sendfile, anything else 32 KiB at a time.
	_, _ = io.Copy(w, rc)
}

// openFailed answers an artifact that could not be opened, and reports
// whether err was nil (the download goes on).
func (a *artifactServer) openFailed(w http.ResponseWriter, wf *v1alpha1.Workflow, art *v1alpha1.Artifact, err error) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, artifact.ErrNotFound):
		http.Error(w, "Not Found", http.StatusNotFound)
	case errors.Is(err, artifact.ErrUnsupported):
		http.Error(w, fmt.Sprintf("artifact %q cannot be downloaded: %v", art.Name, err), http.StatusBadRequest)
	default:
		a.wf.log.Warn("artifact download", "workflow", wf.Name, "artifact", art.Name, "err", err)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
	}
	return false
}

// serveDir streams a directory artifact as an uncompressed tar,
// <name>.tar holding <name>/..., one file at a time. isDir says the
// location is known to be a directory, so that an empty one is an empty
// tar rather than Not Found.
func (a *artifactServer) serveDir(ctx context.Context, w http.ResponseWriter, wf *v1alpha1.Workflow, art *v1alpha1.Artifact, drv artifact.Driver, isDir bool) {
	dir, err := artifact.OpenDir(ctx, drv, art)
	if errors.Is(err, artifact.ErrUnsupported) {
		http.Error(w, fmt.Sprintf("artifact %q is a directory saved without an archive, and its location cannot be listed to stream it as a tar: %v", art.Name, err), http.StatusBadRequest)
		return
	}
	if err == nil && dir.Files() == 0 && !isDir {
		err = artifact.ErrNotFound
	}
	if !a.openFailed(w, wf, art, err) {
		return
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf("filename=%q", art.Name+".tar"))
	w.Header().Set("Content-Type", "application/x-tar")
	if err := dir.WriteTar(ctx, w, art.Name); err != nil {
		// The status is sent: the tar ends without its end marker, which
		// a tar reader reports.
		a.wf.log.Warn("artifact download", "workflow", wf.Name, "artifact", art.Name, "err", err)
	}
}

// isLister reports whether drv can list a location (file, s3).
func isLister(drv artifact.Driver) bool {
	_, ok := drv.(artifact.Lister)
	return ok
}

// findArtifact finds a node's input or output artifact by name.
func findArtifact(wf *v1alpha1.Workflow, nodeID, side, name string) (*v1alpha1.Artifact, bool) {
	n, ok := wf.Status.Nodes[nodeID]
	if !ok {
		return nil, false
	}
	var arts v1alpha1.Artifacts
	switch {
	case side == "outputs" && n.Outputs != nil:
		arts = n.Outputs.Artifacts
	case side == "inputs" && n.Inputs != nil:
		arts = n.Inputs.Artifacts
	}
	for i := range arts {
		if arts[i].Name == name && arts[i].HasLocation() {
			a := arts[i]
			return &a, true
		}
	}
	return nil, false
}

// subArtifact points at a file inside a directory artifact (one saved
// unarchived): the key gains the sub path. Paths that climb out are refused.
func subArtifact(a *v1alpha1.Artifact, sub string) (*v1alpha1.Artifact, error) {
	clean := path.Clean("/" + sub)[1:]
	if clean == "" || strings.HasPrefix(clean, "..") {
		return nil, fmt.Errorf("bad path %q", sub)
	}
	c := a.DeepCopy()
	key, ok := artifact.Key(&c.ArtifactLocation)
	if !ok || artifact.SetKey(&c.ArtifactLocation, strings.TrimSuffix(key, "/")+"/"+clean) != nil {
		return nil, fmt.Errorf("artifact %q cannot be browsed", a.Name)
	}
	return c, nil
}

// artifactKey is the key or URL a location stores its object under.
func artifactKey(l *v1alpha1.ArtifactLocation) string {
	if key, ok := artifact.Key(l); ok {
		return key
	}
	if l.HTTP != nil {
		return l.HTTP.URL
	}
	return ""
}
