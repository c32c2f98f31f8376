package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/pkg/apiclient/rest"
)

// Options are what Register adds to every route's response.
type Options struct {
	// Header, when set, edits the headers of every successful response
	// before its status is written (argo-server sets
	// Grpc-Metadata-Argo-Version).
	Header func(http.Header)
	// Marshal, when set, encodes a response instead of json.Marshal.
	Marshal func(any) ([]byte, error)
}

// Register serves on mux each unary route of routes that belongs to desc's
// service, by calling the method of desc.Methods with the route's name on
// impl. A route whose method desc lacks, whose path variables or body name
// no field of the method's request, or that the mux refuses, is an error;
// routes of other services, and server-streaming ones, are skipped.
//
// To learn each method's request type, Register calls its handler once with
// a decoder that records the type and fails, so the handler must decode its
// request before it uses impl (protoc-gen-go-grpc's handlers do).
func Register(mux *runtime.ServeMux, desc *grpc.ServiceDesc, impl any, routes []rest.Route, opts Options) error {
	methods := make(map[string]grpc.MethodDesc, len(desc.Methods))
	for _, m := range desc.Methods {
		methods[m.MethodName] = m
	}
	for _, rt := range routes {
		if rt.Service != desc.ServiceName || rt.ServerStreaming {
			continue
		}
		m, ok := methods[rt.Method]
		if !ok {
			return fmt.Errorf("gateway: route %s %s: service %s has no unary method %s", rt.Verb, rt.Pattern, desc.ServiceName, rt.Method)
		}
		h, err := newHandler(mux, m, impl, rt, opts)
		if err != nil {
			return fmt.Errorf("gateway: route %s %s (%s): %w", rt.Verb, rt.Pattern, rt.FullMethod(), err)
		}
		if err := mux.HandlePath(rt.Verb, rt.Pattern, h.serve); err != nil {
			return fmt.Errorf("gateway: route %s %s (%s): %w", rt.Verb, rt.Pattern, rt.FullMethod(), err)
		}
	}
	return nil
}

// handler serves one route.
type handler struct {
	mux    *runtime.ServeMux
	method grpc.MethodDesc
	impl   any
	route  rest.Route
	opts   Options
	req    reflect.Type // the request's pointer type
}

func newHandler(mux *runtime.ServeMux, m grpc.MethodDesc, impl any, rt rest.Route, opts Options) (*handler, error) {
	switch rt.Verb {
	case http.MethodGet, http.MethodDelete, http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return nil, fmt.Errorf("HTTP method %q is not one of GET, POST, PUT, DELETE, PATCH", rt.Verb)
	}
	if rt.Verb == http.MethodGet && rt.Body != "" {
		return nil, errors.New("a GET has no body")
	}
	req, err := requestType(m, impl)
	if err != nil {
		return nil, err
	}
	h := &handler{mux: mux, method: m, impl: impl, route: rt, opts: opts, req: req}
	if err := rest.Check(req, rt.Pattern, rt.Body); err != nil {
		return nil, err
	}
	return h, nil
}

var errProbe = errors.New("gateway: probing the request type")

// requestType calls m's handler with a decoder that records the type of
// the request it is given and fails, so that impl is never called.
func requestType(m grpc.MethodDesc, impl any) (t reflect.Type, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the handler of %s panicked while decoding its request: %v", m.MethodName, r)
		}
	}()
	_, _ = m.Handler(impl, context.Background(), func(in any) error {
		t = reflect.TypeOf(in)
		return errProbe
	}, nil)
	if t == nil {
		return nil, fmt.Errorf("the handler of %s did not decode a request", m.MethodName)
	}
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("the request of %s is a %s, not a pointer to a struct", m.MethodName, t)
	}
	return t, nil
}

