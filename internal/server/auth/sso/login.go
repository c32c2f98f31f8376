package sso

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/oauth2"
)

// maxUserInfoBytes bounds the userinfo response read for the groups.
const maxUserInfoBytes = 1 << 20

// login exchanges the code, verifies the ID token and builds the session;
// on failure it also says which HTTP status to answer with.
func (s *SSO) login(ctx context.Context, code string, st *loginState) (*session, int, error) {
	ctx = s.clientContext(ctx)
	var opts []oauth2.AuthCodeOption
	if st.Verifier != "" {
		opts = append(opts, oauth2.VerifierOption(st.Verifier))
	}
	tok, err := s.oauth.Exchange(ctx, code, opts...)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return nil, http.StatusUnauthorized, fmt.Errorf("the identity provider refused the login code: %s (HTTP %d)",
				quote(re.ErrorCode), re.Response.StatusCode)
		}
		return nil, http.StatusBadGateway, fmt.Errorf("cannot reach the identity provider's token endpoint: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, http.StatusUnauthorized, errNoIDToken
	}
	idt, err := s.verifier.Verify(ctx, raw)
	if err != nil {
		return nil, http.StatusUnauthorized, fmt.Errorf("the ID token is not valid: %s", quote(err.Error()))
	}
	if idt.Nonce != st.Nonce {
		return nil, http.StatusUnauthorized, errors.New("the ID token's nonce does not match this login: start again at /oauth2/redirect")
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return nil, http.StatusUnauthorized, fmt.Errorf("the ID token's claims are not JSON: %w", err)
	}
	sess := &session{Issuer: idt.Issuer, Subject: idt.Subject, Extra: claims,
		IssuedAt: s.now().Unix(), Expiry: s.now().Add(s.expiry).Unix()}
	sess.Email, _ = claims["email"].(string)
	sess.EmailVerified = claimBool(claims["email_verified"])
	sess.Name, _ = claims["name"].(string)
	groupsFrom := claims
	if s.cfg.UserInfoPath != "" {
		if groupsFrom, err = s.userInfo(ctx, tok.AccessToken); err != nil {
			return nil, http.StatusBadGateway, err
		}
	}
	sess.Groups = s.filterGroups(claimStrings(groupsFrom[s.groupClaim()]))
	return sess, http.StatusOK, nil
}

func (s *SSO) groupClaim() string {
	if s.cfg.CustomGroupClaimName != "" {
		return s.cfg.CustomGroupClaimName
	}
	return "groups"
}

// userInfo reads <issuer><userInfoPath> with the access token, as Argo
// does for providers that leave the groups out of the ID token.
func (s *SSO) userInfo(ctx context.Context, accessToken string) (map[string]any, error) {
	u := strings.TrimSuffix(s.cfg.Issuer, "/") + s.cfg.UserInfoPath
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("sso.userInfoPath: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+accessToken)
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot read the user's groups from the provider's userinfo: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the provider's userinfo (%s) answered HTTP %d", u, resp.StatusCode)
	}
	var m map[string]any
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxUserInfoBytes)).Decode(&m); err != nil {
		return nil, fmt.Errorf("the provider's userinfo (%s) is not a JSON object: %w", u, err)
	}
	return m, nil
}

// filterGroups keeps the groups that match a filterGroupsRegex (all of
// them when there is none).
func (s *SSO) filterGroups(groups []string) []string {
	if len(s.filters) == 0 {
		return groups
	}
	return slices.DeleteFunc(groups, func(g string) bool {
		return !slices.ContainsFunc(s.filters, func(re *regexp.Regexp) bool { return re.MatchString(g) })
	})
}

// claimStrings reads a claim that is a list of strings or one string.
func claimStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// claimBool reads a boolean claim, which some providers send as a string.
func claimBool(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v == "true"
	}
	return false
}

// randomText is 32 random bytes, base64url.
func randomText() (string, error) {
	b, err := randomBytes(32)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
