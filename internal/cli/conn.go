package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/pkg/apiclient/client"
)

// Connection: the workflow commands talk to a braid (or argo) server over
// its API. The address comes from --argo-server, else ARGO_SERVER, else
// BRAID_SERVER, else the server.json that `braid server` writes in its data
// directory when that server answers; failing all of these the command
// runs "direct": an in-process server on the data directory's store (see
// direct.go), reached through the same client.
//
// TLS: as argo's CLI, TLS unless --secure=false or ARGO_SECURE=false. For the
// data directory's own server, server.json says whether it serves TLS and
// the fingerprint of its (usually self-signed) certificate, which is pinned
// unless -k (localTLS), so that no flag is needed.

// globalFlags are the root's persistent flags.
type globalFlags struct {
	argoServer         string
	secure             bool
	insecureSkipVerify bool
	http1              bool
	baseHref           string
	namespace          string
	token              string
	headers            []string
	dataDir            string
	configFile         string

	flags  *pflag.FlagSet // the root's persistent flags, to see what was set
	getenv func(string) string
}

func (g *globalFlags) register(fs *pflag.FlagSet) {
	g.flags = fs
	fs.StringVarP(&g.argoServer, "argo-server", "s", "", "API server host:port (env ARGO_SERVER, then BRAID_SERVER; default: the braid server of the data directory, else direct)")
	fs.BoolVarP(&g.secure, "secure", "e", true, "use TLS to talk to the server (env ARGO_SECURE: only \"false\" turns it off)")
	fs.BoolVarP(&g.insecureSkipVerify, "insecure-skip-verify", "k", false, "do not verify the server's certificate (env ARGO_INSECURE_SKIP_VERIFY)")
	fs.BoolVar(&g.http1, "argo-http1", false, "use the REST API (HTTP/1) instead of gRPC (env ARGO_HTTP1)")
	fs.StringVar(&g.baseHref, "argo-base-href", "", "path prefix of the server's API (env ARGO_BASE_HREF)")
	fs.StringVarP(&g.namespace, "namespace", "n", "default", "namespace (env ARGO_NAMESPACE)")
	fs.StringVar(&g.token, "token", "", "sent verbatim as the Authorization header, e.g. \"Bearer x\" (env ARGO_TOKEN)")
	fs.StringArrayVarP(&g.headers, "header", "H", nil, "extra HTTP header \"Key: value\" (HTTP/1 only, repeatable)")
	fs.StringVar(&g.dataDir, "data-dir", "", "data directory of direct mode and of the local server (default $BRAID_HOME or ~/.braid)")
	fs.StringVar(&g.configFile, "config", "", "config file of direct mode (default <data dir>/config.yaml)")
}

// str is a flag's value, else the first environment variable set.
func (g *globalFlags) str(flag, value string, env ...string) string {
	if g.flags != nil && g.flags.Changed(flag) {
		return value
	}
	for _, e := range env {
		if v := g.getenv(e); v != "" {
			return v
		}
	}
	return value
}

// boolean is a flag's value, else true when the variable is exactly "true".
func (g *globalFlags) boolean(flag string, value bool, env string) bool {
	if g.flags != nil && g.flags.Changed(flag) {
		return value
	}
	return value || g.getenv(env) == "true"
}

// isSecure is --secure when given, else ARGO_SECURE, which (as argo's)
// means true unless it is exactly "false".
func (g *globalFlags) isSecure() bool {
	if g.flags != nil && g.flags.Changed("secure") {
		return g.secure
	}
	return g.getenv("ARGO_SECURE") != "false"
}

// ns is the namespace the commands work in.
func (g *globalFlags) ns() string {
	return g.str("namespace", g.namespace, "ARGO_NAMESPACE")
}

// session is an open connection to a server.
type session struct {
	*client.Client
	namespace string
	// direct is set when the server is in-process: nothing runs workflows.
	direct  bool
	dataDir string
	address string
	closeFn func() error
}

func (s *session) Close() error { return s.closeFn() }

