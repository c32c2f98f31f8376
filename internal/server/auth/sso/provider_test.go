package sso

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// testProvider is a small OpenID Connect provider for the tests: discovery,
// JWKS, an authorize endpoint that approves at once, a token endpoint that
// signs real RS256 ID tokens (with PKCE when asked) and userinfo.
type testProvider struct {
	t        *testing.T
	srv      *httptest.Server
	key      *rsa.PrivateKey
	clientID string
	secret   string

	mu sync.Mutex
	// issuer is what discovery and tokens name; "" means the server's URL.
	issuer string
	pkce   bool
	// user are the user's claims in the ID token; userinfo the userinfo
	// response.
	user     map[string]any
	userinfo map[string]any
	// badNonce makes the ID token carry another nonce.
	badNonce bool
	codes    map[string]grant
	lastAuth url.Values
}

type grant struct {
	nonce, challenge, redirectURI string
}

func newTestProvider(t *testing.T, tlsServer bool) *testProvider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &testProvider{t: t, key: key, clientID: "braid-client", secret: "s3cret", pkce: true, codes: map[string]grant{},
		user: map[string]any{"sub": "u-1", "email": "ada@example.com", "email_verified": true, "name": "Ada",
			"groups": []string{"dev", "ops"}}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	mux.HandleFunc("GET /userinfo", p.userInfo)
	p.srv = httptest.NewUnstartedServer(mux)
	// The test of an untrusted certificate makes the server log a failed handshake.
	p.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if tlsServer {
		p.srv.StartTLS()
	} else {
		p.srv.Start()
	}
	t.Cleanup(p.srv.Close)
	return p
}

func (p *testProvider) iss() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.issuer != "" {
		return p.issuer
	}
	return p.srv.URL
}

func (p *testProvider) discovery(w http.ResponseWriter, _ *http.Request) {
	u := p.srv.URL
	doc := map[string]any{"issuer": p.iss(), "authorization_endpoint": u + "/authorize", "token_endpoint": u + "/token",
		"jwks_uri": u + "/jwks", "userinfo_endpoint": u + "/userinfo", "response_types_supported": []string{"code"},
		"subject_types_supported": []string{"public"}, "id_token_signing_alg_values_supported": []string{"RS256"}}
	p.mu.Lock()
	if p.pkce {
		doc["code_challenge_methods_supported"] = []string{"S256"}
	}
	p.mu.Unlock()
	writeJSON(w, doc)
}

func (p *testProvider) jwks(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
}

func (p *testProvider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != p.clientID || q.Get("response_type") != "code" {
		http.Error(w, "bad client or response type", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	p.mu.Lock()
	p.lastAuth = q
	p.codes[code] = grant{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirectURI: q.Get("redirect_uri")}
	p.mu.Unlock()
	back, _ := url.Parse(q.Get("redirect_uri"))
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (p *testProvider) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != p.clientID || secret != p.secret {
		writeJSONStatus(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	p.mu.Lock()
	g, found := p.codes[r.PostForm.Get("code")]
	delete(p.codes, r.PostForm.Get("code"))
	claims := maps.Clone(p.user)
	badNonce := p.badNonce
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	switch {
	case !found || g.redirectURI != r.PostForm.Get("redirect_uri"):
		found = false
	case g.challenge != "" && base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
		found = false
	}
	if !found {
		writeJSONStatus(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	now := time.Now()
	claims["iss"], claims["aud"], claims["nonce"] = p.iss(), p.clientID, g.nonce
	claims["iat"], claims["exp"] = now.Unix(), now.Add(time.Hour).Unix()
	if badNonce {
		claims["nonce"] = "another"
	}
	writeJSON(w, map[string]any{"access_token": "at-" + g.nonce, "token_type": "Bearer", "expires_in": 3600,
		"id_token": p.sign(claims)})
}

func (p *testProvider) userInfo(w http.ResponseWriter, r *http.Request) {
	if len(r.Header.Get("Authorization")) < len("Bearer at-") {
		http.Error(w, "no token", http.StatusUnauthorized)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	writeJSON(w, p.userinfo)
}

func (p *testProvider) sign(claims map[string]any) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: p.key, KeyID: "k1"}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		p.t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	obj, err := signer.Sign(payload)
	if err != nil {
		p.t.Fatal(err)
	}
	s, err := obj.CompactSerialize()
	if err != nil {
		p.t.Fatal(err)
	}
	return s
}

func writeJSON(w http.ResponseWriter, v any) { writeJSONStatus(w, http.StatusOK, v) }

func writeJSONStatus(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
func certPEM(srv *httptest.Server) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
}
