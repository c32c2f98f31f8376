package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	// CertName and KeyName are the file names Ensure uses in its directory.
	CertName = "tls.crt"
	KeyName  = "tls.key"

	// validity is how long a certificate made by Ensure is valid.
	validity = 365 * 24 * time.Hour
	// renewBefore: Ensure remakes a certificate that expires within this.
	renewBefore = 24 * time.Hour
)

// defaultHosts are in every certificate Ensure makes.
var defaultHosts = []string{"localhost", "127.0.0.1", "::1"}

// Ensure returns the certificate and key files under dir, making a new
// self-signed pair when there is none, when either file is missing or does
// not load, when the certificate expires within a day, or when it does not
// cover every host in hosts (IP addresses or DNS names; "localhost",
// 127.0.0.1 and ::1 are always covered). dir is created 0700 if missing.
func Ensure(dir string, hosts []string) (certFile, keyFile string, err error) {
	certFile, keyFile = filepath.Join(dir, CertName), filepath.Join(dir, KeyName)
	all := allHosts(hosts)
	if usable(certFile, keyFile, all, time.Now()) {
		return certFile, keyFile, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("certs: create %s: %w", dir, err)
	}
	certPEM, keyPEM, err := generate(all, time.Now())
	if err != nil {
		return "", "", fmt.Errorf("certs: %w", err)
	}
	// The key first: a crash between the two renames leaves a pair that does
	// not match, which the next Ensure remakes.
	if err := writeAtomic(keyFile, keyPEM); err != nil {
		return "", "", err
	}
	if err := writeAtomic(certFile, certPEM); err != nil {
		return "", "", err
	}
	return certFile, keyFile, nil
}

// allHosts is the default hosts plus hosts, without brackets, blanks or
// repeats.
func allHosts(hosts []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range append(append([]string(nil), defaultHosts...), hosts...) {
		h = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(h), "["), "]")
		if h == "" || seen[h] {
			continue
		}
		seen[h] = true
		out = append(out, h)
	}
	return out
}

// usable reports whether the pair loads, is valid for more than a day after
// now, and covers every host.
func usable(certFile, keyFile string, hosts []string, now time.Time) bool {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil || len(pair.Certificate) == 0 {
		return false
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil || now.Before(leaf.NotBefore) || now.Add(renewBefore).After(leaf.NotAfter) {
		return false
	}
	for _, h := range hosts {
		if leaf.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// generate makes a self-signed ECDSA P-256 server certificate for hosts and
// returns it and its key, PEM-encoded.
func generate(hosts []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, fmt.Errorf("generate serial number: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"braid"}, CommonName: "braid server"},
		NotBefore:             now.Add(-time.Hour), // tolerate a little clock skew
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("create certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encode key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

// writeAtomic writes data to path (mode 0600) through a temporary file in
// the same directory and a rename.
func writeAtomic(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("certs: write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
			err = fmt.Errorf("certs: write %s: %w", path, err)
		}
	}()
	if err = f.Chmod(0o600); err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// Load reads a PEM certificate (the leaf first, then any intermediates) and
// its PEM private key, and returns a server tls.Config for them (TLS 1.2 or
// later; ALPN h2 and http/1.1) with the leaf's fingerprint. Its errors name
// the file and what is wrong with it.
func Load(certFile, keyFile string) (*tls.Config, string, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, "", fmt.Errorf("certificate %s: %w", certFile, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, "", fmt.Errorf("key %s: %w", keyFile, err)
	}
	leaf, err := parseLeaf(certPEM)
	if err != nil {
		return nil, "", fmt.Errorf("certificate %s: %w", certFile, err)
	}
	if !hasPrivateKey(keyPEM) {
		return nil, "", fmt.Errorf("key %s: no PEM \"PRIVATE KEY\" block", keyFile)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, "", fmt.Errorf("key %s does not go with certificate %s: %w", keyFile, certFile, err)
	}
	if now := time.Now(); now.After(leaf.NotAfter) {
		return nil, "", fmt.Errorf("certificate %s expired at %s", certFile, leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	pair.Leaf = leaf
	cfg := &tls.Config{
		Certificates: []tls.Certificate{pair},
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"h2", "http/1.1"},
	}
	return cfg, Fingerprint(leaf.Raw), nil
}

// parseLeaf parses the first CERTIFICATE block of certPEM.
func parseLeaf(certPEM []byte) (*x509.Certificate, error) {
	for rest := certPEM; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, errors.New("no PEM \"CERTIFICATE\" block")
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		leaf, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("not a valid X.509 certificate: %w", err)
		}
		return leaf, nil
	}
}

// hasPrivateKey reports whether keyPEM holds a PEM private key block
// ("PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY").
func hasPrivateKey(keyPEM []byte) bool {
	for rest := keyPEM; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return false
		}
		if b.Type == "PRIVATE KEY" || strings.HasSuffix(b.Type, " PRIVATE KEY") {
			return true
		}
	}
}

// Fingerprint is the lowercase hex SHA-256 of a certificate's DER bytes.
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}
