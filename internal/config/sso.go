package config

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// DefaultSessionExpiry is how long an SSO session lasts when sessionExpiry
// is not set, as Argo's.
const DefaultSessionExpiry = 10 * time.Hour

// SSOConfig is the sso key of the config: OpenID Connect single sign-on
// for `braid server --auth-mode sso`, with the keys and JSON names of
// Argo's workflow-controller-configmap sso section.
type SSOConfig struct {
	// Issuer is the provider's URL; discovery reads
	// <issuer>/.well-known/openid-configuration.
	Issuer string `json:"issuer"`
	// IssuerAlias is the issuer the provider names in its discovery
	// document and tokens, when it differs from Issuer (off-spec providers
	// such as Azure AD).
	IssuerAlias string `json:"issuerAlias,omitempty"`
	// ClientID and ClientSecret are secret references, resolved with
	// Config.Secret (the config's secrets, then the environment).
	ClientID     corev1.SecretKeySelector `json:"clientId"`
	ClientSecret corev1.SecretKeySelector `json:"clientSecret"`
	// RedirectURL is braid's own /oauth2/callback URL as the browser
	// reaches it, registered with the provider.
	RedirectURL string `json:"redirectUrl"`
	// Scopes are asked for besides openid, which is always asked for.
	Scopes []string `json:"scopes,omitempty"`
	// SessionExpiry is how long a session lasts: a Go duration such as
	// 10h or 240h; "" means DefaultSessionExpiry.
	SessionExpiry string `json:"sessionExpiry,omitempty"`
	// RBAC maps users to rights with RBAC rules; off, every SSO user has
	// the server's rights.
	RBAC *SSORBACConfig `json:"rbac,omitempty"`
	// CustomGroupClaimName names the claim that holds the groups ("" means
	// "groups").
	CustomGroupClaimName string `json:"customGroupClaimName,omitempty"`
	// UserInfoPath, when set, is a path under the issuer whose userinfo
	// response holds the groups, for providers that leave them out of the
	// ID token.
	UserInfoPath string `json:"userInfoPath,omitempty"`
	// InsecureSkipVerify skips the TLS check of the provider's certificate.
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
	// FilterGroupsRegex keeps only the groups that match one of these
	// regular expressions.
	FilterGroupsRegex []string `json:"filterGroupsRegex,omitempty"`
	// RootCA is PEM text of extra certificate authorities to trust for the
	// provider, besides the system's.
	RootCA string `json:"rootCA,omitempty"`
}

// SSORBACConfig is sso.rbac.
type SSORBACConfig struct {
	Enabled bool `json:"enabled,omitempty"`
	// SecretWhitelist is accepted for compatibility with Argo's configs;
	// braid does not use it.
	SecretWhitelist []string `json:"secretWhitelist,omitempty"`
}

// RBACEnabled says whether sso.rbac.enabled is set.
func (c *SSOConfig) RBACEnabled() bool { return c.RBAC != nil && c.RBAC.Enabled }

// Expiry is SessionExpiry as a duration: DefaultSessionExpiry when unset.
func (c *SSOConfig) Expiry() (time.Duration, error) {
	if c.SessionExpiry == "" {
		return DefaultSessionExpiry, nil
	}
	d, err := time.ParseDuration(c.SessionExpiry)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("sso.sessionExpiry: %q is not a positive duration such as 10h or 240h", c.SessionExpiry)
	}
	return d, nil
}

// Validate checks the sso key; each error names the key at fault.
func (c *SSOConfig) Validate() error {
	var errs []error
	if err := checkURL("sso.issuer", c.Issuer, true); err != nil {
		errs = append(errs, err)
	}
	if err := checkURL("sso.issuerAlias", c.IssuerAlias, false); err != nil {
		errs = append(errs, err)
	}
	if err := checkURL("sso.redirectUrl", c.RedirectURL, true); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, checkSelector("sso.clientId", c.ClientID), checkSelector("sso.clientSecret", c.ClientSecret))
	if _, err := c.Expiry(); err != nil {
		errs = append(errs, err)
	}
	for i, re := range c.FilterGroupsRegex {
		if _, err := regexp.Compile(re); err != nil {
			errs = append(errs, fmt.Errorf("sso.filterGroupsRegex[%d]: %w", i, err))
		}
	}
	if c.RootCA != "" {
		if _, err := c.CertPool(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// CertPool is the system's certificate pool plus RootCA.
func (c *SSOConfig) CertPool() (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if c.RootCA == "" {
		return pool, nil
	}
	rest := []byte(c.RootCA)
	n := 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("sso.rootCA: certificate %d: %w", n+1, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, errors.New("sso.rootCA: no PEM CERTIFICATE block found")
	}
	return pool, nil
}

func checkURL(key, s string, required bool) error {
	if s == "" {
		if required {
			return fmt.Errorf("%s: required", key)
		}
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s: %q is not an absolute http or https URL", key, s)
	}
	return nil
}

func checkSelector(key string, s corev1.SecretKeySelector) error {
	var errs []error
	if s.Name == "" {
		errs = append(errs, fmt.Errorf("%s.name: required (the secret that holds it)", key))
	}
	if s.Key == "" {
		errs = append(errs, fmt.Errorf("%s.key: required (the key in the secret)", key))
	}
	return errors.Join(errs...)
}
