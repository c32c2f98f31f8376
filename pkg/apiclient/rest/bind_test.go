package rest

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apiclient/rest/resttest"
	. "github.com/braidwf/braid/pkg/apiclient/rest/resttest"
)

func TestBindErrorsAreInvalidArgumentAndSetNothing(t *testing.T) {
	var req ListThingsRequest
	err := Bind(&req, nil, url.Values{"listOptions.limit": {"x"}})
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Name != "listOptions.limit" {
		t.Fatalf("error %v, want a *ParamError for listOptions.limit", err)
	}
	if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), `"x" is not an integer`) {
		t.Errorf("status %v", st)
	}
	if req.ListOptions != nil {
		t.Errorf("a bad value allocated ListOptions: %+v", req.ListOptions)
	}
	if err := Bind(&req, nil, url.Values{"listOptions.nothing": {"1"}, "logOptions": nil}); err == nil {
		t.Error("logOptions with no values: want an error")
	}
	if req.ListOptions != nil {
		t.Errorf("an unknown parameter allocated ListOptions: %+v", req.ListOptions)
	}
}

func TestBindPath(t *testing.T) {
	var req GetThingRequest
	err := Bind(&req, map[string]string{"name": "p", "getOptions.resourceVersion": "7"},
		url.Values{"name": {"q"}, "fields": {"f"}, "getOptions.resourceVersion": {"1"}})
	if err != nil {
		t.Fatal(err)
	}
	resttest.SameJSON(t, req, GetThingRequest{Name: "p", Fields: "f", GetOptions: &metav1.GetOptions{ResourceVersion: "7"}})

	err = Bind(&req, map[string]string{"nope": "x"}, nil)
	if err == nil || !strings.Contains(err.Error(), `parameter "nope": the request has no such field`) {
		t.Errorf("unknown path parameter: %v", err)
	}
}

type inner struct {
	Name  string `json:"name"`
	Deep  string `json:"deep"`
	Other string `json:"other"`
}

type Outer struct {
	Name string `json:"name"`
}

type embeds struct {
	*Outer `json:",inline"` // a nil pointer, allocated when set
	inner                   // unexported, its exported fields promoted (shadowed by Outer's name: same depth, first wins)
	Own    string           `json:"own"`
	Other  string           `json:"other"` // shallower than inner's
	Named  inner            `json:"named"`
	Tagged Outer            // no tag: "Tagged", not flattened
}

func TestBindEmbedded(t *testing.T) {
	var e embeds
	q := url.Values{"name": {"n"}, "deep": {"d"}, "other": {"o"}, "own": {"w"}, "named.name": {"nn"}, "Tagged.name": {"t"}}
	if err := Bind(&e, nil, q); err != nil {
		t.Fatal(err)
	}
	if e.Outer == nil || e.Outer.Name != "n" || e.inner.Name != "" || e.Deep != "d" || e.Other != "o" ||
		e.inner.Other != "" || e.Own != "w" || e.Named.Name != "nn" || e.Tagged.Name != "t" {
		t.Errorf("got %+v", e)
	}
	e = embeds{}
	if err := Bind(&e, nil, url.Values{"deep": {"d"}}); err != nil || e.Outer != nil {
		t.Errorf("setting inner's field allocated Outer: %+v, %v", e, err)
	}
}

func TestBindWantsAStructPointer(t *testing.T) {
	for _, in := range []any{nil, GetThingRequest{}, (*GetThingRequest)(nil), new(string)} {
		if err := Bind(in, nil, url.Values{"name": {"x"}}); err == nil {
			t.Errorf("Bind(%T): want an error", in)
		}
	}
}

// FuzzBind: Bind never panics; it fails only with a *ParamError; the path
// wins; and what it binds encodes to a query that binds to the same thing.
func FuzzBind(f *testing.F) {
	for _, seed := range []struct{ query, ns string }{
		{"listOptions.labelSelector=a%3Db&listOptions.limit=5&tags=a&tags=b", "ns"},
		{"logOptions.sinceTime=2024-01-02T03:04:05Z&logOptions.follow=true&since=2024-01-02T03:04:05%2B01:00", "a/b"},
		{"deleteOptions.preconditions.uid=u&deleteOptions.dryRun=All&extra=x&raw=aGk%3D&level=low", ""},
		{"ratio=NaN&ratio32=-0&small=-128&big=18446744073709551615&flagPtr=F&intPtr=-1", "%2F"},
		{"namespace=q&list_options.continue=c&counts=1&counts=2&levelPtr=high&phase=Running", "+"},
		{"listOptions=x&listOptions.limit=abc&a..b=1&.=2&labels=3", "x"},
		{"since=0000-01-01T00:00:00%2B01:00", "y"},
		{"logOptions.sinceTime=9999-12-31T23:59:59-01:00", "z"},
	} {
		f.Add(seed.query, seed.ns)
	}
	f.Fuzz(func(t *testing.T, rawQuery, ns string) {
		q, _ := url.ParseQuery(rawQuery) // what parsed, as r.Form keeps it
		var req ListThingsRequest
		err := Bind(&req, map[string]string{"namespace": ns}, q)
		if err != nil {
			var pe *ParamError
			if !errors.As(err, &pe) {
				t.Fatalf("Bind(%q): %v is not a *ParamError", rawQuery, err)
			}
			return
		}
		if req.Namespace != ns {
			t.Fatalf("namespace %q, want the path's %q", req.Namespace, ns)
		}
		path, q2, err := Encode(&req, "/api/v1/things/{namespace}")
		if err != nil {
			t.Fatalf("Encode of what %q bound: %v", rawQuery, err)
		}
		var again ListThingsRequest
		if err := Bind(&again, map[string]string{"namespace": ns}, q2); err != nil {
			t.Fatalf("Bind(%q) (Encode of what %q bound): %v", q2.Encode(), rawQuery, err)
		}
		path3, q3, err := Encode(&again, "/api/v1/things/{namespace}")
		if err != nil || path3 != path || q3.Encode() != q2.Encode() {
			t.Fatalf("not stable: %q %q, then %q %q (%v)", path, q2.Encode(), path3, q3.Encode(), err)
		}
	})
}
