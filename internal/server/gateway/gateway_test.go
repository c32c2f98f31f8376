package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/braidwf/braid/pkg/apiclient/rest/resttest"
	. "github.com/braidwf/braid/pkg/apiclient/rest/resttest"
)

type response struct {
	status int
	header http.Header
	body   []byte
}

func call(t *testing.T, method, rawURL, body string, hdr ...string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, rawURL, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// echoed checks a 200 and decodes the echoed request into req.
func echoed(t *testing.T, r response, req any) Echo {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, body %s", r.status, r.body)
	}
	var e Echo
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("response %s: %v", r.body, err)
	}
	if err := json.Unmarshal(e.Request, req); err != nil {
		t.Fatalf("echoed request %s: %v", e.Request, err)
	}
	return e
}

// wantError checks an error response: HTTP status and argo-server's body.
func wantError(t *testing.T, r response, status int, code codes.Code, msgPart string) {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("status %d, body %s: %v", r.status, r.body, err)
	}
	if r.status != status || e.Code != code || !strings.Contains(e.Message, msgPart) {
		t.Errorf("got %d %s, want %d code %d with %q", r.status, r.body, status, code, msgPart)
	}
}

func TestBodyIsTheRequest(t *testing.T) {
	base := serve(t, testMux(t))
	// Unknown fields are ignored, the query is ignored, the path wins.
	r := call(t, "POST", base+"/api/v1/things/ns1?dry=true&namespace=q",
		`{"namespace":"body","thing":{"metadata":{"name":"a","labels":{"k":"v"}},"spec":"s"},"unknown":[1,2]}`)
	var got CreateThingRequest
	echoed(t, r, &got)
	resttest.SameJSON(t, got, CreateThingRequest{Namespace: "ns1", Thing: &Thing{
		Metadata: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"k": "v"}}, Spec: "s"}})
}

func TestBodyIsAField(t *testing.T) {
	base := serve(t, testMux(t))
	// {thing.metadata.name} sets a field inside the body, after the body.
	r := call(t, "PUT", base+"/api/v1/things/ns1/from%2Fpath?namespace=q",
		`{"metadata":{"name":"from-body","namespace":"x"},"spec":"s"}`)
	var got UpdateThingRequest
	echoed(t, r, &got)
	resttest.SameJSON(t, got, UpdateThingRequest{Namespace: "ns1", Thing: &Thing{
		Metadata: metav1.ObjectMeta{Name: "from/path", Namespace: "x"}, Spec: "s"}})

	// No body: the path still allocates the field it names.
	r = call(t, "PUT", base+"/api/v1/things/ns1/n", "")
	got = UpdateThingRequest{}
	echoed(t, r, &got)
	resttest.SameJSON(t, got, UpdateThingRequest{Namespace: "ns1", Thing: &Thing{Metadata: metav1.ObjectMeta{Name: "n"}}})
}

func TestEmptyBody(t *testing.T) {
	base := serve(t, testMux(t))
	for _, body := range []string{"", " \n\t"} {
		r := call(t, "POST", base+"/api/v1/things/ns1", body)
		var got CreateThingRequest
		echoed(t, r, &got)
		resttest.SameJSON(t, got, CreateThingRequest{Namespace: "ns1"})
	}
}

func TestInvalidJSONBody(t *testing.T) {
	base := serve(t, testMux(t))
	for body, part := range map[string]string{
		`{"thing":`:                 "request body is not valid JSON for this request: unexpected EOF",
		`{"thing": x}`:              "invalid character 'x' looking for beginning of value (after 11 bytes)",
		`{"dry": "yes"}`:            "cannot unmarshal string into Go struct field CreateThingRequest.dry of type bool",
		`{"namespace":"a"} {"b":1}`: "invalid character '{' after top-level value",
	} {
		r := call(t, "POST", base+"/api/v1/things/ns1", body)
		wantError(t, r, http.StatusBadRequest, codes.InvalidArgument, part)
	}
	r := call(t, "PUT", base+"/api/v1/things/ns1/n", `{"metadata":[]}`)
	wantError(t, r, http.StatusBadRequest, codes.InvalidArgument, "cannot unmarshal array into Go struct field Thing.metadata")
}

