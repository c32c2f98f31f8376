package sso

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/server/auth"
)

func TestRBAC(t *testing.T) {
	p := newTestProvider(t, false)
	c := ssoConfig(p)
	c.RBAC = &config.SSORBACConfig{Enabled: true}
	var mu sync.Mutex
	var rules []auth.RBACRule
	set := func(r ...auth.RBACRule) { mu.Lock(); rules = r; mu.Unlock() }
	var logs bytes.Buffer
	s := newSSO(t, p, c, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Rules: func() []auth.RBACRule { mu.Lock(); defer mu.Unlock(); return rules }})
	tok := Prefix + sessionToken(t, s) // sub u-2, groups [dev], team blue
	g := func(ns string) *auth.Grant { return &auth.Grant{Namespaces: []string{ns}, Verbs: []string{"list"}} }

	if _, err := s.Verify(context.Background(), tok); !errors.Is(err, auth.ErrForbidden) ||
		!strings.Contains(err.Error(), "no RBAC rule matched") {
		t.Errorf("no rules: %v", err)
	}
	set(auth.RBACRule{Name: "admin", Rule: "'admin' in groups", Precedence: 10, Grant: auth.FullGrant()},
		auth.RBACRule{Name: "b-dev", Rule: "'dev' in groups", Precedence: 1, Grant: g("b")},
		auth.RBACRule{Name: "a-dev", Rule: "'dev' in groups && sub == 'u-2'", Precedence: 1, Grant: g("a"), Namespace: "argo"},
		auth.RBACRule{Name: "low", Rule: "true", Precedence: 0, Grant: g("low")},
		auth.RBACRule{Name: "broken", Rule: "groups ++", Precedence: 99},
		auth.RBACRule{Name: "notbool", Rule: "email", Precedence: 99},
		auth.RBACRule{Name: "missing", Rule: "nosuchclaim.x == 1", Precedence: 99},
	)
	id, err := s.Verify(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if id.ServiceAccountName != "a-dev" || id.ServiceAccountNamespace != "argo" || !id.Grant.Allows("list", "a", false) ||
		id.Grant.Allows("list", "b", false) {
		t.Errorf("ties by name: %+v %+v", id, id.Grant)
	}
	for _, want := range []string{"does not compile", "does not give true or false"} {
		if strings.Count(logs.String(), want) != 1 {
			t.Errorf("log %q once:\n%s", want, &logs)
		}
	}
	if _, err := s.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	if strings.Count(logs.String(), "does not give true or false") != 1 {
		t.Errorf("logged twice:\n%s", &logs)
	}
	// A change of the rules applies to the next request.
	set(auth.RBACRule{Name: "team", Rule: "team == 'blue' && email_verified == false && exp > iat", Precedence: 5, Grant: g("blue")})
	if id, err := s.Verify(context.Background(), tok); err != nil || id.ServiceAccountName != "team" {
		t.Errorf("custom claim: %+v %v", id, err)
	}
	set(auth.RBACRule{Name: "team", Rule: "team == 'red'", Grant: g("red")})
	if _, err := s.Verify(context.Background(), tok); !errors.Is(err, auth.ErrForbidden) {
		t.Errorf("no longer matching: %v", err)
	}
}

func TestRBACFromLogin(t *testing.T) {
	p := newTestProvider(t, false)
	p.user["department"] = "research"
	c := ssoConfig(p)
	c.RBAC = &config.SSORBACConfig{Enabled: true}
	s := newSSO(t, p, c, Options{Rules: func() []auth.RBACRule {
		return []auth.RBACRule{{Name: "research", Rule: "department == 'research' && 'ops' in groups && iss != ''",
			Grant: &auth.Grant{Namespaces: []string{"default"}, Verbs: []string{"list"}}}}
	}})
	id := verifyLogin(t, s, p)
	if id.ServiceAccountName != "research" || !id.Grant.Allows("list", "default", false) || id.Grant.Allows("list", "other", false) {
		t.Errorf("%+v %+v", id, id.Grant)
	}
}
