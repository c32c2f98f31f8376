package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// restConn is a grpc.ClientConnInterface over argo-server's REST API: the
// generated clients call Invoke and NewStream, and restConn sends the HTTP
// request that the method's generated route (rest.Route, from its
// google.api.http rule) describes.
type restConn struct {
	base   string
	hc     *http.Client
	header http.Header
}

var _ grpc.ClientConnInterface = (*restConn)(nil)

func newRESTConn(o Options, tc *tls.Config) (*restConn, error) {
	tr, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return nil, errors.New("client: http.DefaultTransport is not an *http.Transport")
	}
	tr = tr.Clone()
	tr.TLSClientConfig = tc.Clone() // the transport adds its ALPN protocols to its copy
	if o.Dial != nil {
		dial := o.Dial
		tr.DialContext = func(ctx context.Context, _, addr string) (net.Conn, error) { return dial(ctx, addr) }
	}
	h := http.Header{}
	for k, v := range o.Headers {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
	}
	if o.Token != "" {
		h.Set("Authorization", o.Token)
	}
	return &restConn{base: baseURL(o), hc: &http.Client{Transport: tr}, header: h}, nil
}

// Close drops idle connections.
func (c *restConn) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// Invoke sends a unary call as its REST request and decodes the JSON answer
// into reply (encoding/json: unknown fields are ignored).
func (c *restConn) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	req, err := c.newRequest(ctx, method, args)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return transportError(ctx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return transportError(ctx, err)
	}
	if resp.StatusCode != http.StatusOK {
		return decodeError(resp.StatusCode, body)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	if err := json.Unmarshal(body, reply); err != nil {
		return status.Errorf(codes.Internal, "%s: decode the response: %v", method, err)
	}
	return nil
}

// NewStream starts a server stream: the request is sent when the generated
// code calls CloseSend, and each RecvMsg reads one event.
func (c *restConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
	if desc.ClientStreams {
		return nil, status.Errorf(codes.Unimplemented, "%s: client streams are not supported over HTTP/1", method)
	}
	return &sseStream{conn: c, ctx: ctx, method: method}, nil
}

// newRequest builds the HTTP request of a call.
func (c *restConn) newRequest(ctx context.Context, method string, in any) (*http.Request, error) {
	r, err := restRequest(method, in)
	if err != nil {
		return nil, err
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.verb, c.base+r.path, body)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", method, err)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// transportError is the gRPC status of a failed HTTP exchange.
func transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	return status.Error(codes.Unavailable, err.Error())
}

// decodeError rebuilds the gRPC error of a non-200 answer from its
// {"code","message"} body, or from the HTTP status when the body is not that.
func decodeError(httpStatus int, body []byte) error {
	var e struct {
		Code    *int   `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil && e.Code != nil && *e.Code != 0 {
		return status.Error(codes.Code(*e.Code), e.Message)
	}
	msg := strings.TrimSpace(string(body))
	if msg == "" {
		msg = http.StatusText(httpStatus)
	}
	return status.Error(codeOf(httpStatus), fmt.Sprintf("HTTP %d: %s", httpStatus, msg))
}

// codeOf maps an HTTP status back to a gRPC code (ARGO-API §3.4).
func codeOf(httpStatus int) codes.Code {
	switch httpStatus {
	case http.StatusBadRequest:
		return codes.InvalidArgument
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound:
		return codes.NotFound
	case http.StatusConflict:
		return codes.AlreadyExists
	case http.StatusRequestTimeout:
		return codes.Canceled
	case http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case http.StatusNotImplemented:
		return codes.Unimplemented
	case http.StatusServiceUnavailable:
		return codes.Unavailable
	case http.StatusGatewayTimeout:
		return codes.DeadlineExceeded
	default:
		return codes.Internal
	}
}
