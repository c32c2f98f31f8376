// Package sso is single sign-on with OpenID Connect, as argo-server's
// --auth-mode sso: it owns the login flow (/oauth2/redirect and
// /oauth2/callback), the session token a login ends with (the
// "Bearer v2:<token>" value of the authorization cookie) and its check
// (Verify, an auth.Verifier), including the RBAC rules that map an SSO user
// to a named token's rights.
//
// The session token is a JWE (dir + A256GCM) of the user's claims under a
// key only the server holds (Options.KeyFile): it is opaque to the browser
// and cannot be forged or changed, and it survives a restart of the server.
//
// It imports internal/config (for SSOConfig) and internal/server/auth (for
// Identity, Grant and RBACRule). It must not import internal/server, the
// store, the controller, the engine or the CLI: the server routes requests
// to it, the CLI builds it.
package sso
