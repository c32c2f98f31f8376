package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// SSOPrefix marks an SSO session token in an Authorization value.
const SSOPrefix = "Bearer v2:"

// Config configures a Gatekeeper.
type Config struct {
	// Modes are the auth modes on (Argo's repeatable --auth-mode).
	Modes []Mode
	// Client verifies "Bearer"/"Basic" credentials; required with
	// ModeClient.
	Client Verifier
	// SSO verifies "Bearer v2:" session tokens; required with ModeSSO.
	SSO Verifier
	// Authorizer decides for client and SSO identities; nil:
	// GrantAuthorizer. Server-mode identities may do everything.
	Authorizer Authorizer
	// Audit receives one record per state-changing call, allowed or not,
	// and per refused call; nil discards them.
	Audit *slog.Logger
	// TokenHint says where a caller with no credential finds one; "":
	// braid's local token.
	TokenHint string
}

// Gatekeeper is braid's one authenticator and authorizer: every gRPC call
// (interceptors) and every HTTP request (Middleware) passes it before a
// handler runs.
type Gatekeeper struct {
	modes      map[Mode]bool
	client     Verifier
	sso        Verifier
	authorizer Authorizer
	audit      *slog.Logger
	tokenHint  string
}

// ParseModes reads --auth-mode values (each may also be a comma list).
func ParseModes(values []string) ([]Mode, error) {
	var out []Mode
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			m := Mode(strings.TrimSpace(s))
			switch m {
			case ModeServer, ModeClient, ModeSSO:
				if !slices.Contains(out, m) {
					out = append(out, m)
				}
			default:
				return nil, fmt.Errorf("--auth-mode: unknown mode %q (want server, client or sso)", s)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--auth-mode: give at least one of server, client, sso")
	}
	return out, nil
}

// NewGatekeeper checks c and builds a Gatekeeper.
func NewGatekeeper(c Config) (*Gatekeeper, error) {
	if len(c.Modes) == 0 {
		return nil, errors.New("auth: no auth mode")
	}
	g := &Gatekeeper{modes: map[Mode]bool{}, client: c.Client, sso: c.SSO, authorizer: c.Authorizer, audit: c.Audit, tokenHint: c.TokenHint}
	if g.tokenHint == "" {
		g.tokenHint = "braid auth token prints the local one"
	}
	for _, m := range c.Modes {
		g.modes[m] = true
	}
	if g.modes[ModeClient] && c.Client == nil {
		return nil, errors.New("auth: client mode needs a token verifier")
	}
	if g.modes[ModeSSO] && c.SSO == nil {
		return nil, errors.New("auth: sso mode needs the sso configuration")
	}
	if g.authorizer == nil {
		g.authorizer = GrantAuthorizer{}
	}
	if g.audit == nil {
		g.audit = slog.New(slog.DiscardHandler)
	}
	return g, nil
}

// ServerOnly is a Gatekeeper in server mode alone: every request has the
// server's rights (braid's in-process direct mode, and tests).
func ServerOnly() *Gatekeeper {
	g, _ := NewGatekeeper(Config{Modes: []Mode{ModeServer}})
	return g
}

// Has says whether mode m is on.
func (g *Gatekeeper) Has(m Mode) bool { return g.modes[m] }

// serverIdentity is the identity of a server-mode request.
func serverIdentity() *Identity {
	return &Identity{Mode: ModeServer, Grant: FullGrant()}
}

// Authenticate finds who sent authorization (the Authorization header or
// cookie value, "" when there was none), as Argo classifies it: "Bearer
// v2:" is SSO, "Bearer " or "Basic " is client, anything else falls to
// server mode when it is on.
func (g *Gatekeeper) Authenticate(ctx context.Context, authorization string) (*Identity, error) {
	switch {
	case g.modes[ModeSSO] && strings.HasPrefix(authorization, SSOPrefix):
		return g.sso.Verify(ctx, authorization)
	case g.modes[ModeClient] && (strings.HasPrefix(authorization, "Bearer ") || strings.HasPrefix(authorization, "Basic ")):
		return g.client.Verify(ctx, authorization)
	case g.modes[ModeServer]:
		return serverIdentity(), nil
	case authorization == "":
		return nil, Unauthenticated(`no token: send "Authorization: Bearer <token>" (%s)`, g.tokenHint)
	default:
		return nil, Unauthenticated("this server does not accept that kind of credential (auth modes: %s)", g.modeList())
	}
}

func (g *Gatekeeper) modeList() string {
	var s []string
	for _, m := range []Mode{ModeServer, ModeClient, ModeSSO} {
		if g.modes[m] {
			s = append(s, string(m))
		}
	}
	return strings.Join(s, ", ")
}

// Authorize decides whether id may do a, and writes the audit record.
func (g *Gatekeeper) Authorize(ctx context.Context, id *Identity, a Attributes) error {
	var err error
	switch {
	case id == nil:
		err = Forbidden("", a)
	case id.Mode == ModeServer:
	default:
		err = g.authorizer.Authorize(ctx, id, a)
	}
	g.record(ctx, id, a, err)
	return err
}

// readOnly verbs are not audited when allowed.
func readOnly(verb string) bool {
	return verb == "" || verb == "get" || verb == "list" || verb == "watch"
}

func (g *Gatekeeper) record(ctx context.Context, id *Identity, a Attributes, err error) {
	if err == nil && readOnly(a.Verb) {
		return
	}
	subject, mode := "", ""
	if id != nil {
		subject, mode = id.Subject, string(id.Mode)
		if id.ServiceAccountName != "" && id.ServiceAccountName != subject {
			subject += " as " + id.ServiceAccountName
		}
	}
	attrs := []any{"subject", subject, "mode", mode, "verb", a.Verb, "resource", a.Resource,
		"namespace", a.Namespace, "name", a.Name, "allowed", err == nil}
	if err != nil {
		attrs = append(attrs, "reason", err.Error())
	}
	g.audit.InfoContext(ctx, "audit", attrs...)
}

type checkKey struct{}

// checker lets a handler authorize a deferred request.
type checker struct {
	g  *Gatekeeper
	id *Identity
}

// withChecker returns ctx carrying the identity and the gatekeeper.
func (g *Gatekeeper) withChecker(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(NewContext(ctx, id), checkKey{}, checker{g: g, id: id})
}

// Check authorizes a for the request ctx belongs to; handlers of Deferred
// methods call it once they know the namespace. Without a request
// identity it refuses (fail closed).
func Check(ctx context.Context, a Attributes) error {
	c, ok := ctx.Value(checkKey{}).(checker)
	if !ok {
		return Status(Forbidden("", a))
	}
	return Status(c.g.Authorize(ctx, c.id, a))
}
