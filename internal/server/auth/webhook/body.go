package webhook

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// MaxBodyBytes bounds a webhook request's body (2 MiB, as argo-server).
const MaxBodyBytes = 2 << 20

// ErrBodyTooLarge is returned by ReadBody when the body is longer than
// MaxBodyBytes; a handler maps it to 413 Request Entity Too Large.
var ErrBodyTooLarge = fmt.Errorf("request body is larger than %d bytes", MaxBodyBytes)

// ReadBody reads the request's whole body, at most MaxBodyBytes, so Match
// can check a signature over it, and replaces r.Body with a reader over the
// same bytes so the handler can read it again. A body past the limit is
// ErrBodyTooLarge, and r.Body is then partly consumed: the request should
// be refused. A nil body reads as empty.
func ReadBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		r.Body = http.NoBody
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	if len(body) > MaxBodyBytes {
		return nil, ErrBodyTooLarge
	}
	_ = r.Body.Close() // fully read; a close error loses nothing
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}
