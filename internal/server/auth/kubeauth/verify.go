package kubeauth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/server/auth"
)

// Issuer is the Identity.Issuer of a Kubernetes credential.
const Issuer = "kubernetes"

// serviceAccountPrefix starts the user name of a ServiceAccount's token:
// system:serviceaccount:NAMESPACE:NAME.
const serviceAccountPrefix = "system:serviceaccount:"

// Verify implements auth.Verifier: it asks the apiserver who the
// credential belongs to with a SelfSubjectReview sent with that credential.
// A credential the apiserver refuses (401) is an error wrapping
// auth.ErrUnauthenticated; any other failure is an internal error. The
// answer is cached for IdentityTTL by the credential's SHA-256, so a revoked
// token is still accepted for up to 10 s (the default) in this mode.
func (k *Kube) Verify(ctx context.Context, authorization string) (*auth.Identity, error) {
	cred, err := parseCredential(authorization)
	if err != nil {
		return nil, err
	}
	h := cred.hash()
	if v, ok := k.identities.get(h); ok {
		return cloneIdentity(v.id), v.err
	}
	id, err := k.review(ctx, cred)
	switch {
	case err == nil:
		k.identities.put(h, verdict{id: id})
		return cloneIdentity(id), nil
	case errors.Is(err, auth.ErrUnauthenticated):
		// Cached too: a garbage token sent again costs no review.
		k.identities.put(h, verdict{err: err})
	}
	return nil, err
}

// review sends the SelfSubjectReview.
func (k *Kube) review(ctx context.Context, cred credential) (*auth.Identity, error) {
	rctx, cancel := context.WithTimeout(withCredential(ctx, cred), k.opts.Timeout)
	defer cancel()
	ssr, err := k.authn.SelfSubjectReviews().Create(rctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case apierrors.IsUnauthorized(err):
		return nil, auth.Unauthenticated("the Kubernetes API server refused it")
	case err != nil:
		return nil, fmt.Errorf("kubeauth: SelfSubjectReview: %w", err)
	}
	u := ssr.Status.UserInfo
	if u.Username == "" || u.Username == "system:anonymous" {
		return nil, auth.Unauthenticated("the Kubernetes API server knows no user for it")
	}
	return identityOf(u, cred), nil
}

// identityOf builds the caller's identity from the review's user info.
func identityOf(u authnv1.UserInfo, cred credential) *auth.Identity {
	id := &auth.Identity{
		Mode:       auth.ModeClient,
		Issuer:     Issuer,
		Subject:    u.Username,
		Groups:     slices.Clone(u.Groups),
		Credential: cred.value(),
	}
	if sa, ok := strings.CutPrefix(u.Username, serviceAccountPrefix); ok {
		if ns, name, ok := strings.Cut(sa, ":"); ok && ns != "" && name != "" && !strings.Contains(name, ":") {
			id.ServiceAccountNamespace, id.ServiceAccountName = ns, name
		}
	}
	return id
}

// cloneIdentity gives each request an identity of its own, so that a
// caller that changes it cannot change the cached one.
func cloneIdentity(id *auth.Identity) *auth.Identity {
	if id == nil {
		return nil
	}
	c := *id
	c.Groups = slices.Clone(id.Groups)
	if id.Grant != nil {
		g := *id.Grant
		c.Grant = &g
	}
	return &c
}
