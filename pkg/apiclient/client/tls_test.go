package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/pkg/apiclient/info"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	"github.com/braidwf/braid/pkg/wirecodec"
)

type versionServer struct {
	info.UnimplementedInfoServiceServer
}

func (versionServer) GetVersion(context.Context, *info.GetVersionRequest) (*v1alpha1.Version, error) {
	return &v1alpha1.Version{Version: "v9.9.9"}, nil
}

// tlsServer serves InfoService over gRPC and GET /api/v1/version over REST
// on one TLS port (HTTP/2 and HTTP/1.1), and returns the server and its
// certificate's fingerprint. The gRPC server speaks Argo's wire format
// (wirecodec) and nothing in this test binary registers it globally: the
// client must set it itself.
func tlsServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	gs := grpc.NewServer(grpc.ForceServerCodecV2(wirecodec.CodecV2{}))
	info.RegisterInfoServiceServer(gs, versionServer{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			gs.ServeHTTP(w, r)
			return
		}
		if r.URL.Path != "/api/v1/version" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"version":"v9.9.9"}`))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(srv.Certificate().Raw)
	return srv, hex.EncodeToString(sum[:])
}

func TestCertFingerprint(t *testing.T) {
	srv, fp := tlsServer(t)
	addr := strings.TrimPrefix(srv.URL, "https://")
	wrong := strings.Repeat("ab", 32)
	upper := strings.ToUpper(fp[:2]) + ":" + fp[2:] // case and colons do not matter
	for _, http1 := range []bool{false, true} {
		name := map[bool]string{false: "grpc", true: "http1"}[http1]
		for _, tt := range []struct {
			name, fp string
			ok       bool
		}{{"right", fp, true}, {"right, written otherwise", upper, true}, {"wrong", wrong, false}} {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				c, err := New(Options{Address: addr, Secure: true, HTTP1: http1, CertFingerprint: tt.fp})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				v, err := c.Info.GetVersion(context.Background(), &info.GetVersionRequest{})
				if tt.ok {
					if err != nil || v.Version != "v9.9.9" {
						t.Fatalf("version %v, err %v", v, err)
					}
					return
				}
				if err == nil {
					t.Fatal("a server with another certificate was accepted")
				}
				t.Logf("error: %v", err)
				if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "not the pinned "+wrong) ||
					!strings.Contains(err.Error(), fp) {
					t.Fatalf("error does not say what is wrong: %v", err)
				}
			})
		}
	}
}

// Without a pin or a CA the self-signed certificate is refused; with its
// own certificate as CACertFile it is accepted.
func TestCACertFile(t *testing.T) {
	srv, _ := tlsServer(t)
	addr := strings.TrimPrefix(srv.URL, "https://")
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, http1 := range []bool{false, true} {
		c, err := New(Options{Address: addr, Secure: true, HTTP1: http1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Info.GetVersion(context.Background(), &info.GetVersionRequest{}); err == nil {
			t.Errorf("http1=%v: an unknown self-signed certificate was accepted", http1)
		}
		c.Close()
		c, err = New(Options{Address: addr, Secure: true, HTTP1: http1, CACertFile: ca})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Info.GetVersion(context.Background(), &info.GetVersionRequest{}); err != nil {
			t.Errorf("http1=%v: with the CA file: %v", http1, err)
		}
		c.Close()
	}
}

func TestTLSOptionErrors(t *testing.T) {
	for _, o := range []Options{
		{Address: "x:1", Secure: true, CertFingerprint: "abc"},
		{Address: "x:1", Secure: true, CertFingerprint: strings.Repeat("zz", 32)},
		{Address: "x:1", Secure: true, CACertFile: filepath.Join(t.TempDir(), "missing.pem")},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}
