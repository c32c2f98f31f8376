package kubeauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	authnv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authzv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"

	"github.com/braidwf/braid/internal/server/auth"
)

// The defaults of Options.
const (
	DefaultIdentityTTL = 10 * time.Second
	DefaultDecisionTTL = 5 * time.Second
	DefaultMaxEntries  = 1000
	DefaultTimeout     = 10 * time.Second
)

// Options tune a Kube. The zero value gives the defaults.
type Options struct {
	// IdentityTTL is how long a SelfSubjectReview's answer (or a 401) is
	// reused for the same credential; 0: DefaultIdentityTTL; <0: no cache.
	// A revoked token keeps working for up to this long.
	IdentityTTL time.Duration
	// DecisionTTL is how long a SelfSubjectAccessReview's answer is reused
	// for the same credential and attributes; 0: DefaultDecisionTTL; <0: no
	// cache. A removed RoleBinding keeps working for up to this long.
	DecisionTTL time.Duration
	// MaxEntries bounds each of the two caches; 0: DefaultMaxEntries.
	MaxEntries int
	// Timeout bounds one review sent to the apiserver; 0: DefaultTimeout.
	Timeout time.Duration
	// Now is the clock of the caches; nil: time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.IdentityTTL == 0 {
		o.IdentityTTL = DefaultIdentityTTL
	}
	if o.DecisionTTL == 0 {
		o.DecisionTTL = DefaultDecisionTTL
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Kube verifies Kubernetes credentials and authorizes their requests with
// the kube-apiserver. It implements auth.Verifier and auth.Authorizer.
type Kube struct {
	opts       Options
	authn      authnv1client.SelfSubjectReviewsGetter
	authz      authzv1client.SelfSubjectAccessReviewsGetter
	identities *ttlCache[credHash, verdict]
	decisions  *ttlCache[decisionKey, bool]
}

var (
	_ auth.Verifier   = (*Kube)(nil)
	_ auth.Authorizer = (*Kube)(nil)
)

// credHash is the SHA-256 of a credential: the caches never hold the
// credential itself.
type credHash [sha256.Size]byte

// verdict is a cached Verify result: an identity, or an error wrapping
// auth.ErrUnauthenticated (a credential the apiserver refused).
type verdict struct {
	id  *auth.Identity
	err error
}

// decisionKey is a cached Authorize result's key.
type decisionKey struct {
	cred credHash
	attr auth.Attributes
}

// New builds a Kube on cfg, the server's own rest config, of which it keeps
// only the apiserver's address, TLS trust, user agent and rate limits: every
// review carries the caller's credential instead of the server's.
func New(cfg *rest.Config, o Options) (*Kube, error) {
	if cfg == nil {
		return nil, errors.New("kubeauth: no Kubernetes rest config")
	}
	o = o.withDefaults()
	anon := rest.AnonymousClientConfig(cfg)
	// The reviews get a rate limiter of their own (from QPS and Burst), not
	// a share of the server's.
	anon.RateLimiter = nil
	// The transport (TLS, user agent) is shared by every caller, so that
	// reviews reuse the connections to the apiserver. It may be client-go's
	// cached one or http.DefaultTransport: it is wrapped, never changed.
	rt, err := rest.TransportFor(anon)
	if err != nil {
		return nil, fmt.Errorf("kubeauth: transport for %s: %w", anon.Host, err)
	}
	hc := &http.Client{Transport: &callerTransport{base: rt}, Timeout: anon.Timeout}
	authn, err := authnv1client.NewForConfigAndClient(anon, hc)
	if err != nil {
		return nil, fmt.Errorf("kubeauth: authentication client: %w", err)
	}
	authz, err := authzv1client.NewForConfigAndClient(anon, hc)
	if err != nil {
		return nil, fmt.Errorf("kubeauth: authorization client: %w", err)
	}
	return &Kube{
		opts: o, authn: authn, authz: authz,
		identities: newTTLCache[credHash, verdict](o.IdentityTTL, o.MaxEntries, o.Now),
		decisions:  newTTLCache[decisionKey, bool](o.DecisionTTL, o.MaxEntries, o.Now),
	}, nil
}

// credential is a caller's Kubernetes credential: a bearer token, or a
// user name and password (HTTP basic authentication).
type credential struct {
	token              string
	username, password string
	basic              bool
}

// parseCredential reads an Authorization value: "Bearer <token>" or
// "Basic <base64(user:password)>", the scheme in any case. A bare value is
// a bearer token (Identity.Credential holds a bearer token without its
// scheme).
func parseCredential(authorization string) (credential, error) {
	scheme, rest, found := strings.Cut(strings.TrimSpace(authorization), " ")
	if !found && !strings.EqualFold(scheme, "Bearer") && !strings.EqualFold(scheme, "Basic") {
		scheme, rest = "Bearer", scheme
	}
	rest = strings.TrimSpace(rest)
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		if rest == "" || strings.ContainsAny(rest, " \t\r\n") {
			return credential{}, auth.Unauthenticated("malformed bearer token")
		}
		return credential{token: rest}, nil
	case strings.EqualFold(scheme, "Basic"):
		raw, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return credential{}, auth.Unauthenticated("malformed basic credential: %v", err)
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		if !ok || user == "" {
			return credential{}, auth.Unauthenticated("malformed basic credential: want user:password")
		}
		return credential{username: user, password: pass, basic: true}, nil
	}
	return credential{}, auth.Unauthenticated("unsupported authorization scheme %q (want Bearer or Basic)", scheme)
}

// hash identifies the credential in the caches.
func (c credential) hash() credHash {
	if c.basic {
		return sha256.Sum256([]byte("basic\x00" + c.username + "\x00" + c.password))
	}
	return sha256.Sum256([]byte("bearer\x00" + c.token))
}

// value is what Identity.Credential holds: the bearer token, or the
// "Basic ..." value for a user name and password.
func (c credential) value() string {
	if c.basic {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(c.username+":"+c.password))
	}
	return c.token
}

type credentialKey struct{}

// withCredential returns ctx carrying c for callerTransport.
func withCredential(ctx context.Context, c credential) context.Context {
	return context.WithValue(ctx, credentialKey{}, c)
}

// callerTransport sends each request with the caller's credential from the
// request's context, and refuses a request without one.
type callerTransport struct{ base http.RoundTripper }

func (t *callerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c, ok := r.Context().Value(credentialKey{}).(credential)
	if !ok {
		return nil, errors.New("kubeauth: a review without the caller's credential (refusing to send it)")
	}
	r = r.Clone(r.Context())
	if c.basic {
		r.SetBasicAuth(c.username, c.password)
	} else {
		r.Header.Set("Authorization", "Bearer "+c.token)
	}
	return t.base.RoundTrip(r)
}