func TestBodyOverTheLimit(t *testing.T) {
	base := serve(t, http.MaxBytesHandler(testMux(t), 16))
	r := call(t, "POST", base+"/api/v1/things/ns1", `{"namespace":"0123456789abcdef"}`)
	// The error handler still sees the *http.MaxBytesError.
	wantError(t, r, http.StatusBadRequest, codes.InvalidArgument, "request body is larger than 16 bytes")
}

func TestQueryBindsEveryLeafKind(t *testing.T) {
	base := serve(t, testMux(t))
	since := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	q := url.Values{
		"listOptions.labelSelector":        {"app=a,tier in (x, y)"},
		"listOptions.fieldSelector":        {"metadata.name=n"},
		"listOptions.limit":                {"50"},
		"listOptions.continue":             {"tok"},
		"listOptions.timeoutSeconds":       {"7"},
		"listOptions.allowWatchBookmarks":  {"true"},
		"list_options.resourceVersion":     {"12"}, // the proto name of the first segment
		"logOptions.container":             {"main"},
		"logOptions.follow":                {"1"},
		"logOptions.sinceTime":             {"2024-05-06T09:08:09+02:00"},
		"logOptions.tailLines":             {"-1"},
		"fields":                           {"items.metadata.name,-items.status"},
		"flag":                             {"true"},
		"flagPtr":                          {"false"},
		"small":                            {"-128"},
		"count":                            {"2147483647"},
		"port":                             {"65535"},
		"big":                              {"18446744073709551615"},
		"ratio":                            {"0.25"},
		"ratio32":                          {"1e3"},
		"intPtr":                           {"0"},
		"tags":                             {"a", "b b", ""},
		"counts":                           {"3", "-4"},
		"phase":                            {"Running"},
		"since":                            {since.Format(time.RFC3339)},
		"level":                            {"high"},
		"levelPtr":                         {"low"},
		"raw":                              {"aGk="},
		"extra":                            {"inlined"},
		"deleteOptions.preconditions.uid":  {"u-1"},
		"deleteOptions.gracePeriodSeconds": {"30"},
		"deleteOptions.dryRun":             {"All"},
		"unknown":                          {"x"},
		"listOptions.unknown":              {"x"},
		"Ignored":                          {"x"},
		"ignored":                          {"x"},
		"namespace":                        {"from-query"}, // the path wins
	}
	r := call(t, "GET", base+"/api/v1/things/ns1?"+q.Encode(), "")
	var got ListThingsRequest
	echoed(t, r, &got)
	want := ListThingsRequest{
		Namespace: "ns1",
		ListOptions: &metav1.ListOptions{LabelSelector: "app=a,tier in (x, y)", FieldSelector: "metadata.name=n",
			Limit: 50, Continue: "tok", TimeoutSeconds: ptrTo[int64](7), AllowWatchBookmarks: true, ResourceVersion: "12"},
		LogOptions: &corev1.PodLogOptions{Container: "main", Follow: true,
			SinceTime: &metav1.Time{Time: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)}, TailLines: ptrTo[int64](-1)},
		Fields: "items.metadata.name,-items.status", Flag: true, FlagPtr: ptrTo(false),
		Small: -128, Count: 2147483647, Port: 65535, Big: 18446744073709551615, Ratio: 0.25, Ratio32: 1000,
		IntPtr: ptrTo[int64](0), Tags: []string{"a", "b b", ""}, Counts: []int32{3, -4}, Phase: corev1.PodRunning,
		Since: metav1.Time{Time: since}, Level: 2, LevelPtr: ptrTo[Level](1), Raw: []byte("hi"),
		Paging:     Paging{Extra: "inlined"},
		DeleteOpts: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptrTo(types.UID("u-1"))}, GracePeriodSeconds: ptrTo[int64](30), DryRun: []string{"All"}},
	}
	resttest.SameJSON(t, got, want)

	// "+" is a space in a query; no parameter leaves the pointers nil.
	r = call(t, "GET", base+"/api/v1/things/ns1?listOptions.labelSelector=a+b%2Bc", "")
	got = ListThingsRequest{}
	echoed(t, r, &got)
	resttest.SameJSON(t, got, ListThingsRequest{Namespace: "ns1", ListOptions: &metav1.ListOptions{LabelSelector: "a b+c"}})
	r = call(t, "GET", base+"/api/v1/things/ns1?unknown.deep=1&logOptions.nothing=2", "")
	got = ListThingsRequest{}
	echoed(t, r, &got)
	if got.LogOptions != nil || got.ListOptions != nil {
		t.Errorf("unknown parameters allocated options: %+v", got)
	}
}

