package cli

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/server/auth"
)

// A signed GitHub webhook acts as the named token of its client; an
// unsigned one, or one to another path, is left to the token check.
func TestWebhookAuth(t *testing.T) {
	dir := t.TempDir()
	tokens, err := auth.OpenTokens(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Create(auth.Token{Name: "github-ci", Grant: auth.Grant{Namespaces: []string{"ci"}, Verbs: []string{"create"}}}, 0); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{DataDir: dir, Secrets: map[string]map[string]string{
		"argo-workflows-webhook-clients": {"github-ci": "type: github\nsecret: s3cret\n"}}}
	hook, err := webhookAuth(cfg, tokens)
	if err != nil || hook == nil {
		t.Fatalf("webhookAuth: %v", err)
	}
	body := `{"ref":"main"}`
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write([]byte(body))
	sig := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	for _, tc := range []struct {
		name, path, sig string
		want            string
	}{
		{"signed", "/api/v1/events/ci/push", sig, "github-ci"},
		{"bad signature", "/api/v1/events/ci/push", "sha256=00", ""},
		{"not the events path", "/api/v1/workflows/ci", sig, ""},
	} {
		r := httptest.NewRequest("POST", "https://127.0.0.1"+tc.path, strings.NewReader(body))
		r.Header.Set("X-GitHub-Event", "push")
		r.Header.Set("X-Hub-Signature-256", tc.sig)
		id, err := hook(r)
		got := ""
		if id != nil {
			got = id.ServiceAccountName
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.name, got, err, tc.want)
		}
	}
	cfg.Secrets["argo-workflows-webhook-clients"]["bad"] = "type: nope\nsecret: x\n"
	if _, err := webhookAuth(cfg, tokens); err == nil || !strings.Contains(err.Error(), "secrets.argo-workflows-webhook-clients") {
		t.Errorf("a bad client: %v", err)
	}
}

func TestSameServer(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"127.0.0.1:2746", "127.0.0.1:2746", true},
		{"127.0.0.1:2746", "localhost:2746", true},
		{"[::1]:2746", "localhost:2746", true},
		{"127.0.0.1:2746", "localhost:2747", false},
		{"127.0.0.1:2746", "10.0.0.1:2746", false},
		{"127.0.0.1:2746", "evil.example:2746", false},
	} {
		if got := sameServer(tc.a, tc.b); got != tc.want {
			t.Errorf("sameServer(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}
