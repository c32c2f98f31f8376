// Package kubeauth owns argo-server's `--auth-mode client` on a Kubernetes
// cluster: the bearer token a caller presents is a Kubernetes credential, and
// the kube-apiserver, not braid, says who it is and what it may do.
//
//	Verify(ctx, "Bearer <token>")   -> SelfSubjectReview       (authentication.k8s.io/v1, kube 1.28+)
//	Authorize(ctx, id, attributes)  -> SelfSubjectAccessReview (authorization.k8s.io/v1), one per check
//
// Both reviews are sent with the caller's credential in place of the
// server's: the server's rest.Config gives only the apiserver's address and
// CA (rest.AnonymousClientConfig drops its cert/key, token, exec plugin, auth
// provider and impersonation), and a round tripper puts the caller's
// "Bearer <token>" (or user name and password, for "Basic") on each review.
// A request that reaches the round tripper without a caller's credential is
// refused, so a review is never sent anonymously or as the server.
//
// Attributes map to Kubernetes resource attributes (group argoproj.io unless
// said otherwise) as argo-server's own calls with the caller's client would
// need them; see checks in authorize.go for the table. An identity of
// auth.ModeServer (argo-server's `--auth-mode server`) is allowed
// everything: it has the server's own rights.
//
// Results are cached for a short time, keyed by the SHA-256 of the
// credential: identities for IdentityTTL (10 s), decisions for DecisionTTL
// (5 s), each cache bounded (1,000 entries). A revoked token or a removed
// RoleBinding therefore takes effect up to 10 s (5 s) later in this mode.
//
// kubeauth imports internal/server/auth and client-go only. It must not
// import internal/server or internal/cli (which wires it in), the store,
// the controller, the engine or the runtime.
package kubeauth
