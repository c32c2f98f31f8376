package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/server/certs"
)

// globals parses args as the root's persistent flags with env.
func globals(t *testing.T, env map[string]string, args ...string) *globalFlags {
	t.Helper()
	g := &globalFlags{getenv: func(k string) string { return env[k] }}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	g.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return g
}

// ARGO_SECURE and --secure/-e: TLS unless turned off by exactly "false".
func TestSecureDefault(t *testing.T) {
	tests := []struct {
		env  string
		args []string
		want bool
	}{
		{"", nil, true},
		{"false", nil, false},
		{"true", nil, true},
		{"False", nil, true},
		{"no", nil, true},
		{"false", []string{"--secure"}, true},
		{"", []string{"-e=false"}, false},
		{"true", []string{"--secure=false"}, false},
	}
	for _, tt := range tests {
		g := globals(t, map[string]string{"ARGO_SECURE": tt.env}, tt.args...)
		o, err := g.clientOptions("a:1")
		if err != nil {
			t.Fatal(err)
		}
		if o.Secure != tt.want {
			t.Errorf("ARGO_SECURE=%q %v: secure %v, want %v", tt.env, tt.args, o.Secure, tt.want)
		}
	}
}

// The data directory's server.json decides TLS and the pinned fingerprint
// for its own address.
func TestLocalTLS(t *testing.T) {
	home := t.TempDir()
	info := config.ServerInfo{Address: "127.0.0.1:7", PID: 1, Secure: true, Fingerprint: strings.Repeat("ab", 32)}
	if err := config.WriteServerInfo(config.ServerFile(home), info); err != nil {
		t.Fatal(err)
	}
	plain := config.ServerInfo{Address: "127.0.0.1:7", PID: 1}
	tests := []struct {
		name   string
		file   config.ServerInfo
		env    map[string]string
		args   []string
		addr   string
		secure bool
		pin    bool
	}{
		{"found", info, nil, nil, info.Address, true, true},
		{"found, ARGO_SECURE=false is overruled", info, map[string]string{"ARGO_SECURE": "false"}, nil, info.Address, true, true},
		{"found, -k", info, nil, []string{"-k"}, info.Address, true, false},
		{"found plain", plain, nil, nil, plain.Address, false, false},
		{"found plain, --secure overruled", plain, nil, []string{"--secure"}, plain.Address, false, false},
		{"named, same address", info, map[string]string{"ARGO_SERVER": info.Address}, nil, info.Address, true, true},
		{"named plain, same address", plain, map[string]string{"ARGO_SERVER": plain.Address}, nil, plain.Address, false, false},
		{"named, user chose plain", info, map[string]string{"ARGO_SERVER": info.Address, "ARGO_SECURE": "false"}, nil, info.Address, false, false},
		{"named, another address", info, map[string]string{"ARGO_SERVER": "10.0.0.1:2746"}, nil, "10.0.0.1:2746", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := config.WriteServerInfo(config.ServerFile(home), tt.file); err != nil {
				t.Fatal(err)
			}
			g := globals(t, tt.env, append([]string{"--data-dir", home}, tt.args...)...)
			o, err := g.clientOptions(tt.addr)
			if err != nil {
				t.Fatal(err)
			}
			g.localTLS(&o)
			if o.Secure != tt.secure || (o.CertFingerprint == info.Fingerprint) != tt.pin {
				t.Errorf("secure %v, fingerprint %q; want secure %v, pinned %v", o.Secure, o.CertFingerprint, tt.secure, tt.pin)
			}
		})
	}
}

// localServer probes a TLS server with its recorded certificate pinned.
func TestLocalServerTLSProbe(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			_, _ = w.Write([]byte("ok\n"))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	sum := sha256.Sum256(srv.Certificate().Raw)
	addr := strings.TrimPrefix(srv.URL, "https://")
	home := t.TempDir()
	for _, tt := range []struct {
		name string
		info config.ServerInfo
		want string
	}{
		{"pinned", config.ServerInfo{Address: addr, Secure: true, Fingerprint: hex.EncodeToString(sum[:])}, addr},
		{"another certificate", config.ServerInfo{Address: addr, Secure: true, Fingerprint: strings.Repeat("0", 64)}, ""},
		{"recorded as plain", config.ServerInfo{Address: addr}, ""},
	} {
		if err := config.WriteServerInfo(config.ServerFile(home), tt.info); err != nil {
			t.Fatal(err)
		}
		if got := localServer(t.Context(), home); got != tt.want {
			t.Errorf("%s: localServer %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestServerTLSFlags(t *testing.T) {
	dir := t.TempDir()
	cf, kf, err := certs.Ensure(filepath.Join(dir, "given"), nil)
	if err != nil {
		t.Fatal(err)
	}
	selfDir := filepath.Join(dir, "data", "tls")
	certDir := func() (string, error) { return selfDir, nil }
	missing := filepath.Join(dir, "missing.pem")
	for _, tt := range []struct {
		name      string
		f         tlsFlags
		usage     string // wanted in the exit-2 error; "" for success
		plain     bool
		selfMade  bool
		wantCover string
	}{
		{"plain", tlsFlags{secure: false}, "", true, false, ""},
		{"self-signed", tlsFlags{secure: true}, "", false, true, "10.9.8.7"},
		{"given", tlsFlags{secure: true, cert: cf, key: kf}, "", false, false, ""},
		{"cert only", tlsFlags{secure: true, cert: cf}, "--tls-cert needs --tls-key", false, false, ""},
		{"key only", tlsFlags{secure: true, key: kf}, "--tls-key needs --tls-cert", false, false, ""},
		{"files with plain", tlsFlags{secure: false, cert: cf, key: kf}, "--secure=false", false, false, ""},
		{"missing cert", tlsFlags{secure: true, cert: missing, key: kf}, "--tls-cert/--tls-key: certificate " + missing, false, false, ""},
		{"swapped", tlsFlags{secure: true, cert: kf, key: cf}, "--tls-cert/--tls-key: certificate " + kf, false, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, fp, err := tt.f.serverTLS(certDir, "10.9.8.7")
			if tt.usage != "" {
				var ee *exitError
				if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), tt.usage) {
					t.Fatalf("error %v, want exit 2 with %q", err, tt.usage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (cfg == nil) != tt.plain || (fp == "") != tt.plain {
				t.Fatalf("config %v, fingerprint %q", cfg, fp)
			}
			if tt.selfMade {
				leaf := cfg.Certificates[0].Leaf
				if err := leaf.VerifyHostname(tt.wantCover); err != nil {
					t.Errorf("self-signed certificate does not cover the bind address: %v", err)
				}
				// The pair is kept: the next start pins the same fingerprint.
				_, again, err := tt.f.serverTLS(certDir, "10.9.8.7")
				if err != nil || again != fp {
					t.Errorf("second start: fingerprint %q (%v), want %q", again, err, fp)
				}
			}
		})
	}
}

func TestCertHosts(t *testing.T) {
	for in, want := range map[string]string{"": "", "0.0.0.0": "", "::": "", "127.0.0.1": "127.0.0.1", "192.168.1.2": "192.168.1.2", "myhost": "myhost"} {
		if got := strings.Join(certHosts(in), ","); got != want {
			t.Errorf("certHosts(%q) = %q, want %q", in, got, want)
		}
	}
}
