package auth

import "context"

// Verifier checks one kind of credential: the whole Authorization value
// ("Bearer ...", "Basic ...", "Bearer v2:..."). It returns the caller's
// identity, or an error wrapping ErrUnauthenticated.
type Verifier interface {
	Verify(ctx context.Context, authorization string) (*Identity, error)
}

// Attributes describe what a request does, for an Authorizer.
type Attributes struct {
	// Verb: get, list, watch, create, update, delete, or a workflow action
	// (retry, resubmit, resume, suspend, stop, terminate, set).
	Verb string
	// Resource is the plural kind: workflows, workflowtemplates,
	// clusterworkflowtemplates, cronworkflows, workfloweventbindings,
	// archivedworkflows, events, logs.
	Resource string
	// Namespace is the namespace touched; "" means every namespace.
	Namespace string
	// Cluster is set for a cluster-scoped kind.
	Cluster bool
	// Name is the object's name, when the request names one (for the
	// audit log; authorizers decide by namespace).
	Name string
}

// Authorizer decides whether an identity may do what a request does. It
// returns nil, or an error wrapping ErrForbidden (or ErrUnauthenticated,
// when the system it asks refuses the credential itself).
type Authorizer interface {
	Authorize(ctx context.Context, id *Identity, a Attributes) error
}

// GrantAuthorizer decides by the identity's Grant (embedded mode).
type GrantAuthorizer struct{}

// Authorize implements Authorizer.
func (GrantAuthorizer) Authorize(_ context.Context, id *Identity, a Attributes) error {
	if id != nil && id.Grant.Allows(a.Verb, a.Namespace, a.Cluster) {
		return nil
	}
	who := ""
	if id != nil {
		who = id.Subject
	}
	return Forbidden(who, a)
}

// RBACRule maps SSO users to an identity's rights, as Argo's
// workflows.argoproj.io/rbac-rule and rbac-rule-precedence annotations on a
// service account do: Rule is an expr expression over the user's claims
// (iss, sub, groups, email, ... and any custom claim); among the rules that
// are true, the one with the highest Precedence wins (ties: the first by
// Name). In embedded mode each named token may carry a rule, and its Grant
// is what the user gets.
type RBACRule struct {
	Name       string
	Rule       string
	Precedence int
	Grant      *Grant
	// Namespace of the service account (Kubernetes); "" for a token.
	Namespace string
}
