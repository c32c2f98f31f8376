package sso

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/braidwf/braid/internal/server/auth"
)

// Prefix starts the authorization value of an SSO session.
const Prefix = "Bearer v2:"

// Verify checks an SSO session ("Bearer v2:<token>") and returns the
// user's identity. With sso.rbac.enabled the identity has the rights of
// the RBAC rule that matches the user, or Verify fails with an error
// wrapping auth.ErrForbidden when none does; otherwise it has every right.
func (s *SSO) Verify(_ context.Context, authorization string) (*auth.Identity, error) {
	token, ok := strings.CutPrefix(authorization, Prefix)
	if !ok {
		return nil, auth.Unauthenticated("not an SSO session (want %q)", Prefix+"...")
	}
	payload, err := open(s.keys.session, token, sessionType)
	if err != nil {
		return nil, auth.Unauthenticated("SSO session is not valid: %v; log in again", err)
	}
	sess, claims, err := parseSession(payload)
	if err != nil {
		return nil, auth.Unauthenticated("SSO session is not valid: %v; log in again", err)
	}
	if sess.expired(s.now()) {
		return nil, auth.Unauthenticated("SSO session has expired")
	}
	if !slices.Contains(s.issuers, sess.Issuer) {
		return nil, auth.Unauthenticated("SSO session was issued by %q, not by this server's provider; log in again", sess.Issuer)
	}
	id := &auth.Identity{Mode: auth.ModeSSO, Issuer: sess.Issuer, Subject: sess.Subject, Email: sess.Email,
		EmailVerified: sess.EmailVerified, Name: sess.Name, Groups: sess.Groups}
	if !s.cfg.RBACEnabled() {
		id.Grant = auth.FullGrant()
		return id, nil
	}
	var rules []auth.RBACRule
	if s.opts.Rules != nil {
		rules = s.opts.Rules()
	}
	rule, ok := s.rules.match(rules, claims)
	if !ok {
		return nil, fmt.Errorf("%w: no RBAC rule matched the SSO user %q (groups %q)", auth.ErrForbidden, sess.Subject, sess.Groups)
	}
	id.Grant = rule.Grant
	id.ServiceAccountName = rule.Name
	id.ServiceAccountNamespace = rule.Namespace
	return id, nil
}
