package sso

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

const (
	// CookieName is the cookie that holds "Bearer v2:<token>", as Argo's.
	CookieName = "authorization"
	// stateCookie holds the login in progress between the two routes.
	stateCookie = "oauthState"
	// stateTTL bounds how long a login may take at the provider.
	stateTTL = 10 * time.Minute
	// maxRedirect bounds the redirect parameter.
	maxRedirect = 2048

	sessionType = "braid-sso-session"
	stateType   = "braid-sso-state"
)

// loginState is what the state cookie holds, encrypted.
type loginState struct {
	State    string `json:"state"`
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier,omitempty"`
	Redirect string `json:"redirect"`
	Expiry   int64  `json:"exp"`
}

// Handler serves GET /oauth2/redirect, which starts a login at the
// provider, and GET /oauth2/callback, where the provider sends the browser
// back and the session cookie is set.
func (s *SSO) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /oauth2/redirect", s.handleRedirect)
	mux.HandleFunc("GET /oauth2/callback", s.handleCallback)
	return mux
}

func (s *SSO) handleRedirect(w http.ResponseWriter, r *http.Request) {
	redirect, err := s.finalRedirect(r, r.URL.Query().Get("redirect"))
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	st := loginState{Redirect: redirect, Expiry: s.now().Add(stateTTL).Unix()}
	if st.State, err = randomText(); err == nil {
		st.Nonce, err = randomText()
	}
	if err != nil {
		s.log.Error("sso: cannot make a login state", "err", err)
		httpError(w, http.StatusInternalServerError, "cannot start a login: no randomness")
		return
	}
	opts := []oauth2.AuthCodeOption{oidc.Nonce(st.Nonce)}
	if s.pkce {
		st.Verifier = oauth2.GenerateVerifier()
		opts = append(opts, oauth2.S256ChallengeOption(st.Verifier))
	}
	payload, _ := json.Marshal(st)
	value, err := seal(s.keys.state, payload, stateType)
	if err != nil {
		s.log.Error("sso: cannot seal a login state", "err", err)
		httpError(w, http.StatusInternalServerError, "cannot start a login")
		return
	}
	http.SetCookie(w, s.cookie(stateCookie, value, stateTTL))
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, s.oauth.AuthCodeURL(st.State, opts...), http.StatusFound)
}

// finalRedirect checks where the browser asked to go after the login: a
// path on this site. An absolute URL is accepted only for this site (as
// Argo's UI sends), and reduced to its path and query.
func (s *SSO) finalRedirect(r *http.Request, raw string) (string, error) {
	if raw == "" {
		return s.opts.BaseHref, nil
	}
	bad := fmt.Errorf("redirect %s is not a path on this site: give a relative path such as /workflows", quote(raw))
	if len(raw) > maxRedirect || strings.ContainsAny(raw, "\\") || strings.ContainsFunc(raw, isControl) {
		return "", bad
	}
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Opaque != "" {
		return "", bad
	}
	if u.Scheme != "" || u.Host != "" {
		if (u.Scheme != "http" && u.Scheme != "https") || !s.sameSite(r, u.Host) {
			return "", bad
		}
	}
	if !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") {
		return "", bad
	}
	out := &url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}
	return out.String(), nil
}

// sameSite says whether host is this server as the browser reaches it:
// the request's host or the host of sso.redirectUrl.
func (s *SSO) sameSite(r *http.Request, host string) bool {
	if strings.EqualFold(host, r.Host) {
		return true
	}
	ru, err := url.Parse(s.cfg.RedirectURL)
	return err == nil && strings.EqualFold(host, ru.Host)
}

