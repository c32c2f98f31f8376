package auth

import (
	"context"
	"slices"
)

// Identity is who made a request, as the authenticator found it.
type Identity struct {
	// Subject names the caller: a token's subject, an SSO user's "sub"
	// claim, a Kubernetes user name; "" in server mode.
	Subject string `json:"subject,omitempty"`
	// Issuer is the SSO provider's issuer URL, or "braid" for braid's own
	// tokens, or "kubernetes" for Kubernetes tokens.
	Issuer        string   `json:"issuer,omitempty"`
	Groups        []string `json:"groups,omitempty"`
	Email         string   `json:"email,omitempty"`
	EmailVerified bool     `json:"emailVerified,omitempty"`
	Name          string   `json:"name,omitempty"`
	// ServiceAccountName and ServiceAccountNamespace: the service account
	// (Kubernetes) or named token (embedded) whose rights the caller has.
	ServiceAccountName      string `json:"serviceAccountName,omitempty"`
	ServiceAccountNamespace string `json:"serviceAccountNamespace,omitempty"`
	// Mode is how the caller was authenticated.
	Mode Mode `json:"-"`
	// Grant is what the caller may do, for the embedded authorizer; nil
	// where another authorizer decides (Kubernetes).
	Grant *Grant `json:"-"`
	// Credential is the bearer token the caller presented, for an
	// authorizer that asks another system with it (Kubernetes). It is never
	// logged, stored or returned.
	Credential string `json:"-"`
}

// Mode is one of Argo's auth modes.
type Mode string

const (
	// ModeServer: every request has the server's own rights.
	ModeServer Mode = "server"
	// ModeClient: "Bearer <token>" or "Basic <...>", a braid token in
	// embedded mode or a Kubernetes token on a cluster.
	ModeClient Mode = "client"
	// ModeSSO: "Bearer v2:<token>", a session issued by /oauth2/callback.
	ModeSSO Mode = "sso"
)

// AllVerbs and AllNamespaces are the wildcards of a Grant.
const (
	AllVerbs      = "*"
	AllNamespaces = "*"
)

// Grant is what an embedded identity may do: its verbs, in its namespaces.
// AllNamespaces also covers cluster-scoped kinds and requests across every
// namespace; Cluster covers cluster-scoped kinds alone.
type Grant struct {
	Namespaces []string `json:"namespaces"`
	Verbs      []string `json:"verbs"`
	Cluster    bool     `json:"cluster,omitempty"`
}

// FullGrant may do everything.
func FullGrant() *Grant {
	return &Grant{Namespaces: []string{AllNamespaces}, Verbs: []string{AllVerbs}, Cluster: true}
}

// Allows says whether g covers verb on the scope: a namespace, "" for
// every namespace, and cluster for a cluster-scoped kind.
func (g *Grant) Allows(verb, namespace string, cluster bool) bool {
	if g == nil {
		return false
	}
	if !slices.Contains(g.Verbs, AllVerbs) && !slices.Contains(g.Verbs, verb) {
		return false
	}
	all := slices.Contains(g.Namespaces, AllNamespaces)
	switch {
	case cluster:
		return all || g.Cluster
	case namespace == "":
		return all
	default:
		return all || slices.Contains(g.Namespaces, namespace)
	}
}

type identityKey struct{}

// NewContext returns ctx carrying id.
func NewContext(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext is the identity of the request ctx belongs to, if any.
func FromContext(ctx context.Context) (*Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(*Identity)
	return id, ok && id != nil
}
