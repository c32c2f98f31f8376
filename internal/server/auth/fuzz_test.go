package auth

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
)

// FuzzAuthenticate: any Authorization value or cookie is either a known
// token or refused as unauthenticated; nothing panics, nothing else gets in.
func FuzzAuthenticate(f *testing.F) {
	tk, err := OpenTokens(f.TempDir(), nil)
	if err != nil {
		f.Fatal(err)
	}
	local, err := tk.EnsureLocal()
	if err != nil {
		f.Fatal(err)
	}
	g, err := NewGatekeeper(Config{Modes: []Mode{ModeClient}, Client: tk})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "Bearer ", "Bearer x", "Basic Og==", "Basic !!", "Bearer v2:x", local, "Basic " + local, "Bearer+x", "Bearer%20x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		id, err := g.Authenticate(context.Background(), v)
		if err == nil && (id == nil || id.Subject != LocalTokenName) {
			t.Fatalf("%q authenticated as %+v", v, id)
		}
		if err != nil && !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("%q: %v", v, err)
		}
		r := httptest.NewRequest("GET", "http://127.0.0.1/", nil)
		r.Header.Set("Cookie", CookieName+"="+v)
		_ = RequestCredential(r)
	})
}
