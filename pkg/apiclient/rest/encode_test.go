package rest

import (
	"net/url"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apiclient/rest/resttest"
	. "github.com/braidwf/braid/pkg/apiclient/rest/resttest"
)

func TestEncode(t *testing.T) {
	in := FullList()
	in.Selector = &metav1.LabelSelector{} // all unset: sends nothing (Bind leaves it nil)
	path, q, err := Encode(in, "/api/v1/things/{namespace}")
	if err != nil {
		t.Fatal(err)
	}
	if path != "/api/v1/things/ns%2F1%20x" {
		t.Errorf("path %q", path)
	}
	want := "big=18446744073709551615&count=1073741824&counts=1&counts=-2" +
		"&deleteOptions.dryRun=All&deleteOptions.preconditions.uid=u&deleteOptions.propagationPolicy=Foreground" +
		"&extra=e%26e%3De&fields=items.metadata.name&flag=true&flagPtr=false&intPtr=0&level=high&levelPtr=low" +
		"&listOptions.labelSelector=app+in+%28a%2C+b%29%2C%21c&listOptions.limit=5&listOptions.timeoutSeconds=0" +
		"&logOptions.container=main&logOptions.follow=true&logOptions.sinceTime=2024-05-06T07%3A08%3A09Z&logOptions.tailLines=-1" +
		"&phase=Failed&port=8080&ratio=0.1&ratio32=2.5&raw=AP8%3D&since=2001-02-03T04%3A05%3A06Z&small=-3&tags=x&tags=&tags=y%2Bz"
	if got := q.Encode(); got != want {
		t.Errorf("query\n got %s\nwant %s", got, want)
	}
}

// pathParams is what the mux extracts from a path matched to a pattern of
// single-segment variables: each segment unescaped once.
func pathParams(t *testing.T, pattern, path string) map[string]string {
	t.Helper()
	ps, vs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(vs) {
		t.Fatalf("path %q does not match %q", path, pattern)
	}
	out := map[string]string{}
	for i, p := range ps {
		if name, ok := strings.CutPrefix(p, "{"); ok {
			v, err := url.PathUnescape(vs[i])
			if err != nil {
				t.Fatal(err)
			}
			out[strings.TrimSuffix(name, "}")] = v
		} else if p != vs[i] {
			t.Fatalf("path %q does not match %q", path, pattern)
		}
	}
	return out
}

func TestEncodeThenBind(t *testing.T) {
	for _, c := range []struct {
		pattern string
		in, out any
	}{
		{"/api/v1/things/{namespace}", FullList(), &ListThingsRequest{}},
		{"/api/v1/things/{namespace}", &ListThingsRequest{}, &ListThingsRequest{}},
		{"/api/v1/things/{namespace}/{name}", &GetThingRequest{Namespace: "", Name: "a/b%2F c?d#e", Fields: "-x"}, &GetThingRequest{}},
		{"/api/v1/things/{namespace}/{name}", &DeleteThingRequest{Namespace: "n", Name: "..", Force: true,
			DeleteOptions: &metav1.DeleteOptions{GracePeriodSeconds: ptrTo[int64](0)}}, &DeleteThingRequest{}},
		{"/x/{thing.metadata.name}", &UpdateThingRequest{Thing: &Thing{Metadata: metav1.ObjectMeta{Name: "n"}}}, &UpdateThingRequest{}},
	} {
		path, q, err := Encode(c.in, c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if err := Bind(c.out, pathParams(t, c.pattern, path), q); err != nil {
			t.Fatal(err)
		}
		resttest.SameJSON(t, c.out, c.in)
	}
}

func TestEncodeErrors(t *testing.T) {
	if _, _, err := Encode(&ListThingsRequest{Labels: map[string]string{"a": "b"}}, "/x"); err == nil ||
		!strings.Contains(err.Error(), `field "labels": a map[string]string cannot be sent as query parameters`) {
		t.Errorf("a map: %v", err)
	}
	if _, _, err := Encode(&ListThingsRequest{Conditions: []metav1.Condition{{}}}, "/x"); err == nil {
		t.Error("a slice of objects: want an error")
	}
	if _, _, err := Encode(&ListThingsRequest{Labels: map[string]string{}, Annotations: nil}, "/x"); err != nil {
		t.Errorf("empty map: %v", err)
	}
	if _, _, err := Encode(&ListThingsRequest{Level: 7}, "/x"); err == nil || !strings.Contains(err.Error(), "level 7 has no name") {
		t.Errorf("a MarshalText error: %v", err)
	}
	if _, err := Path(&GetThingRequest{}, "/x/{nope}"); err == nil {
		t.Error("an unknown variable: want an error")
	}
	if _, err := Path(GetThingRequest{}, "/x"); err == nil {
		t.Error("not a pointer: want an error")
	}
}

func TestPath(t *testing.T) {
	in := &UpdateThingRequest{Namespace: "a b", Thing: &Thing{Metadata: metav1.ObjectMeta{Name: "x/y"}, Spec: "not in a path"}}
	for pattern, want := range map[string]string{
		"/api/{namespace}/{thing.metadata.name}":  "/api/a%20b/x%2Fy",
		"/api/{namespace}/{the_thing.spec}:do":    "/api/a%20b/not%20in%20a%20path:do",
		"/api/{thing.metadata.name=**}":           "/api/x/y",
		"/api/{thing.metadata.name=things/*}/end": "/api/x/y/end",
		"/api/{thing.metadata.namespace}/z":       "/api//z",
	} {
		got, err := Path(in, pattern)
		if err != nil || got != want {
			t.Errorf("Path(%q) = %q, %v; want %q", pattern, got, err, want)
		}
	}
	// A zero number is "0"; a nil pointer on the way is an empty segment.
	if got, err := Path(&FailRequest{}, "/api/v1/fail/{code}"); err != nil || got != "/api/v1/fail/0" {
		t.Errorf("code 0: %q, %v", got, err)
	}
	if got, err := Path(&UpdateThingRequest{}, "/api/{thing.metadata.name}/x"); err != nil || got != "/api//x" {
		t.Errorf("nil thing: %q, %v", got, err)
	}
}

func ptrTo[T any](v T) *T { return &v }
