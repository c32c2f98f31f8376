package http

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// secrets is an in-memory artifact.Secrets keyed "namespace/name/key".
type secrets map[string]string

func (s secrets) Secret(_ context.Context, ns, name, key string) (string, error) {
	v, ok := s[ns+"/"+name+"/"+key]
	if !ok {
		return "", fmt.Errorf("secret %s/%s has no key %s", ns, name, key)
	}
	return v, nil
}

func sel(name, key string) *apiv1.SecretKeySelector {
	return &apiv1.SecretKeySelector{LocalObjectReference: apiv1.LocalObjectReference{Name: name}, Key: key}
}

func httpArt(u string) *v1alpha1.Artifact {
	return &v1alpha1.Artifact{Name: "data", ArtifactLocation: v1alpha1.ArtifactLocation{HTTP: &v1alpha1.HTTPArtifact{URL: u}}}
}

func newDriver() *Driver {
	s := secrets{"ns/creds/user": "alice", "ns/creds/pass": "s3cr3t-pw"}
	return New(s, "ns", WithBackoff(artifact.Backoff{Attempts: 5, Initial: time.Millisecond}))
}

// server answers each request with the next of statuses (the last repeats); a 200/201 carries body.
func server(t *testing.T, body string, statuses ...int) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		i := int(n.Add(1)) - 1
		status := statuses[min(i, len(statuses)-1)]
		if status == -1 { // promise more than is sent, then drop the connection
			w.Header().Set("Content-Length", fmt.Sprint(len(body)+100))
			w.WriteHeader(200)
			_, _ = io.WriteString(w, body[:len(body)/2])
			panic(nethttp.ErrAbortHandler)
		}
		w.WriteHeader(status)
		if status < 300 {
			_, _ = io.WriteString(w, body)
		} else {
			_, _ = io.WriteString(w, "nope")
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestLoad(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		statuses []int
		path     string
		want     string // error substring, "" for success
		notFound bool
		attempts int32
	}{
		{name: "ok", statuses: []int{200}, attempts: 1},
		{name: "retries 5xx", statuses: []int{503, 500, 200}, attempts: 3},
		{name: "retries a dropped body", statuses: []int{-1, 200}, attempts: 2},
		{name: "retries 429", statuses: []int{429, 200}, attempts: 2},
		{name: "gives up", statuses: []int{502}, attempts: 5, want: "server answered 502 Bad Gateway: nope (gave up after 5 attempts)"},
		{name: "404 is not found", statuses: []int{404}, attempts: 1, notFound: true, want: `artifact "data": load http://127.0.0.1`},
		{name: "403 is not retried", statuses: []int{403}, attempts: 1, want: "server answered 403 Forbidden: nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Repeat("0123456789", 10000)
			srv, n := server(t, body, tc.statuses...)
			dst := filepath.Join(t.TempDir(), "in", "data.txt")
			err := newDriver().Load(ctx, httpArt(srv.URL+"/file"), dst)
			if got := n.Load(); got != tc.attempts {
				t.Errorf("attempts = %d, want %d", got, tc.attempts)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(dst)
				if err != nil || string(data) != body {
					t.Fatalf("loaded %d bytes (%v), want %d", len(data), err, len(body))
				}
				if info, _ := os.Stat(dst); info.Mode().Perm() != 0o644 {
					t.Errorf("mode = %v, want 0644", info.Mode().Perm())
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load error = %v, want it to contain %q", err, tc.want)
			}
			if errors.Is(err, artifact.ErrNotFound) != tc.notFound {
				t.Errorf("errors.Is(%v, ErrNotFound) = %v, want %v", err, !tc.notFound, tc.notFound)
			}
			if entries, _ := os.ReadDir(filepath.Dir(dst)); tc.want != "" && len(entries) != 0 {
				t.Errorf("a failed Load left %d files", len(entries))
			}
		})
	}
}