func TestDeleteBindsOptions(t *testing.T) {
	base := serve(t, testMux(t))
	r := call(t, "DELETE", base+"/api/v1/things/ns1/n1?deleteOptions.preconditions.uid=u&deleteOptions.propagationPolicy=Foreground&force=true", "")
	var got DeleteThingRequest
	echoed(t, r, &got)
	fg := metav1.DeletePropagationForeground
	resttest.SameJSON(t, got, DeleteThingRequest{Namespace: "ns1", Name: "n1", Force: true, DeleteOptions: &metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: ptrTo(types.UID("u"))}, PropagationPolicy: &fg}})
}

func TestPathParameters(t *testing.T) {
	base := serve(t, testMux(t))
	for path, name := range map[string]string{
		"a%2Fb":       "a/b",   // stays in its segment, then unescaped once
		"a%252Fb":     "a%2Fb", // an escaped %: unescaped once only
		"a%20b":       "a b",
		"a+b":         "a+b", // "+" is a space only in a query
		"a%3Ab%3Fc":   "a:b?c",
		"%E2%9C%93":   "✓",
		"name?name=x": "name", // the query does not override the path
	} {
		r := call(t, "GET", base+"/api/v1/things/ns/"+path, "")
		var got GetThingRequest
		echoed(t, r, &got)
		if got.Name != name || got.Namespace != "ns" {
			t.Errorf("GET .../%s: name %q namespace %q, want %q", path, got.Name, got.Namespace, name)
		}
	}
	// An empty segment is an empty value.
	r := call(t, "GET", base+"/api/v1/things/?listOptions.limit=1", "")
	var got ListThingsRequest
	echoed(t, r, &got)
	resttest.SameJSON(t, got, ListThingsRequest{ListOptions: &metav1.ListOptions{Limit: 1}})
}

func TestBadQueryValues(t *testing.T) {
	base := serve(t, testMux(t))
	for query, part := range map[string]string{
		"listOptions.limit=abc":             `parameter "listOptions.limit": "abc" is not an integer`,
		"small=128":                         `parameter "small": "128" is out of range for int8`,
		"port=-1":                           `parameter "port": "-1" is not a non-negative integer`,
		"flag=yes":                          `parameter "flag": "yes" is not true or false`,
		"ratio=half":                        `parameter "ratio": "half" is not a number`,
		"since=yesterday":                   `parameter "since": "yesterday": parsing time`,
		"since=0000-01-01T00:00:00%2B01:00": `"0000-01-01T00:00:00+01:00" cannot be written back: parsing time "-0001-12-31T23:00:00Z"`,
		"level=mid":                         `parameter "level": "mid": want low or high`,
		"raw=!!":                            `parameter "raw": "!!" is not base64`,
		"fields=a&fields=b":                 `parameter "fields": given 2 times; it takes one value`,
		"listOptions=x":                     `parameter "listOptions": names an object`,
		"labels=x":                          `parameter "labels": names an object`,
		"counts=1&counts=x":                 `parameter "counts": "x" is not an integer`,
		"logOptions.sinceTime.x=1":          "", // inside a leaf: no such field, ignored
		"listOptions.limit=1%zz":            `invalid URL escape "%zz"`,
		"listOptions.limit=1;fields":        "invalid semicolon separator in query",
	} {
		r := call(t, "GET", base+"/api/v1/things/ns1?"+query, "")
		if part == "" {
			echoed(t, r, &ListThingsRequest{})
			continue
		}
		wantError(t, r, http.StatusBadRequest, codes.InvalidArgument, part)
	}
}