func (s *SSO) handleCallback(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	q := r.URL.Query()
	st, err := s.readState(r)
	// The state is single-use: clear it whatever happens next.
	http.SetCookie(w, s.cookie(stateCookie, "", -1))
	if e := q.Get("error"); e != "" {
		httpError(w, http.StatusUnauthorized, fmt.Sprintf("the identity provider did not log you in: %s %s",
			quote(e), quote(q.Get("error_description"))))
		return
	}
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	if got := q.Get("state"); subtle.ConstantTimeCompare([]byte(got), []byte(st.State)) != 1 {
		httpError(w, http.StatusBadRequest, "the login state does not match this browser's: start again at /oauth2/redirect")
		return
	}
	code := q.Get("code")
	if code == "" {
		httpError(w, http.StatusBadRequest, "the identity provider sent no code")
		return
	}
	sess, status, err := s.login(r.Context(), code, st)
	if err != nil {
		s.log.Warn("sso: login failed", "err", err)
		httpError(w, status, err.Error())
		return
	}
	value, err := s.sealSession(sess)
	if err != nil {
		s.log.Warn("sso: login failed", "sub", sess.Subject, "err", err)
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	c := s.cookie(CookieName, Prefix+value, s.expiry)
	http.SetCookie(w, c)
	s.log.Info("sso: logged in", "iss", sess.Issuer, "sub", sess.Subject, "email", sess.Email, "groups", len(sess.Groups))
	http.Redirect(w, r, st.Redirect, http.StatusFound)
}

// readState opens the state cookie.
func (s *SSO) readState(r *http.Request) (*loginState, error) {
	again := "start again at /oauth2/redirect"
	c, err := r.Cookie(stateCookie)
	if err != nil || c.Value == "" {
		return nil, fmt.Errorf("this browser has no login in progress (the %s cookie is missing or expired): %s", stateCookie, again)
	}
	payload, err := open(s.keys.state, c.Value, stateType)
	if err != nil {
		return nil, fmt.Errorf("the login state is not valid: %v: %s", err, again)
	}
	var st loginState
	if err := json.Unmarshal(payload, &st); err != nil || st.State == "" {
		return nil, fmt.Errorf("the login state is not valid: %s", again)
	}
	if s.now().Unix() >= st.Expiry {
		return nil, fmt.Errorf("the login took longer than %s: %s", stateTTL, again)
	}
	return &st, nil
}

// cookie is a cookie of this server; maxAge < 0 deletes it.
func (s *SSO) cookie(name, value string, maxAge time.Duration) *http.Cookie {
	c := &http.Cookie{Name: name, Value: value, Path: s.opts.BaseHref, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.opts.Secure}
	if maxAge < 0 {
		c.MaxAge = -1
		return c
	}
	c.MaxAge = int(maxAge / time.Second)
	c.Expires = s.now().Add(maxAge)
	return c
}

// sealSession encrypts sess for the cookie; without its extra claims if
// the cookie would be too large, and an error if it still is.
func (s *SSO) sealSession(sess *session) (string, error) {
	for _, extra := range []bool{true, false} {
		claims := sess.claims()
		if !extra {
			claims = (&session{Issuer: sess.Issuer, Subject: sess.Subject, Email: sess.Email, EmailVerified: sess.EmailVerified,
				Name: sess.Name, Groups: sess.Groups, Expiry: sess.Expiry, IssuedAt: sess.IssuedAt}).claims()
		}
		payload, err := json.Marshal(claims)
		if err != nil {
			return "", fmt.Errorf("encode the session: %w", err)
		}
		token, err := seal(s.keys.session, payload, sessionType)
		if err != nil {
			return "", err
		}
		if len(Prefix)+len(token)+len(CookieName)+100 <= maxCookieBytes {
			if !extra {
				s.log.Warn("sso: the session left out the ID token's other claims to fit in a cookie", "sub", sess.Subject)
			}
			return token, nil
		}
	}
	return "", fmt.Errorf("the session of %s is too large for a browser cookie (%d groups): set sso.filterGroupsRegex to keep only the groups braid needs",
		quote(sess.Subject), len(sess.Groups))
}

func httpError(w http.ResponseWriter, status int, msg string) {
	// text/plain with nosniff: nothing the provider sent can run as HTML.
	http.Error(w, msg, status)
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// quote makes text from outside short and safe to show in a message: a
// JSON string, in which control characters, quotes, <, > and & are escaped.
func quote(s string) string {
	const max = 200
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "..."
	}
	b, _ := json.Marshal(s)
	return string(b)
}

var errNoIDToken = errors.New("the identity provider sent no id_token: is the openid scope allowed for this client?")
