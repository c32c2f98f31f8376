package cli

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/braidwf/braid/internal/server/certs"
)

// tlsFlags are argo server's TLS flags, on braid server: TLS by default,
// with the given certificate or else a self-signed one kept on disk.
type tlsFlags struct {
	secure    bool
	cert, key string
}

func (t *tlsFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&t.secure, "secure", true,
		"serve TLS (https, and gRPC over TLS); without --tls-cert and --tls-key the certificate is self-signed and kept in <data dir>/tls")
	fl.StringVar(&t.cert, "tls-cert", "", "PEM certificate (then any intermediates) to serve; needs --tls-key")
	fl.StringVar(&t.key, "tls-key", "", "PEM private key of --tls-cert")
}

// serverTLS is the server's TLS config and its certificate's fingerprint:
// nil with --secure=false; the --tls-cert/--tls-key pair when given; else
// the self-signed pair that certs.Ensure keeps in certDir() for the bind
// address. Mistakes in the flags or their files are usage errors (exit 2).
func (t tlsFlags) serverTLS(certDir func() (string, error), address string) (*tls.Config, string, error) {
	usage := func(format string, a ...any) (*tls.Config, string, error) {
		return nil, "", &exitError{code: 2, err: fmt.Errorf(format, a...)}
	}
	switch {
	case !t.secure && (t.cert != "" || t.key != ""):
		return usage("--tls-cert and --tls-key cannot go with --secure=false")
	case !t.secure:
		return nil, "", nil
	case t.cert != "" && t.key == "":
		return usage("--tls-cert needs --tls-key")
	case t.key != "" && t.cert == "":
		return usage("--tls-key needs --tls-cert")
	case t.cert != "":
		cfg, fp, err := certs.Load(t.cert, t.key)
		if err != nil {
			return usage("--tls-cert/--tls-key: %w", err)
		}
		return cfg, fp, nil
	}
	dir, err := certDir()
	if err != nil {
		return nil, "", err
	}
	cf, kf, err := certs.Ensure(dir, certHosts(address))
	if err != nil {
		return nil, "", fmt.Errorf("make the server's self-signed certificate (or give --tls-cert and --tls-key, or --secure=false): %w", err)
	}
	cfg, fp, err := certs.Load(cf, kf)
	if err != nil {
		return nil, "", fmt.Errorf("load the server's self-signed certificate: %w", err)
	}
	return cfg, fp, nil
}

// certHosts are the names the self-signed certificate covers beyond
// localhost, 127.0.0.1 and ::1: the bind address, unless it is every
// interface (0.0.0.0, ::, "").
func certHosts(address string) []string {
	if ip := net.ParseIP(address); address == "" || ip != nil && ip.IsUnspecified() {
		return nil
	}
	return []string{address}
}

// kubeCertDir is where braid server --backend kube keeps its self-signed
// certificate: <user cache dir>/braid/tls ($XDG_CACHE_HOME, else
// ~/.cache), else <--data-dir>/tls. The kube backend has no data directory
// of its own (its store is the cluster; in manifests/install.yaml
// --data-dir is a read-only ConfigMap and XDG_CACHE_HOME a writable
// emptyDir), and a temporary directory would give a new certificate, and
// so a new fingerprint to pin, on every start.
func kubeCertDir(dataDir string) (string, error) {
	cache, err := os.UserCacheDir()
	if err == nil {
		return filepath.Join(cache, "braid", "tls"), nil
	}
	if dataDir != "" {
		return filepath.Join(dataDir, "tls"), nil
	}
	return "", fmt.Errorf("find where to keep the server's self-signed certificate "+
		"(set XDG_CACHE_HOME or HOME, or give --data-dir, or --tls-cert and --tls-key, or --secure=false): %w", err)
}

// urlScheme is https when the server serves TLS, else http.
func urlScheme(c *tls.Config) string {
	if c != nil {
		return "https"
	}
	return "http"
}
