package main

import (
	"encoding/json"
	"slices"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
)

// user is a mockoidc.User with a name claim: its subject is its login.
type user struct {
	login, password, email, name string
	groups                       []string
}

var _ mockoidc.User = (*user)(nil)

func (u *user) ID() string { return u.login }

// scoped are the user's claims that the scopes ask for, as a provider
// gives them.
func (u *user) scoped(scopes []string) map[string]any {
	m := map[string]any{"sub": u.login}
	if slices.Contains(scopes, "email") && u.email != "" {
		m["email"], m["email_verified"] = u.email, true
	}
	if slices.Contains(scopes, "profile") {
		m["name"], m["preferred_username"] = u.name, u.login
	}
	if slices.Contains(scopes, "groups") {
		m["groups"] = append([]string{}, u.groups...)
	}
	return m
}

func (u *user) Userinfo(scopes []string) ([]byte, error) { return json.Marshal(u.scoped(scopes)) }

func (u *user) Claims(scopes []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	return &claims{IDTokenClaims: base, extra: u.scoped(scopes)}, nil
}

// claims are mockoidc's base ID token claims plus the user's.
type claims struct {
	*mockoidc.IDTokenClaims
	extra map[string]any
}

func (c *claims) MarshalJSON() ([]byte, error) {
	base, err := json.Marshal(c.IDTokenClaims)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(base, &m); err != nil {
		return nil, err
	}
	for k, v := range c.extra {
		if _, set := m[k]; !set {
			m[k] = v
		}
	}
	return json.Marshal(m)
}
