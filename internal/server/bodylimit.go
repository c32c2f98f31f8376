package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"google.golang.org/grpc/codes"
)

// KubernetesMaxRequestBytes is kube-apiserver's bound on a request body,
// and so the default bound on a request here (REST body or gRPC message).
// Kubernetes answers a bigger body 413 "Request entity too large: limit is
// 3145728", and an object near that size could not be stored in etcd
// (about 1.5 MB) anyway: Argo cannot hold such a workflow either. Argo has
// no bound on the number of templates, only on the size, so neither has
// braid. A create body of this size holding as many templates as fit
// (about 45,000) peaks at about 220-310 MiB of heap while it is decoded,
// converted and validated (TestCreateLargestBody guards it).
const KubernetesMaxRequestBytes = 3 << 20

// limitedBody is a request body bounded by http.MaxBytesReader that
// remembers that the bound was hit, so that the error handler answers
// 413 rather than the decoder's 400.
type limitedBody struct {
	io.ReadCloser
	limit int64
	hit   bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		b.hit = true
	}
	return n, err
}

// limitBody bounds r's body to limit bytes. A body that says it is larger
// (Content-Length) is answered 413 at once, unread, and limitBody returns
// false; one that turns out larger while it is read is answered 413 by
// errorHandler (tooLarge).
func limitBody(w http.ResponseWriter, r *http.Request, limit int64) bool {
	if r.ContentLength > limit {
		writeTooLarge(w, limit)
		return false
	}
	r.Body = &limitedBody{ReadCloser: http.MaxBytesReader(w, r.Body, limit), limit: limit}
	return true
}

// tooLarge reports whether r's body hit its bound, and the bound.
func tooLarge(r *http.Request) (int64, bool) {
	b, ok := r.Body.(*limitedBody)
	if !ok || !b.hit {
		return 0, false
	}
	return b.limit, true
}

// writeTooLarge answers 413 with Kubernetes' wording, and the gRPC code a
// gRPC client gets for a message over the bound (ResourceExhausted).
func writeTooLarge(w http.ResponseWriter, limit int64) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Connection", "close") // the rest of the body is not read
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	_ = json.NewEncoder(w).Encode(errorBody{Code: codes.ResourceExhausted,
		Message: fmt.Sprintf("Request entity too large: limit is %d", limit)})
}
