package sso

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/server/auth"
)

// providerTimeout bounds each request to the provider.
const providerTimeout = 30 * time.Second

// Options are what New needs besides the sso config.
type Options struct {
	// Secret resolves clientId and clientSecret (Config.Secret with the
	// server's namespace). Required.
	Secret func(ctx context.Context, name, key string) (string, error)
	// KeyFile holds the secret that session tokens are encrypted with. It
	// is made (mode 0600) when it does not exist and reused after a
	// restart, so that sessions survive; "" keeps a secret in memory.
	KeyFile string
	// Rules are the RBAC rules, read at every request so that a change
	// applies at once; used when sso.rbac.enabled. nil: no rules.
	Rules func() []auth.RBACRule
	// Logger: nil discards.
	Logger *slog.Logger
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Secure sets the Secure flag of the cookies (the server serves TLS).
	Secure bool
	// BaseHref is the path the UI is served under ("" means "/"): where a
	// login ends when no redirect was asked for, and the cookies' path.
	BaseHref string
}

// SSO is the login flow and the session check. Build it with New.
type SSO struct {
	cfg      config.SSOConfig
	opts     Options
	log      *slog.Logger
	now      func() time.Time
	client   *http.Client
	oauth    oauth2.Config
	verifier *oidc.IDTokenVerifier
	pkce     bool
	issuers  []string
	keys     keys
	expiry   time.Duration
	filters  []*regexp.Regexp
	rules    *ruleCache
}

// Compile-time guard.
var _ auth.Verifier = (*SSO)(nil)

// New checks c, resolves the client's secrets, reads (or makes) the key
// file and discovers the provider. ctx bounds the discovery.
func New(ctx context.Context, c config.SSOConfig, o Options) (*SSO, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if o.Secret == nil {
		return nil, errors.New("sso: Options.Secret is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.BaseHref == "" {
		o.BaseHref = "/"
	}
	if !strings.HasSuffix(o.BaseHref, "/") {
		o.BaseHref += "/"
	}
	s := &SSO{cfg: c, opts: o, log: o.Logger, now: o.Now, rules: newRuleCache(o.Logger)}
	s.expiry, _ = c.Expiry() // Validate checked it
	for _, re := range c.FilterGroupsRegex {
		s.filters = append(s.filters, regexp.MustCompile(re)) // Validate compiled it
	}
	secret, err := loadKey(o.KeyFile, o.Logger)
	if err != nil {
		return nil, err
	}
	s.keys = deriveKeys(secret)
	if s.client, err = httpClient(c); err != nil {
		return nil, err
	}
	clientID, err := o.Secret(ctx, c.ClientID.Name, c.ClientID.Key)
	if err != nil {
		return nil, fmt.Errorf("sso.clientId: %w", err)
	}
	clientSecret, err := o.Secret(ctx, c.ClientSecret.Name, c.ClientSecret.Key)
	if err != nil {
		return nil, fmt.Errorf("sso.clientSecret: %w", err)
	}
	if err := s.discover(ctx, clientID, clientSecret); err != nil {
		return nil, err
	}
	return s, nil
}

// discover reads the provider's discovery document and sets up the OAuth2
// client and the ID token verifier.
func (s *SSO) discover(ctx context.Context, clientID, clientSecret string) error {
	c := s.cfg
	ctx = s.clientContext(ctx)
	s.issuers = []string{c.Issuer}
	if c.IssuerAlias != "" {
		ctx = oidc.InsecureIssuerURLContext(ctx, c.IssuerAlias)
		s.issuers = append(s.issuers, c.IssuerAlias)
	}
	dctx, cancel := context.WithTimeout(ctx, providerTimeout)
	defer cancel()
	provider, err := oidc.NewProvider(dctx, c.Issuer)
	if err != nil {
		return fmt.Errorf("sso.issuer: discover the OpenID Connect provider at %s: %w", c.Issuer, err)
	}
	var meta struct {
		CodeChallengeMethods []string `json:"code_challenge_methods_supported"`
	}
	_ = provider.Claims(&meta)
	s.pkce = slices.Contains(meta.CodeChallengeMethods, "S256")
	scopes := []string{oidc.ScopeOpenID}
	for _, sc := range c.Scopes {
		if sc != "" && !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	s.oauth = oauth2.Config{ClientID: clientID, ClientSecret: clientSecret, Endpoint: provider.Endpoint(),
		RedirectURL: c.RedirectURL, Scopes: scopes}
	s.verifier = provider.VerifierContext(ctx, &oidc.Config{ClientID: clientID, Now: s.now})
	return nil
}

// clientContext carries the HTTP client for the provider (go-oidc and
// oauth2 both read it from the context).
func (s *SSO) clientContext(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, s.client)
}

// httpClient is the client for the provider: the system's roots plus
// rootCA, or no check with insecureSkipVerify.
func httpClient(c config.SSOConfig) (*http.Client, error) {
	pool, err := c.CertPool()
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12,
		InsecureSkipVerify: c.InsecureSkipVerify} //nolint:gosec // the user asked for it (sso.insecureSkipVerify)
	return &http.Client{Transport: tr, Timeout: providerTimeout}, nil
}