// serve is the route's runtime.HandlerFunc: the request's context as the
// generated handlers make it, the request decoded from the body, query and
// path, the call, then the response as JSON or the error through the mux's
// error handler.
func (h *handler) serve(w http.ResponseWriter, r *http.Request, params map[string]string) {
	var stream runtime.ServerTransportStream
	ctx := grpc.NewContextWithServerTransportStream(r.Context(), &stream)
	_, outbound := runtime.MarshalerForRequest(h.mux, r)
	ctx, err := runtime.AnnotateIncomingContext(ctx, h.mux, r, h.route.FullMethod(), runtime.WithHTTPPathPattern(h.route.Pattern))
	if err != nil {
		runtime.HTTPError(r.Context(), h.mux, outbound, w, r, err)
		return
	}
	dec, err := h.decoder(r, params)
	if err != nil {
		runtime.HTTPError(ctx, h.mux, outbound, w, r, err)
		return
	}
	resp, err := h.method.Handler(h.impl, ctx, dec, nil)
	ctx = runtime.NewServerMetadataContext(ctx, runtime.ServerMetadata{HeaderMD: stream.Header(), TrailerMD: stream.Trailer()})
	if err != nil {
		runtime.HTTPError(ctx, h.mux, outbound, w, r, err)
		return
	}
	marshal := json.Marshal
	if h.opts.Marshal != nil {
		marshal = h.opts.Marshal
	}
	data, err := marshal(resp)
	if err != nil {
		runtime.HTTPError(ctx, h.mux, outbound, w, r, status.Errorf(codes.Internal, "encode the response: %v", err))
		return
	}
	hdr := w.Header()
	for k, vs := range stream.Header() { // as the mux's default outgoing header matcher names them
		for _, v := range vs {
			hdr.Add(runtime.MetadataHeaderPrefix+k, v)
		}
	}
	hdr.Set("Content-Type", "application/json")
	if h.opts.Header != nil {
		h.opts.Header(hdr)
	}
	if strings.Contains(strings.ToLower(r.Header.Get("TE")), "trailers") {
		hdr.Set("Transfer-Encoding", "chunked") // as grpc-gateway's handlers, which may send trailers then
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// decoder reads what the request carries (its body, or its query) and
// returns the function that fills the handler's request struct with it.
func (h *handler) decoder(r *http.Request, params map[string]string) (func(any) error, error) {
	var body []byte
	var form map[string][]string
	if h.route.Body == "" {
		// As the generated handlers: r.Form is the query, plus a form body
		// when the mux serves a POST as this GET (path length fallback).
		if err := r.ParseForm(); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%v", err)
		}
		form = r.Form
	} else {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			return nil, &bodyError{err: err}
		}
	}
	return func(in any) error {
		if reflect.TypeOf(in) != h.req {
			return status.Errorf(codes.Internal, "gateway: %s decoded a %T, registered with a %s", h.route.FullMethod(), in, h.req)
		}
		if err := h.decodeBody(in, body); err != nil {
			return err
		}
		return rest.Bind(in, params, form)
	}, nil
}

// decodeBody decodes a JSON body (none, or only white space, is accepted)
// into the request, or into its body field.
func (h *handler) decodeBody(in any, body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	target, err := rest.BodyTarget(in, h.route.Body)
	if err != nil {
		return status.Errorf(codes.Internal, "gateway: %v", err)
	}
	// One strict pass (the common case); a field the request does not
	// know sends it down the slow path, where only the objects are strict.
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err = dec.Decode(target)
	if err == nil {
		err = trailing(body[dec.InputOffset():])
	}
	if err == nil || !strings.HasPrefix(err.Error(), "json: unknown field ") {
		if err != nil {
			return status.Error(codes.InvalidArgument, "request body is not valid JSON for this request: "+jsonMessage(err))
		}
		return nil
	}
	reflect.ValueOf(target).Elem().SetZero()
	if err := json.Unmarshal(body, target); err != nil {
		return status.Error(codes.InvalidArgument, "request body is not valid JSON for this request: "+jsonMessage(err))
	}
	return strictObjects(target, body)
}

// trailing is an error when rest, what follows the body's value, is more
// than white space.
func trailing(rest []byte) error {
	if rest = bytes.TrimSpace(rest); len(rest) > 0 {
		return fmt.Errorf("invalid character %q after top-level value", rest[0])
	}
	return nil
}

// object is a Kubernetes object (a Workflow, a WorkflowTemplate, ...).
type object interface{ DeepCopyObject() k8sruntime.Object }

// strictObjects decodes again, refusing unknown fields, each object the
// body carries (the body itself, or a top-level field of it): the request
// around an object is read leniently, as argo-server reads it, but a field
// of the object that braid does not know is an error that names it, as
// Kubernetes' strict field validation answers, rather than a setting
// silently lost.
func strictObjects(target any, body []byte) error {
	check := func(name string, t reflect.Type, raw []byte) error {
		v := reflect.New(t)
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v.Interface()); err != nil {
			return status.Errorf(codes.InvalidArgument, "%s: %s", name, jsonMessage(err))
		}
		return nil
	}
	tv := reflect.ValueOf(target).Elem()
	if _, ok := target.(object); ok {
		return check("body", tv.Type(), body)
	}
	if tv.Kind() != reflect.Struct {
		return nil
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return nil
	}
	for i := 0; i < tv.NumField(); i++ {
		f := tv.Type().Field(i)
		if f.Type.Kind() != reflect.Pointer || !f.Type.Implements(reflect.TypeFor[object]()) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		raw, ok := top[name]
		if !ok || string(raw) == "null" {
			continue
		}
		if err := check(name, f.Type.Elem(), raw); err != nil {
			return err
		}
	}
	return nil
}

// jsonMessage is a decoding error without encoding/json's prefix, with the
// offset of a syntax error.
func jsonMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "json: ")
	var se *json.SyntaxError
	if errors.As(err, &se) {
		msg = fmt.Sprintf("%s (after %d bytes)", msg, se.Offset)
	}
	return msg
}

// bodyError is a body that could not be read: InvalidArgument, and still
// an *http.MaxBytesError to errors.As when the body was over its limit.
type bodyError struct{ err error }

func (e *bodyError) Error() string { return "read the request body: " + e.err.Error() }

func (e *bodyError) Unwrap() error { return e.err }

func (e *bodyError) GRPCStatus() *status.Status {
	return status.New(codes.InvalidArgument, e.Error())
}
