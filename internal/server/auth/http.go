package auth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/pkg/apiclient"
)

// CookieName is the cookie a browser sends its credential in, as Argo's UI.
const CookieName = "authorization"

// HTTPConfig configures Gatekeeper.HTTP.
type HTTPConfig struct {
	// Public are path prefixes served without a credential (/healthz,
	// /readyz, /oauth2/).
	Public []string
	// SecureCookies marks the login cookie Secure (the server speaks TLS).
	SecureCookies bool
	// Logins redeems the one-time codes of login URLs; nil: none.
	Logins *LoginCodes
	// Open, when set, names more requests served without a credential
	// (the UI's pages and files: what they show comes from the API, which
	// asks for one). Unlike Public, a GET with ?token= on them still logs
	// in, so a login URL may point at any page.
	Open func(r *http.Request) bool
	// Webhook authenticates a request with no credential by its webhook
	// signature (the events endpoint): (nil, nil) when it is not a webhook
	// request.
	Webhook func(r *http.Request) (*Identity, error)
}

// HTTP authenticates every request to next but the public ones, taking the
// credential from the Authorization header, else the authorization cookie.
// A GET with ?token= logs a browser in: the token (or a one-time login
// code) becomes an HttpOnly, SameSite=Strict cookie and the browser is sent
// to the same URL without it.
func (g *Gatekeeper) HTTP(next http.Handler, c HTTPConfig) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, p := range c.Public {
			if strings.HasPrefix(r.URL.Path, p) {
				next.ServeHTTP(w, r)
				return
			}
		}
		if r.Method == http.MethodGet && r.URL.Query().Has("token") {
			g.login(w, r, c)
			return
		}
		if c.Open != nil && c.Open(r) {
			next.ServeHTTP(w, r)
			return
		}
		id, err := g.authenticateHTTP(r, c)
		if err != nil {
			writeHTTPError(w, r, Status(err))
			return
		}
		next.ServeHTTP(w, r.WithContext(g.withChecker(r.Context(), id)))
	})
}

// RequestCredential is the Authorization header, else the cookie.
func RequestCredential(r *http.Request) string {
	if v := r.Header.Get("Authorization"); v != "" {
		return v
	}
	ck, err := r.Cookie(CookieName)
	if err != nil {
		return ""
	}
	// A browser may store the space of "Bearer x" escaped.
	v := ck.Value
	for _, p := range []string{"Bearer+", "Bearer%20", "Basic+", "Basic%20"} {
		if strings.HasPrefix(v, p) {
			if u, err := url.QueryUnescape(v); err == nil {
				return u
			}
		}
	}
	return v
}

func (g *Gatekeeper) authenticateHTTP(r *http.Request, c HTTPConfig) (*Identity, error) {
	cred := RequestCredential(r)
	if cred == "" && c.Webhook != nil {
		id, err := c.Webhook(r)
		if err != nil || id != nil {
			return id, err
		}
	}
	return g.Authenticate(r.Context(), cred)
}

func (g *Gatekeeper) login(w http.ResponseWriter, r *http.Request, c HTTPConfig) {
	q := r.URL.Query()
	tok := strings.TrimSpace(q.Get("token"))
	cred, ok := c.Logins.Redeem(tok)
	if !ok {
		cred = tok
		if !strings.HasPrefix(cred, "Bearer ") && !strings.HasPrefix(cred, "Basic ") {
			cred = "Bearer " + cred
		}
	}
	if _, err := g.Authenticate(r.Context(), cred); err != nil || !g.modes[ModeClient] {
		if err == nil {
			err = Unauthenticated("this server does not take tokens (client mode is off)")
		}
		writeHTTPError(w, r, Status(err))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: cred, Path: "/", HttpOnly: true,
		Secure: c.SecureCookies, SameSite: http.SameSiteStrictMode})
	q.Del("token")
	// Back to the same page, by a reference relative to it: behind a
	// reverse proxy that serves braid under a prefix (--base-href), the
	// browser's path is not the one that reached here.
	last := r.URL.EscapedPath()
	last = last[strings.LastIndex(last, "/")+1:]
	loc := "./" + last
	if enc := q.Encode(); enc != "" {
		loc += "?" + enc
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", loc) // http.Redirect would make it absolute
	w.WriteHeader(http.StatusSeeOther)
}

