package kubeauth

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/rest"

	"github.com/braidwf/braid/internal/server/auth"
)

func TestParseCredential(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		in      string
		want    credential
		wantErr bool
	}{
		{in: "Bearer abc.def", want: credential{token: "abc.def"}},
		{in: "bearer  abc", want: credential{token: "abc"}},
		{in: "abc", want: credential{token: "abc"}},
		{in: "Basic " + b64("alice:s3cret:x"), want: credential{username: "alice", password: "s3cret:x", basic: true}},
		{in: "Bearer ", wantErr: true},
		{in: "Bearer a b", wantErr: true},
		{in: "Basic !!!", wantErr: true},
		{in: "Basic " + b64("nopassword"), wantErr: true},
		{in: "Digest x", wantErr: true},
		{in: "", wantErr: true},
	} {
		got, err := parseCredential(tc.in)
		if tc.wantErr {
			if !errors.Is(err, auth.ErrUnauthenticated) {
				t.Errorf("parseCredential(%q) error = %v, want one wrapping ErrUnauthenticated", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseCredential(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		// Identity.Credential round-trips to the same credential.
		if again, err := parseCredential(got.value()); err != nil || again != got {
			t.Errorf("parseCredential(value of %q) = %+v, %v; want %+v", tc.in, again, err, got)
		}
	}
}

func TestIdentityOf(t *testing.T) {
	cred := credential{token: "tok"}
	for _, tc := range []struct {
		user     string
		ns, name string
	}{
		{user: "system:serviceaccount:team-a:reader", ns: "team-a", name: "reader"},
		{user: "system:serviceaccount:team-a", ns: "", name: ""},
		{user: "system:serviceaccount:a:b:c", ns: "", name: ""},
		{user: "alice", ns: "", name: ""},
	} {
		id := identityOf(authnv1.UserInfo{Username: tc.user, Groups: []string{"g1", "system:authenticated"}}, cred)
		want := &auth.Identity{Mode: auth.ModeClient, Issuer: "kubernetes", Subject: tc.user,
			Groups: []string{"g1", "system:authenticated"}, ServiceAccountNamespace: tc.ns, ServiceAccountName: tc.name, Credential: "tok"}
		if d := cmp.Diff(want, id); d != "" {
			t.Errorf("identityOf(%q) (-want +got):\n%s", tc.user, d)
		}
	}
}

func TestChecks(t *testing.T) {
	ra := func(verb, res, ns, name string) authzv1.ResourceAttributes {
		return authzv1.ResourceAttributes{Verb: verb, Group: "argoproj.io", Resource: res, Namespace: ns, Name: name}
	}
	podLog := func(ns string) authzv1.ResourceAttributes {
		return authzv1.ResourceAttributes{Verb: "get", Resource: "pods", Subresource: "log", Namespace: ns}
	}
	for _, tc := range []struct {
		a    auth.Attributes
		want []authzv1.ResourceAttributes
	}{
		{auth.Attributes{Verb: "list", Resource: "workflows", Namespace: "a"}, []authzv1.ResourceAttributes{ra("list", "workflows", "a", "")}},
		{auth.Attributes{Verb: "list", Resource: "workflows"}, []authzv1.ResourceAttributes{ra("list", "workflows", "", "")}},
		{auth.Attributes{Verb: "get", Resource: "workflows", Namespace: "a", Name: "w"}, []authzv1.ResourceAttributes{ra("get", "workflows", "a", "w")}},
		{auth.Attributes{Verb: "create", Resource: "workflows", Namespace: "a", Name: "w"}, []authzv1.ResourceAttributes{ra("create", "workflows", "a", "")}},
		{auth.Attributes{Verb: "watch", Resource: "cronworkflows", Namespace: "a", Name: "c"}, []authzv1.ResourceAttributes{ra("watch", "cronworkflows", "a", "")}},
		{auth.Attributes{Verb: "terminate", Resource: "workflows", Namespace: "a", Name: "w"}, []authzv1.ResourceAttributes{ra("update", "workflows", "a", "w")}},
		{auth.Attributes{Verb: "set", Resource: "workflows", Namespace: "a", Name: "w"}, []authzv1.ResourceAttributes{ra("update", "workflows", "a", "w")}},
		{auth.Attributes{Verb: "resubmit", Resource: "workflows", Namespace: "a", Name: "w"}, []authzv1.ResourceAttributes{ra("create", "workflows", "a", "")}},
		{auth.Attributes{Verb: "delete", Resource: "workfloweventbindings", Namespace: "a", Name: "b"}, []authzv1.ResourceAttributes{ra("delete", "workfloweventbindings", "a", "b")}},
		{auth.Attributes{Verb: "get", Resource: "clusterworkflowtemplates", Namespace: "a", Cluster: true, Name: "t"}, []authzv1.ResourceAttributes{ra("get", "clusterworkflowtemplates", "", "t")}},
		{auth.Attributes{Verb: "list", Resource: "archivedworkflows", Namespace: "a"}, []authzv1.ResourceAttributes{ra("list", "workflows", "a", "")}},
		{auth.Attributes{Verb: "delete", Resource: "archivedworkflows", Namespace: "a", Name: "w"}, []authzv1.ResourceAttributes{ra("delete", "workflows", "a", "w")}},
		{auth.Attributes{Verb: "retry", Resource: "archivedworkflows", Namespace: "a", Name: "w"}, []authzv1.ResourceAttributes{ra("create", "workflows", "a", "")}},
		{auth.Attributes{Verb: "create", Resource: "events", Namespace: "a", Name: "disc"}, []authzv1.ResourceAttributes{
			ra("list", "workfloweventbindings", "a", ""), ra("get", "workflowtemplates", "a", ""), ra("create", "workflows", "a", "")}},
		{auth.Attributes{Verb: "watch", Resource: "events", Namespace: "a", Name: "w"}, []authzv1.ResourceAttributes{{Verb: "watch", Resource: "events", Namespace: "a"}}},
		{auth.Attributes{Verb: "resume", Resource: "cronworkflows", Namespace: "a", Name: "c"}, []authzv1.ResourceAttributes{ra("update", "cronworkflows", "a", "c")}},
		{auth.Attributes{Verb: "get", Resource: "logs", Namespace: "a", Name: "w"}, []authzv1.ResourceAttributes{ra("get", "workflows", "a", "w"), podLog("a")}},
		{auth.Attributes{Verb: "frobnicate", Resource: "sensors", Namespace: "a"}, []authzv1.ResourceAttributes{ra("frobnicate", "sensors", "a", "")}},
	} {
		if d := cmp.Diff(tc.want, checks(tc.a)); d != "" {
			t.Errorf("checks(%+v) (-want +got):\n%s", tc.a, d)
		}
	}
}

func TestAuthorizeWithoutReview(t *testing.T) {
	// Nothing listens on this address: the cases below must not call it.
	k, err := New(&rest.Config{Host: "http://127.0.0.1:1"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := auth.Attributes{Verb: "delete", Resource: "workflows", Namespace: "a"}
	if err := k.Authorize(context.Background(), &auth.Identity{Mode: auth.ModeServer}, a); err != nil {
		t.Errorf("server mode: %v, want allowed", err)
	}
	for _, id := range []*auth.Identity{nil, {Mode: auth.ModeClient, Subject: "x"}} {
		if err := k.Authorize(context.Background(), id, a); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("Authorize(%+v) = %v, want ErrUnauthenticated", id, err)
		}
	}
	if _, err := k.Verify(context.Background(), "Negotiate x"); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("Verify(Negotiate) = %v, want ErrUnauthenticated", err)
	}
}

func TestNewNeedsConfig(t *testing.T) {
	if _, err := New(nil, Options{}); err == nil {
		t.Fatal("New(nil) succeeded")
	}
}

type recordTransport struct{ got *http.Request }

func (r *recordTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = req
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
}

func TestCallerTransport(t *testing.T) {
	rec := &recordTransport{}
	tr := &callerTransport{base: rec}
	req, _ := http.NewRequest(http.MethodPost, "http://x/", nil)
	if _, err := tr.RoundTrip(req); err == nil || rec.got != nil {
		t.Fatalf("a request without a caller's credential was sent (err %v)", err)
	}
	req = req.WithContext(withCredential(context.Background(), credential{token: "caller"}))
	if _, err := tr.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if h := rec.got.Header.Get("Authorization"); h != "Bearer caller" {
		t.Errorf("Authorization = %q, want the caller's bearer token", h)
	}
	if req.Header.Get("Authorization") != "" {
		t.Error("the caller's request was modified")
	}
	req = req.WithContext(withCredential(context.Background(), credential{username: "u", password: "p", basic: true}))
	if _, err := tr.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if u, p, ok := rec.got.BasicAuth(); !ok || u != "u" || p != "p" {
		t.Errorf("basic auth = %q %q %v, want u p", u, p, ok)
	}
}

// BenchmarkWarm is the per-request cost of client auth with both answers
// cached (the cold cost, two reviews on the apiserver, is measured on the
// node by test/e2e/kube's TestKubeClientAuth/cost).
func BenchmarkWarm(b *testing.B) {
	k, err := New(&rest.Config{Host: "http://127.0.0.1:1"}, Options{IdentityTTL: time.Hour, DecisionTTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	token := strings.Repeat("x", 900) // about a ServiceAccount JWT's length
	cred := credential{token: token}
	id := identityOf(authnv1.UserInfo{Username: "system:serviceaccount:a:r", Groups: []string{"system:serviceaccounts", "system:authenticated"}}, cred)
	a := auth.Attributes{Verb: "list", Resource: "workflows", Namespace: "a"}
	k.identities.put(cred.hash(), verdict{id: id})
	k.decisions.put(decisionKey{cred: cred.hash(), attr: a}, true)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		got, err := k.Verify(ctx, "Bearer "+token)
		if err != nil {
			b.Fatal(err)
		}
		if err := k.Authorize(ctx, got, a); err != nil {
			b.Fatal(err)
		}
	}
}