func TestHeadersAndBasicAuth(t *testing.T) {
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != "alice" || pass != "s3cr3t-pw" || r.Header.Get("X-Token") != "t1" {
			w.WriteHeader(401)
			return
		}
		_, _ = io.WriteString(w, "authorized")
	}))
	defer srv.Close()
	a := httpArt(srv.URL)
	a.HTTP.Headers = []v1alpha1.Header{{Name: "X-Token", Value: "t1"}}
	a.HTTP.Auth = &v1alpha1.HTTPAuth{BasicAuth: v1alpha1.BasicAuth{UsernameSecret: sel("creds", "user"), PasswordSecret: sel("creds", "pass")}}
	rc, err := newDriver().OpenStream(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	if string(data) != "authorized" {
		t.Fatalf("got %q", data)
	}

	a.HTTP.Auth.BasicAuth.PasswordSecret = sel("creds", "missing")
	_, err = newDriver().OpenStream(context.Background(), a)
	if err == nil || !strings.Contains(err.Error(), `http.auth.basicAuth.passwordSecret (secret "creds" key "missing")`) {
		t.Errorf("missing secret error = %v", err)
	}
	a.HTTP.Auth.BasicAuth.PasswordSecret = nil
	_, err = newDriver().OpenStream(context.Background(), a)
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("want the server's 401 with a wrong password, got %v", err)
	}
}

func TestUnsupportedAuth(t *testing.T) {
	tests := map[string]v1alpha1.HTTPAuth{
		"http.auth.oauth2":     {OAuth2: v1alpha1.OAuth2Auth{ClientIDSecret: sel("a", "b")}},
		"http.auth.clientCert": {ClientCert: v1alpha1.ClientCertAuth{ClientCertSecret: sel("a", "b")}},
	}
	srv, n := server(t, "x", 200)
	for want, auth := range tests {
		a := httpArt(srv.URL)
		a.HTTP.Auth = &auth
		err := newDriver().Load(context.Background(), a, filepath.Join(t.TempDir(), "f"))
		if !errors.Is(err, artifact.ErrUnsupported) || !strings.Contains(err.Error(), want+" is not supported") {
			t.Errorf("%s: error = %v", want, err)
		}
	}
	if n.Load() != 0 {
		t.Errorf("a request was sent with unsupported auth")
	}
}

func TestCredentialsStayOutOfErrors(t *testing.T) {
	srv, _ := server(t, "", 404)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	for _, u := range []string{
		strings.Replace(srv.URL, "http://", "http://bob:hunter2@", 1) + "/x",
		"http://bob:hunter2@" + closed + "/x",
		"http://bob:hunter2@127.0.0.1:bad/x",
	} {
		err := newDriver().Load(context.Background(), httpArt(u), filepath.Join(t.TempDir(), "f"))
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Load(%s) error = %v; want an error without the password", u, err)
		}
	}
}

func TestConnectionRefusedIsRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	d := New(nil, "ns", WithBackoff(artifact.Backoff{Attempts: 3, Initial: 20 * time.Millisecond}))
	err = d.Load(context.Background(), httpArt("http://"+addr+"/x"), filepath.Join(t.TempDir(), "f"))
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Fatalf("error = %v", err)
	}
	if waited := time.Since(start); waited < 60*time.Millisecond {
		t.Errorf("3 attempts took %v; want the 20 ms + 40 ms backoff", waited)
	}
}

func TestSave(t *testing.T) {
	var got atomic.Value
	var n atomic.Int32
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		data, _ := io.ReadAll(r.Body)
		if n.Add(1) == 1 {
			w.WriteHeader(500)
			return
		}
		got.Store(fmt.Sprintf("%s %s %d %s", r.Method, r.URL.Path, r.ContentLength, data))
		w.WriteHeader(201)
	}))
	defer srv.Close()
	src := filepath.Join(t.TempDir(), "out.tgz")
	if err := os.WriteFile(src, []byte("payload"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := newDriver()
	if err := d.Save(context.Background(), src, httpArt(srv.URL+"/up/out.tgz")); err != nil {
		t.Fatal(err)
	}
	if want := "PUT /up/out.tgz 7 payload"; got.Load() != want {
		t.Errorf("server got %q, want %q", got.Load(), want)
	}
	if n.Load() != 2 {
		t.Errorf("attempts = %d, want 2", n.Load())
	}
	err := d.Save(context.Background(), filepath.Dir(src), httpArt(srv.URL))
	if err == nil || !strings.Contains(err.Error(), "an HTTP location holds one file") {
		t.Errorf("Save(directory) error = %v", err)
	}
	if err := d.Delete(context.Background(), httpArt(srv.URL)); !errors.Is(err, artifact.ErrUnsupported) {
		t.Errorf("Delete error = %v, want ErrUnsupported", err)
	}
}