// LoginCodes are one-time codes for login URLs, so that the URL a server
// prints holds no lasting secret: each code works once, within its TTL.
type LoginCodes struct {
	mu    sync.Mutex
	codes map[string]loginCode
	now   func() time.Time
}

type loginCode struct {
	cred    string
	expires time.Time
}

// NewLoginCodes makes an empty set; now may be nil.
func NewLoginCodes(now func() time.Time) *LoginCodes {
	if now == nil {
		now = time.Now
	}
	return &LoginCodes{codes: map[string]loginCode{}, now: now}
}

// Issue returns a new code that logs in as cred once, within ttl.
func (l *LoginCodes) Issue(cred string, ttl time.Duration) (string, error) {
	code, err := newSecret()
	if err != nil {
		return "", err
	}
	code = "login_" + strings.TrimPrefix(code, secretPrefix)
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for k, v := range l.codes { // keep the set small
		if !now.Before(v.expires) {
			delete(l.codes, k)
		}
	}
	l.codes[code] = loginCode{cred: cred, expires: now.Add(ttl)}
	return code, nil
}

// Redeem takes a code: its credential, once.
func (l *LoginCodes) Redeem(code string) (string, bool) {
	if l == nil {
		return "", false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.codes[code]
	if !ok {
		return "", false
	}
	delete(l.codes, code)
	return c.cred, l.now().Before(c.expires)
}

// errorBody is argo-server's error JSON.
type errorBody struct {
	Code    codes.Code `json:"code"`
	Message string     `json:"message"`
}

// writeHTTPError answers with err's status: Argo's error JSON under /api/,
// plain text elsewhere (as argo-server's artifact routes).
func writeHTTPError(w http.ResponseWriter, r *http.Request, err error) {
	st := status.Convert(err)
	code := http.StatusForbidden
	switch st.Code() {
	case codes.Unauthenticated:
		code = http.StatusUnauthorized
		w.Header().Set("WWW-Authenticate", `Bearer realm="braid"`)
	case codes.Internal:
		code = http.StatusInternalServerError
	case codes.InvalidArgument:
		code = http.StatusBadRequest
	}
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		http.Error(w, st.Message(), code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(errorBody{Code: st.Code(), Message: st.Message()})
}

// GatewayRoutes maps "METHOD pattern" of every REST route of the services
// (the generated route tables, from the protos' google.api.http rules) to
// its gRPC method, in the form the gateway's runtime.Pattern prints
// ("/api/v1/workflows/{namespace=*}").
func GatewayRoutes() map[string]string {
	out := map[string]string{}
	for _, r := range apiclient.Routes() {
		out[r.Verb+" "+gatewayPattern(r.Pattern)] = r.FullMethod()
	}
	return out
}

func gatewayPattern(path string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(path, '{')
		if i < 0 {
			b.WriteString(path)
			return b.String()
		}
		j := strings.IndexByte(path[i:], '}')
		if j < 0 {
			b.WriteString(path)
			return b.String()
		}
		v := path[i+1 : i+j]
		if !strings.Contains(v, "=") {
			v += "=*"
		}
		b.WriteString(path[:i] + "{" + v + "}")
		path = path[i+j+1:]
	}
}

// GatewayMiddleware authorizes every REST route of the gateway by the
// rule of its gRPC method, before the handler runs. routes come from
// GatewayRoutes; a route with no method or rule is refused.
func (g *Gatekeeper) GatewayMiddleware(routes map[string]string) runtime.Middleware {
	return func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
			if err := g.authorizeRoute(r.Context(), routes, r, params); err != nil {
				writeHTTPError(w, r, err)
				return
			}
			next(w, r, params)
		}
	}
}

func (g *Gatekeeper) authorizeRoute(ctx context.Context, routes map[string]string, r *http.Request, params map[string]string) error {
	pat, _ := runtime.HTTPPattern(ctx)
	rule, err := ruleFor(routes[r.Method+" "+pat.String()])
	if err != nil {
		return err
	}
	if rule.Scope == AnyCaller || rule.Scope == Deferred {
		return nil
	}
	a := Attributes{Verb: rule.Verb, Resource: rule.Resource, Cluster: rule.Scope == Cluster, Name: params["name"]}
	if rule.Scope == Namespaced {
		ns, ok := params["namespace"]
		if !ok {
			ns = r.URL.Query().Get("namespace")
		}
		a.Namespace = ns
	}
	id, _ := FromContext(ctx)
	return Status(g.Authorize(ctx, id, a))
}
