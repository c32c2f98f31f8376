package sso

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// maxTokenBytes bounds a token Verify or the callback will try to open.
const maxTokenBytes = 8 << 10

// maxCookieBytes is what a browser keeps of one cookie (name, value and
// attributes together are limited to 4096 bytes).
const maxCookieBytes = 3900

// session is the claims set a session token holds: the user's claims from
// the ID token (and userinfo), with exp and iat of the session itself.
type session struct {
	Issuer        string   `json:"iss"`
	Subject       string   `json:"sub"`
	Email         string   `json:"email,omitempty"`
	EmailVerified bool     `json:"email_verified,omitempty"`
	Name          string   `json:"name,omitempty"`
	Groups        []string `json:"groups,omitempty"`
	Expiry        int64    `json:"exp"`
	IssuedAt      int64    `json:"iat"`
	// Extra are the ID token's other claims, for RBAC rules.
	Extra map[string]any `json:"-"`
}

// standardClaims are the claims session sets itself, and the ID token's
// claims that mean nothing after the login.
var standardClaims = []string{"iss", "sub", "email", "email_verified", "name", "groups", "exp", "iat",
	"aud", "azp", "nonce", "at_hash", "c_hash", "auth_time", "nbf", "jti", "sid"}

// claims is the flat claims map of s: what the token holds and what an
// RBAC rule sees.
func (s *session) claims() map[string]any {
	m := make(map[string]any, len(s.Extra)+8)
	maps.Copy(m, s.Extra)
	for _, k := range standardClaims {
		delete(m, k)
	}
	groups := s.Groups
	if groups == nil {
		groups = []string{}
	}
	m["iss"], m["sub"], m["email"], m["email_verified"] = s.Issuer, s.Subject, s.Email, s.EmailVerified
	m["name"], m["groups"], m["exp"], m["iat"] = s.Name, groups, s.Expiry, s.IssuedAt
	return m
}

func (s *session) expired(now time.Time) bool { return now.Unix() >= s.Expiry }

// parseSession reads a claims set written by (*session).claims.
func parseSession(payload []byte) (*session, map[string]any, error) {
	var s session
	if err := json.Unmarshal(payload, &s); err != nil {
		return nil, nil, err
	}
	var all map[string]any
	if err := json.Unmarshal(payload, &all); err != nil {
		return nil, nil, err
	}
	if s.Issuer == "" || s.Subject == "" || s.Expiry == 0 {
		return nil, nil, errors.New("the claims set lacks iss, sub or exp")
	}
	// JSON numbers decode as float64; the rule sees exp and iat as integers.
	all["exp"], all["iat"] = s.Expiry, s.IssuedAt
	if all["groups"] == nil {
		all["groups"] = []any{}
	}
	s.Extra = all
	return &s, all, nil
}

// seal encrypts payload with key as a compact JWE (dir, A256GCM).
func seal(key, payload []byte, typ string) (string, error) {
	opts := (&jose.EncrypterOptions{}).WithType(jose.ContentType(typ))
	enc, err := jose.NewEncrypter(jose.A256GCM, jose.Recipient{Algorithm: jose.DIRECT, Key: key}, opts)
	if err != nil {
		return "", fmt.Errorf("sso: encrypter: %w", err)
	}
	obj, err := enc.Encrypt(payload)
	if err != nil {
		return "", fmt.Errorf("sso: encrypt: %w", err)
	}
	return obj.CompactSerialize()
}

// open decrypts a token made by seal with the same key and type.
func open(key []byte, token, typ string) ([]byte, error) {
	if len(token) > maxTokenBytes {
		return nil, fmt.Errorf("token is longer than %d bytes", maxTokenBytes)
	}
	obj, err := jose.ParseEncryptedCompact(token, []jose.KeyAlgorithm{jose.DIRECT}, []jose.ContentEncryption{jose.A256GCM})
	if err != nil {
		return nil, errors.New("token is not a JWE")
	}
	if got, _ := obj.Header.ExtraHeaders[jose.HeaderType].(string); got != typ {
		return nil, errors.New("token is of another type")
	}
	payload, err := obj.Decrypt(key)
	if err != nil {
		return nil, errors.New("token was not made by this server, or was changed")
	}
	return payload, nil
}
