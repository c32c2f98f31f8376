// Package webhook owns argo-server's webhook clients: the senders that may
// call POST /api/v1/events/{namespace}/{discriminator} without a bearer
// token because they prove who they are with a signature over the body.
//
// The clients come from the Secret argo-workflows-webhook-clients. Each data
// key is a service-account name and each value is YAML:
//
//	type: github   # github | gitlab | bitbucket | bitbucketserver
//	secret: "shh!"
//
// ParseClients turns that data into a sorted []Client. For a request with no
// Authorization header the caller reads the body with ReadBody (bounded by
// MaxBodyBytes, and put back so the handler can read it again), then calls
// Match, which returns the name of the first client whose signature check
// passes; the request then acts as that service account.
//
// The checks, by type (every comparison is constant-time):
//   - github: X-GitHub-Event present and X-Hub-Signature-256 is
//     "sha256=" + hex HMAC-SHA256(secret, body); only when that header is
//     absent, the legacy X-Hub-Signature "sha1=" + hex HMAC-SHA1.
//   - gitlab: X-Gitlab-Event present and X-Gitlab-Token equals the secret.
//   - bitbucket (Cloud): X-Event-Key present and either X-Hub-Signature is
//     "sha256=" + hex HMAC-SHA256 (Bitbucket Cloud's webhook secret) or
//     X-Hook-UUID equals the secret (Argo's original scheme, where the
//     secret is the webhook's UUID).
//   - bitbucketserver: X-Event-Key present and X-Hub-Signature is
//     "sha256=" + hex HMAC-SHA256.
//
// The package is pure: it decides from bytes and headers and does no I/O
// beyond reading a request body. It must not import internal/server,
// internal/server/auth or any store; the caller loads the Secret and maps
// the matched name to an identity.
package webhook