// clientOptions are the connection settings from flags and environment.
func (g *globalFlags) clientOptions(address string) (client.Options, error) {
	o := client.Options{
		Address:            address,
		Secure:             g.isSecure(),
		InsecureSkipVerify: g.boolean("insecure-skip-verify", g.insecureSkipVerify, "ARGO_INSECURE_SKIP_VERIFY"),
		HTTP1:              g.boolean("argo-http1", g.http1, "ARGO_HTTP1"),
		BaseHref:           g.str("argo-base-href", g.baseHref, "ARGO_BASE_HREF"),
		Token:              g.str("token", g.token, "ARGO_TOKEN"),
	}
	if len(g.headers) > 0 {
		o.Headers = http.Header{}
		for _, h := range g.headers {
			k, v, ok := strings.Cut(h, ":")
			if !ok {
				return o, fmt.Errorf("--header %q: want \"Key: value\"", h)
			}
			o.Headers.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return o, nil
}

// remoteAddress is the server named by flag or environment, or "".
func (g *globalFlags) remoteAddress() string {
	return g.str("argo-server", g.argoServer, "ARGO_SERVER", "BRAID_SERVER")
}

// loadConfig reads the config of the data directory.
func (g *globalFlags) loadConfig() (*config.Config, error) {
	return config.Load(config.Sources{DataDirFlag: g.dataDir, ConfigFlag: g.configFile, Getenv: g.getenv})
}

// connect opens a session: to the named server, else to the data
// directory's running server, else direct.
func (g *globalFlags) connect(ctx context.Context) (*session, error) {
	addr, cfg, err := g.serverAddress(ctx)
	if err != nil {
		return nil, err
	}
	if addr == "" {
		return g.openDirect(ctx, cfg)
	}
	return g.dial(addr)
}

// connectServer opens a session to a server, or returns nil when there is
// none to talk to (the commands that then work locally: lint, version).
func (g *globalFlags) connectServer(ctx context.Context) (*session, error) {
	addr, _, err := g.serverAddress(ctx)
	if err != nil || addr == "" {
		return nil, err
	}
	return g.dial(addr)
}

// serverAddress is the server named by flag or environment, else the data
// directory's running server, else "" with the data directory's config.
func (g *globalFlags) serverAddress(ctx context.Context) (string, *config.Config, error) {
	if addr := g.remoteAddress(); addr != "" {
		return addr, nil, nil
	}
	cfg, err := g.loadConfig()
	if err != nil {
		return "", nil, err
	}
	return localServer(ctx, cfg.DataDir), cfg, nil
}

func (g *globalFlags) dial(addr string) (*session, error) {
	o, err := g.clientOptions(addr)
	if err != nil {
		return nil, err
	}
	g.localTLS(&o)
	if cred := g.localCredential(addr); cred != "" {
		o.Token = cred
	}
	c, err := client.New(o)
	if err != nil {
		return nil, err
	}
	return &session{Client: c, namespace: g.ns(), address: addr, closeFn: c.Close}, nil
}

// localTLS applies what the data directory's server.json says of o.Address
// when it is that server: whether it serves TLS (unless the user chose
// --secure or ARGO_SECURE while naming the server), and the fingerprint of
// its certificate, which is pinned (unless -k), so that a self-signed
// `braid server` needs no flags.
func (g *globalFlags) localTLS(o *client.Options) {
	_, sf, ok := g.localServerFor(o.Address)
	if !ok {
		return
	}
	chosen := g.flags != nil && g.flags.Changed("secure") || g.getenv("ARGO_SECURE") != ""
	if g.remoteAddress() == "" || !chosen {
		o.Secure = sf.Secure
	}
	if o.Secure && sf.Secure && !o.InsecureSkipVerify && o.CertFingerprint == "" {
		o.CertFingerprint = sf.Fingerprint
	}
}

// localServer is the address in dataDir/server.json when a server answers
// there (over TLS with the recorded certificate pinned, when the file says
// it serves TLS), else "".
func localServer(ctx context.Context, dataDir string) string {
	sf, err := config.ReadServerInfo(config.ServerFile(dataDir))
	if err != nil || sf.Address == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	scheme, tr := "http", &http.Transport{DialContext: (&net.Dialer{}).DialContext}
	if sf.Secure {
		tc, err := client.TLSConfig(client.Options{CertFingerprint: sf.Fingerprint})
		if err != nil {
			return ""
		}
		scheme, tr.TLSClientConfig = "https", tc
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+sf.Address+"/healthz", nil)
	if err != nil {
		return ""
	}
	hc := &http.Client{Transport: tr}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil {
		return ""
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	return sf.Address
}

// withSession runs fn with an open session and closes it after.
func (g *globalFlags) withSession(cmd *cobra.Command, fn func(ctx context.Context, s *session) error) error {
	ctx := cmd.Context()
	sess, err := g.connect(ctx)
	if err != nil {
		return err
	}
	err = fn(ctx, sess)
	if cerr := sess.Close(); cerr != nil && err == nil {
		var ee *exitError
		if !errors.As(err, &ee) {
			err = cerr
		}
	}
	return err
}
