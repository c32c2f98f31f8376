package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/server"
	"github.com/braidwf/braid/internal/server/auth"
	"github.com/braidwf/braid/internal/server/auth/webhook"
	"github.com/braidwf/braid/internal/ui"
)

// loginCodeTTL is how long the login URL a server prints stays usable (once).
const loginCodeTTL = time.Hour

// authFlags are braid server's auth flags, as argo server's.
type authFlags struct {
	modes          []string
	allowedOrigins []string
	allowedHosts   []string
	// baseHref is the path the UI is served under as browsers see it
	// (behind a reverse proxy that strips it), as argo server's.
	baseHref string
}

func (a *authFlags) register(fl *pflag.FlagSet) {
	fl.StringArrayVar(&a.modes, "auth-mode", []string{string(auth.ModeClient)},
		"how callers authenticate: server, client or sso; repeatable (client and server together is Argo's hybrid)")
	fl.StringSliceVar(&a.allowedOrigins, "allowed-origins", nil,
		"origins (scheme://host[:port]) whose pages may call the API from a browser (CORS); none by default")
	fl.StringSliceVar(&a.allowedHosts, "allowed-hosts", nil,
		"host names clients may reach this server by, besides IP addresses and localhost (DNS rebinding guard); a leading '.' allows a suffix")
	fl.StringVar(&a.baseHref, "base-href", envOr("BASE_HREF", "/"),
		"the path the UI is served under, when a reverse proxy serves it under a subpath (env BASE_HREF)")
}

// envOr is the environment variable k, else def.
func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// serverAuth is what server.Options needs to authenticate and authorize.
type serverAuth struct {
	gk      *auth.Gatekeeper
	http    auth.HTTPConfig
	browser auth.BrowserConfig
	sso     http.Handler
	ui      http.Handler
	// baseHref is --base-href, checked and with its slashes.
	baseHref string
	// local is the local token's credential ("" when client mode is off).
	local  string
	logins *auth.LoginCodes
}

// apply sets the auth options of o.
func (a *serverAuth) apply(o *server.Options) {
	o.Auth, o.HTTPAuth, o.Browser, o.SSO, o.UI = a.gk, a.http, a.browser, a.sso, a.ui
	o.BaseHref = a.baseHref
}

// newUI is the web UI under the --base-href.
func (a authFlags) newUI() (http.Handler, string, error) {
	base, err := ui.NormalizeBaseHref(a.baseHref)
	if err != nil {
		return nil, "", &exitError{code: 2, err: err}
	}
	h, err := ui.New(base)
	if err != nil {
		return nil, "", err
	}
	return h, base, nil
}

// loginURL is a URL that logs a browser in once, or "" without client mode.
func (a *serverAuth) loginURL(base string) string {
	if a.local == "" || a.logins == nil {
		return ""
	}
	code, err := a.logins.Issue(a.local, loginCodeTTL)
	if err != nil {
		return ""
	}
	return base + "/?token=" + code
}

// embeddedAuth builds braid server's auth on one machine: named tokens in
// the data directory for client mode (the local token made on first
// start), the config's sso key for SSO, and the config's
// argo-workflows-webhook-clients secret for webhooks.
func (a authFlags) embeddedAuth(ctx context.Context, cfg *config.Config, log *slog.Logger, secure bool) (*serverAuth, error) {
	modes, err := auth.ParseModes(a.modes)
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	out := &serverAuth{
		browser: auth.BrowserConfig{AllowedHosts: a.allowedHosts, AllowedOrigins: a.allowedOrigins},
		http:    auth.HTTPConfig{SecureCookies: secure},
	}
	if out.ui, out.baseHref, err = a.newUI(); err != nil {
		return nil, err
	}
	c := auth.Config{Modes: modes, Audit: log.With("component", "audit")}
	tokens, err := auth.OpenTokens(cfg.DataDir, nil)
	if err != nil {
		return nil, err
	}
	if slices.Contains(modes, auth.ModeClient) {
		c.Client = tokens
		if out.local, err = tokens.EnsureLocal(); err != nil {
			return nil, fmt.Errorf("make the local token: %w", err)
		}
		out.logins = auth.NewLoginCodes(nil)
		out.http.Logins = out.logins
		hook, err := webhookAuth(cfg, tokens)
		if err != nil {
			return nil, &exitError{code: 2, err: err}
		}
		out.http.Webhook = hook
	}
	if slices.Contains(modes, auth.ModeSSO) {
		v, h, err := newSSO(ctx, cfg, tokens, log, secure, a.baseHref)
		if err != nil {
			return nil, &exitError{code: 2, err: err}
		}
		c.SSO, out.sso = v, h
	}
	if out.gk, err = auth.NewGatekeeper(c); err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	return out, nil
}

// webhookAuth authenticates webhook senders of the events endpoint by the
// clients of the config's argo-workflows-webhook-clients secret: each acts
// as the named token of its key. Nil when there are none.
func webhookAuth(cfg *config.Config, tokens *auth.Tokens) (func(*http.Request) (*auth.Identity, error), error) {
	data := cfg.Secrets[webhook.SecretName]
	if len(data) == 0 {
		return nil, nil
	}
	clients, err := webhook.ParseClients(data)
	if err != nil {
		return nil, fmt.Errorf("config secrets.%s: %w", webhook.SecretName, err)
	}
	return func(r *http.Request) (*auth.Identity, error) {
		if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/api/v1/events/") {
			return nil, nil
		}
		body, err := webhook.ReadBody(r)
		if errors.Is(err, webhook.ErrBodyTooLarge) {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "read the request body: %v", err)
		}
		name, ok := webhook.Match(clients, r.Header, body)
		if !ok {
			return nil, nil
		}
		return tokens.IdentityOf(name)
	}, nil
}
