package server

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/braidwf/braid/internal/server/certs"
	"github.com/braidwf/braid/pkg/apiclient/info"
)

// startTLSServer serves with a certificate made by certs.Ensure.
func startTLSServer(t *testing.T) string {
	t.Helper()
	cf, kf, err := certs.Ensure(filepath.Join(t.TempDir(), "tls"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := certs.Load(cf, kf)
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := startServerStore(t, Options{TLS: cfg})
	return addr
}

// TestTLS: gRPC and REST (over HTTP/1.1 and HTTP/2) share the TLS port, and
// HTTP responses carry HSTS.
func TestTLS(t *testing.T) {
	addr := startTLSServer(t)
	clientTLS := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // a test's self-signed certificate

	for _, proto := range []string{"http/1.1", "h2"} {
		t.Run("rest "+proto, func(t *testing.T) {
			tr := &http.Transport{TLSClientConfig: clientTLS.Clone(), ForceAttemptHTTP2: proto == "h2"}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr}
			for i := range 3 { // several requests on one connection
				reused := false
				trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { reused = ci.Reused }}
				req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
					http.MethodGet, "https://"+addr+"/api/v1/version", nil)
				res, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				if i > 0 && !reused {
					t.Errorf("request %d did not reuse the connection", i)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK || !strings.Contains(string(body), testVersion.Version) {
					t.Fatalf("status %d, body %s", res.StatusCode, body)
				}
				if res.TLS == nil || res.TLS.NegotiatedProtocol != proto && !(proto == "http/1.1" && res.TLS.NegotiatedProtocol == "") {
					t.Errorf("negotiated %+v, want %s", res.TLS, proto)
				}
				if got := res.Header.Get("Strict-Transport-Security"); got != "max-age=31536000" {
					t.Errorf("Strict-Transport-Security %q", got)
				}
			}
		})
	}

	t.Run("grpc", func(t *testing.T) {
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(clientTLS.Clone())), wireCodec)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		v, err := info.NewInfoServiceClient(cc).GetVersion(context.Background(), &info.GetVersionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if v.Version != testVersion.Version {
			t.Errorf("version %q", v.Version)
		}
	})

	t.Run("plain http is refused", func(t *testing.T) {
		res, err := http.Get("http://" + addr + "/api/v1/version")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				t.Fatal("plain HTTP served on a TLS port")
			}
		}
	})
}

// TestNoHSTSWithoutTLS: a plain server sends no Strict-Transport-Security.
func TestNoHSTSWithoutTLS(t *testing.T) {
	r := do(t, http.MethodGet, "http://"+startServer(t)+"/api/v1/version", "")
	if got := r.header.Get("Strict-Transport-Security"); got != "" {
		t.Errorf("Strict-Transport-Security %q on plain HTTP", got)
	}
}

// byteConn is a net.Conn whose reads return at most chunk bytes of data.
type byteConn struct {
	net.Conn
	data  []byte
	chunk int
}

func (c *byteConn) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.chunk)], c.data)
	c.data = c.data[n:]
	return n, nil
}

func h2Frame(typ, flags byte, payload string) string {
	n := len(payload)
	return string([]byte{byte(n >> 16), byte(n >> 8), byte(n), typ, flags, 0, 0, 0, 1}) + payload
}

func TestAckFilterConn(t *testing.T) {
	settings := h2Frame(h2TypeSettings, 0, "\x00\x03\x00\x00\x00\x64")
	ack := h2Frame(h2TypeSettings, h2FlagAck, "")
	headers := h2Frame(h2TypeHeaders, 0x4, "\x82\x86\x84")
	data := h2Frame(0x0, 0x1, strings.Repeat("d", 5000))
	tests := []struct{ name, in, want string }{
		{"http/1 passes", "GET / HTTP/1.0\r\n\r\n", "GET / HTTP/1.0\r\n\r\n"},
		{"short non-h2", "PRI", "PRI"},
		{"ack before headers", h2Preface + settings + ack + headers + ack + data,
			h2Preface + settings + headers + ack + data},
		{"ack after headers", h2Preface + settings + headers + data + ack + ack,
			h2Preface + settings + headers + data + ack},
		{"two client settings", h2Preface + settings + settings + headers + ack + ack + ack,
			h2Preface + settings + settings + headers + ack},
		{"an ack with a payload is not dropped", h2Preface + settings + headers + h2Frame(h2TypeSettings, h2FlagAck, "x") + ack,
			h2Preface + settings + headers + h2Frame(h2TypeSettings, h2FlagAck, "x")},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 7, 1 << 16} {
			c := &ackFilterConn{Conn: &byteConn{data: []byte(tt.in), chunk: chunk}}
			got, err := io.ReadAll(c)
			if err != nil {
				t.Fatalf("%s/%d: %v", tt.name, chunk, err)
			}
			if string(got) != tt.want {
				t.Errorf("%s/%d: got %q\nwant %q", tt.name, chunk, shorten(string(got)), shorten(tt.want))
			}
		}
	}
}

func shorten(s string) string { return strings.ReplaceAll(s, strings.Repeat("d", 5000), "d…") }

// errOnceConn returns its chunks in turn; a nil chunk is a timeout error.
type errOnceConn struct {
	net.Conn
	chunks [][]byte
}

type timeoutErr struct{}

func (timeoutErr) Error() string { return "i/o timeout" }
func (timeoutErr) Timeout() bool { return true }

func (c *errOnceConn) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	ch := c.chunks[0]
	c.chunks = c.chunks[1:]
	if ch == nil {
		return 0, timeoutErr{}
	}
	return copy(p, ch), nil
}

// A read error (net/http interrupts reads with a past deadline) is
// returned once, and reading goes on after it, before and after the filter
// is done.
func TestAckFilterConnErrorOnce(t *testing.T) {
	settings := h2Frame(h2TypeSettings, 0, "")
	ack := h2Frame(h2TypeSettings, h2FlagAck, "")
	headers := h2Frame(h2TypeHeaders, 0x4, "\x82")
	c := &ackFilterConn{Conn: &errOnceConn{chunks: [][]byte{
		[]byte(h2Preface + settings), nil, []byte(headers), nil, []byte(ack), nil, []byte(ack),
	}}}
	var got []byte
	errs := 0
	buf := make([]byte, 100)
	for {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			errs++
		}
	}
	if want := h2Preface + settings + headers + ack; string(got) != want || errs != 3 {
		t.Fatalf("got %q with %d errors, want %q with 3", got, errs, want)
	}
}