func TestErrorsGoThroughTheErrorHandler(t *testing.T) {
	base := serve(t, testMux(t))
	for code, httpStatus := range map[codes.Code]int{
		codes.NotFound:         http.StatusNotFound,
		codes.AlreadyExists:    http.StatusConflict,
		codes.PermissionDenied: http.StatusForbidden,
		codes.Unauthenticated:  http.StatusUnauthorized,
		codes.InvalidArgument:  http.StatusBadRequest,
		codes.Internal:         http.StatusInternalServerError,
		codes.Unimplemented:    http.StatusNotImplemented,
	} {
		r := call(t, "GET", base+"/api/v1/fail/"+strconv.Itoa(int(code)), "")
		wantError(t, r, httpStatus, code, "failed with")
		if v := r.header.Get("Grpc-Metadata-Argo-Version"); v != "" {
			t.Errorf("error response has the success header: %q", v)
		}
	}
	// A path parameter that does not parse.
	r := call(t, "GET", base+"/api/v1/fail/x", "")
	wantError(t, r, http.StatusBadRequest, codes.InvalidArgument, `parameter "code": "x" is not a non-negative integer`)
}

func TestUnknownRoutes(t *testing.T) {
	base := serve(t, testMux(t))
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/nothing"},
		{"GET", "/api/v1/other"},        // another service's route
		{"GET", "/api/v1/things-watch"}, // a stream
		{"PATCH", "/api/v1/things/ns/n"},
		{"GET", "/api/v1/things/ns/n/extra"},
	} {
		r := call(t, c.method, base+c.path, "")
		wantError(t, r, http.StatusNotImplemented, codes.Unimplemented, "Not Implemented")
	}
}

func TestContextAndHeaders(t *testing.T) {
	base := serve(t, testMux(t))
	r := call(t, "GET", base+"/api/v1/things/ns/n", "", "Grpc-Metadata-From-Client", "c", "Authorization", "Bearer t")
	var req GetThingRequest
	e := echoed(t, r, &req)
	if e.Method != "/test.ThingService/GetThing" || e.Pattern != "/api/v1/things/{namespace}/{name}" {
		t.Errorf("RPC method %q, pattern %q", e.Method, e.Pattern)
	}
	// As the mux's header matcher and annotators make it (v2.33 forwards
	// no Grpc-Metadata- header by default).
	for k, v := range map[string]string{"x-annotated": "GET", "authorization": "Bearer t", "grpcgateway-user-agent": "Go-http-client/1.1"} {
		if got := e.Metadata[k]; len(got) != 1 || got[0] != v {
			t.Errorf("metadata %s = %q, want %q (all: %v)", k, got, v, e.Metadata)
		}
	}
	if got, ok := e.Metadata["from-client"]; ok {
		t.Errorf("metadata from-client = %q, want none", got)
	}
	for k, v := range map[string]string{
		"Content-Type":                   "application/json",
		"Grpc-Metadata-Argo-Version":     "v0.0.0-test",
		"Grpc-Metadata-X-Set-By-Handler": "yes",
		"Content-Length":                 strconv.Itoa(len(r.body)),
	} {
		if got := r.header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	// The mux's middlewares run first, with the path parameters.
	r = call(t, "GET", base+"/api/v1/things/ns/a%2Fb", "", "X-Deny", "1")
	wantError(t, r, http.StatusForbidden, codes.PermissionDenied, "denied for name a/b")
}

func TestPostServedAsGet(t *testing.T) {
	// The mux's path length fallback: a form POST to a GET route.
	base := serve(t, testMux(t))
	r := call(t, "POST", base+"/api/v1/things/ns/n?fields=a", "getOptions.resourceVersion=5",
		"Content-Type", "application/x-www-form-urlencoded")
	var got GetThingRequest
	echoed(t, r, &got)
	resttest.SameJSON(t, got, GetThingRequest{Namespace: "ns", Name: "n", Fields: "a", GetOptions: &metav1.GetOptions{ResourceVersion: "5"}})
}

func ptrTo[T any](v T) *T { return &v }
