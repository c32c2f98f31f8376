package kubeauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/braidwf/braid/internal/server/auth"
)

// faultyAPIServer answers every review with one status: a fault the real
// apiserver on the test node cannot be made to give on demand (a 500), or
// a 401 for a token it would also refuse, to check what a refusal does to
// the caches. The allowed and denied paths are tested on the node
// (test/e2e/kube/auth_test.go).
type faultyAPIServer struct {
	*httptest.Server
	mu     sync.Mutex
	code   int
	paths  []string
	tokens []string
}

func newFaultyAPIServer(t *testing.T, code int) *faultyAPIServer {
	f := &faultyAPIServer{code: code}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.paths = append(f.paths, r.URL.Path)
		f.tokens = append(f.tokens, r.Header.Get("Authorization"))
		code := f.code
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		reason := map[int]string{401: "Unauthorized", 500: "InternalError"}[code]
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"` + reason + `","code":` + strconv.Itoa(code) + `}`))
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *faultyAPIServer) calls() ([]string, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.paths...), append([]string(nil), f.tokens...)
}

// newFaultyKube is a Kube on f, configured as the server would be: with a
// token of its own, which must never be sent.
func newFaultyKube(t *testing.T, f *faultyAPIServer, clk *fakeClock) *Kube {
	t.Helper()
	k, err := New(&rest.Config{Host: f.URL, BearerToken: "the-servers-own-token", Impersonate: rest.ImpersonationConfig{UserName: "admin"}},
		Options{Now: clk.now, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestVerifyRefused(t *testing.T) {
	f := newFaultyAPIServer(t, http.StatusUnauthorized)
	clk := &fakeClock{t: time.Unix(1000, 0)}
	k := newFaultyKube(t, f, clk)
	ctx := context.Background()
	_, err := k.Verify(ctx, "Bearer garbage")
	if !errors.Is(err, auth.ErrUnauthenticated) || !strings.Contains(err.Error(), "the Kubernetes API server refused it") {
		t.Fatalf("Verify = %v, want ErrUnauthenticated: the Kubernetes API server refused it", err)
	}
	if st := auth.Status(err); !strings.Contains(st.Error(), "Unauthenticated") {
		t.Errorf("auth.Status = %v, want Unauthenticated", st)
	}
	// The refusal is cached: the same token again costs no review.
	if _, err := k.Verify(ctx, "Bearer garbage"); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("Verify again = %v, want ErrUnauthenticated", err)
	}
	paths, tokens := f.calls()
	if len(paths) != 1 || paths[0] != "/apis/authentication.k8s.io/v1/selfsubjectreviews" {
		t.Fatalf("reviews sent: %v, want one SelfSubjectReview", paths)
	}
	if tokens[0] != "Bearer garbage" {
		t.Errorf("review sent with Authorization %q, want the caller's token", tokens[0])
	}
	clk.t = clk.t.Add(DefaultIdentityTTL)
	_, _ = k.Verify(ctx, "Bearer garbage")
	if paths, _ := f.calls(); len(paths) != 2 {
		t.Errorf("%d reviews after the cache entry expired, want 2", len(paths))
	}
}

func TestVerifyServerError(t *testing.T) {
	f := newFaultyAPIServer(t, http.StatusInternalServerError)
	clk := &fakeClock{t: time.Unix(1000, 0)}
	k := newFaultyKube(t, f, clk)
	for range 2 {
		_, err := k.Verify(context.Background(), "Bearer tok")
		if err == nil || errors.Is(err, auth.ErrUnauthenticated) || errors.Is(err, auth.ErrForbidden) {
			t.Fatalf("Verify = %v, want an internal error", err)
		}
		if st := auth.Status(err); !strings.Contains(st.Error(), "Internal") {
			t.Errorf("auth.Status = %v, want Internal", st)
		}
	}
	// A failure is not cached: each request asks again (client-go retries
	// a 500 only when it carries Retry-After).
	if paths, tokens := f.calls(); len(paths) != 2 || tokens[0] != "Bearer tok" {
		t.Errorf("reviews %v with %v: want one per request, with the caller's token", paths, tokens)
	}
}

func TestAuthorizeFaults(t *testing.T) {
	for _, tc := range []struct {
		code    int
		wantErr error // nil: internal
	}{
		{http.StatusUnauthorized, auth.ErrUnauthenticated},
		{http.StatusInternalServerError, nil},
	} {
		f := newFaultyAPIServer(t, tc.code)
		clk := &fakeClock{t: time.Unix(1000, 0)}
		k := newFaultyKube(t, f, clk)
		id := &auth.Identity{Mode: auth.ModeClient, Subject: "system:serviceaccount:a:r", Credential: "tok"}
		err := k.Authorize(context.Background(), id, auth.Attributes{Verb: "list", Resource: "workflows", Namespace: "a"})
		switch {
		case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
			t.Errorf("HTTP %d: Authorize = %v, want %v", tc.code, err, tc.wantErr)
		case tc.wantErr == nil && (err == nil || errors.Is(err, auth.ErrForbidden) || errors.Is(err, auth.ErrUnauthenticated)):
			t.Errorf("HTTP %d: Authorize = %v, want an internal error", tc.code, err)
		}
		paths, tokens := f.calls()
		if len(paths) == 0 || paths[0] != "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" || tokens[0] != "Bearer tok" {
			t.Errorf("HTTP %d: reviews %v with %v, want a SelfSubjectAccessReview with the caller's token", tc.code, paths, tokens)
		}
		if k.decisions.len() != 0 {
			t.Errorf("HTTP %d: a failed review was cached as a decision", tc.code)
		}
	}
}
