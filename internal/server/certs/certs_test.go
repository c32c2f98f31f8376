package certs

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func leafOf(t *testing.T, certFile string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatalf("%s: no PEM", certFile)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestEnsureMakesThenKeeps(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	cf, kf, err := Ensure(dir, []string{"10.1.2.3", "braid.example", ""})
	if err != nil {
		t.Fatal(err)
	}
	if cf != filepath.Join(dir, CertName) || kf != filepath.Join(dir, KeyName) {
		t.Fatalf("files %s %s", cf, kf)
	}
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("dir mode %o, want 700", m)
	}
	for _, f := range []string{cf, kf} {
		if m := mode(t, f); m != 0o600 {
			t.Errorf("%s mode %o, want 600", f, m)
		}
	}
	leaf := leafOf(t, cf)
	for _, h := range []string{"localhost", "127.0.0.1", "::1", "10.1.2.3", "braid.example"} {
		if err := leaf.VerifyHostname(h); err != nil {
			t.Errorf("certificate does not cover %s: %v", h, err)
		}
	}
	if len(leaf.IPAddresses) != 3 || len(leaf.DNSNames) != 2 {
		t.Errorf("SANs: IPs %v, names %v", leaf.IPAddresses, leaf.DNSNames)
	}
	if leaf.PublicKeyAlgorithm != x509.ECDSA {
		t.Errorf("key algorithm %v, want ECDSA", leaf.PublicKeyAlgorithm)
	}

	// A second call, with hosts already covered, keeps the pair.
	if _, _, err := Ensure(dir, []string{"127.0.0.1", "[::1]"}); err != nil {
		t.Fatal(err)
	}
	if again := leafOf(t, cf); !again.Equal(leaf) {
		t.Error("Ensure remade a usable certificate")
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestEnsureRemakes(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(t *testing.T, dir string)
		hosts []string
	}{
		{"missing key", func(t *testing.T, dir string) { rm(t, filepath.Join(dir, KeyName)) }, nil},
		{"missing cert", func(t *testing.T, dir string) { rm(t, filepath.Join(dir, CertName)) }, nil},
		{"garbage cert", func(t *testing.T, dir string) { write(t, filepath.Join(dir, CertName), "junk") }, nil},
		{"key of another pair", func(t *testing.T, dir string) {
			_, key, err := generate([]string{"localhost"}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, KeyName), string(key))
		}, nil},
		{"expiring within a day", func(t *testing.T, dir string) {
			cert, key, err := generate([]string{"localhost", "127.0.0.1", "::1"}, time.Now().Add(12*time.Hour-validity))
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, CertName), string(cert))
			write(t, filepath.Join(dir, KeyName), string(key))
		}, nil},
		{"new host", func(*testing.T, string) {}, []string{"192.168.7.7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cf, _, err := Ensure(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			first := leafOf(t, cf)
			tt.spoil(t, dir)
			cf, kf, err := Ensure(dir, tt.hosts)
			if err != nil {
				t.Fatal(err)
			}
			if leafOf(t, cf).Equal(first) {
				t.Fatal("certificate was not remade")
			}
			if _, _, err := Load(cf, kf); err != nil {
				t.Fatalf("remade pair does not load: %v", err)
			}
			for _, h := range tt.hosts {
				if err := leafOf(t, cf).VerifyHostname(h); err != nil {
					t.Errorf("remade certificate does not cover %s", h)
				}
			}
		})
	}
}

func rm(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	cf, kf, err := Ensure(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, fp, err := Load(cf, kf)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion != tls.VersionTLS12 || strings.Join(cfg.NextProtos, ",") != "h2,http/1.1" {
		t.Errorf("config: min %x, protos %v", cfg.MinVersion, cfg.NextProtos)
	}
	if want := Fingerprint(leafOf(t, cf).Raw); fp != want || len(fp) != 64 || strings.ToLower(fp) != fp {
		t.Errorf("fingerprint %q, want %q", fp, want)
	}

	// A TLS handshake with the config presents that certificate.
	l, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	c, err := tls.Dial("tcp", l.Addr().String(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // checked by fingerprint below
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := Fingerprint(c.ConnectionState().PeerCertificates[0].Raw); got != fp {
		t.Errorf("served fingerprint %s, want %s", got, fp)
	}
	roots := x509.NewCertPool()
	roots.AddCert(leafOf(t, cf))
	if _, err := leafOf(t, cf).Verify(x509.VerifyOptions{Roots: roots, DNSName: "localhost"}); err != nil {
		t.Errorf("the certificate cannot be trusted as its own root: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	cf, kf, err := Ensure(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	_, otherKey, err := Ensure(other, nil)
	if err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk.pem")
	write(t, junk, "not pem")
	old, oldKey := filepath.Join(dir, "old.crt"), filepath.Join(dir, "old.key")
	c, k, err := generate([]string{"localhost"}, time.Now().Add(-2*validity))
	if err != nil {
		t.Fatal(err)
	}
	write(t, old, string(c))
	write(t, oldKey, string(k))
	missing := filepath.Join(dir, "missing.crt")
	tests := []struct {
		name, cert, key string
		want            []string
	}{
		{"missing cert", missing, kf, []string{"certificate " + missing, "no such file"}},
		{"missing key", cf, missing, []string{"key " + missing, "no such file"}},
		{"cert not PEM", junk, kf, []string{"certificate " + junk, "CERTIFICATE"}},
		{"key not PEM", cf, junk, []string{"key " + junk, "PRIVATE KEY"}},
		{"key and cert swapped", kf, cf, []string{"certificate " + kf}},
		{"key of another pair", cf, otherKey, []string{"key " + otherKey, "does not go with certificate " + cf}},
		{"expired", old, oldKey, []string{"certificate " + old, "expired"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Load(tt.cert, tt.key)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
