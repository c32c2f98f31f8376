// Package auth is braid's one trust boundary: who is calling, and may they
// do what they ask. Every gRPC call (UnaryInterceptor, StreamInterceptor)
// and every HTTP request (HTTP, then GatewayMiddleware for the REST
// gateway) passes a Gatekeeper before any handler runs.
//
//   - Authentication, as Argo classifies a credential (the Authorization
//     header, else the "authorization" cookie): "Bearer v2:..." is an SSO
//     session, "Bearer ..." or "Basic ..." is client mode, anything else
//     falls to server mode when it is on (--auth-mode, repeatable).
//   - Client mode on one machine: Tokens, the named tokens of the data
//     directory (tokens.json, 0600, holding only SHA-256 hashes) and the
//     local token (<data dir>/token, 0600) the braid CLI sends with no
//     flags. On Kubernetes the kubeauth subpackage asks the apiserver.
//   - Authorization: Rules maps every RPC to a verb, a resource and where
//     its namespace comes from; an RPC with no rule is refused. The
//     embedded authorizer checks the identity's Grant (verbs by
//     namespace, and the cluster scope); handlers of uid-addressed
//     archive calls and the artifact routes call Check once they know the
//     namespace.
//   - Browser: a Host allow-list against DNS rebinding, cross-origin
//     state changes refused (Go's CrossOriginProtection), JSON-only API
//     bodies, CORS only for --allowed-origins, and nosniff,
//     frame-ancestors 'none' and no-referrer on every response.
//   - Audit: every state-changing call, and every refusal, is logged with
//     subject, verb, resource, namespace and name.
//
// Subpackages: kubeauth (Kubernetes tokens), sso (OIDC), webhook (signed
// webhook senders of the events endpoint).
//
// It must not import internal/server, a store, the engine or a runtime.
package auth
