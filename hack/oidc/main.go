// Command braid-oidc is a real OpenID Connect provider for braid's SSO
// tests, built on github.com/oauth2-proxy/mockoidc: discovery, JWKS, RS256
// ID tokens, userinfo and PKCE are mockoidc's; this program adds a login
// form with users and passwords, a check of the redirect URL, and a
// command line. It listens on a loopback address only and prints its
// issuer URL on stdout as BRAID_TEST_OIDC_ISSUER=<url>.
//
// It is its own Go module, so that its dependencies never enter braid's.
// Build it with hack/oidc.sh build.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/oauth2-proxy/mockoidc"
)

type options struct {
	addr         string
	clientID     string
	clientSecret string
	redirectURL  string
	form         bool
	users        userFlag
}

func main() {
	o := options{}
	flag.StringVar(&o.addr, "addr", "127.0.0.1:0", "loopback address to listen on (port 0 picks a free port)")
	flag.StringVar(&o.clientID, "client-id", env("OIDC_CLIENT_ID", "braid"), "the client's id (env OIDC_CLIENT_ID)")
	flag.StringVar(&o.clientSecret, "client-secret", os.Getenv("OIDC_CLIENT_SECRET"), "the client's secret (env OIDC_CLIENT_SECRET; required)")
	flag.StringVar(&o.redirectURL, "redirect-url", os.Getenv("OIDC_REDIRECT_URL"),
		"the only redirect_uri accepted (env OIDC_REDIRECT_URL); empty accepts any")
	flag.BoolVar(&o.form, "login-form", true, "ask for a login and password; false logs the first user in at once")
	flag.Var(&o.users, "user", "a user, login:password:email:name:group1,group2 (repeatable; default dev:dev:dev@example.com:Dev User:dev)")
	flag.Parse()
	if err := run(o); err != nil {
		log.Fatal("braid-oidc: ", err)
	}
}

func env(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func run(o options) error {
	if o.clientSecret == "" {
		return errors.New("-client-secret (or OIDC_CLIENT_SECRET) is required")
	}
	if len(o.users) == 0 {
		_ = o.users.Set("dev:dev:dev@example.com:Dev User:dev")
	}
	host, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		return fmt.Errorf("-addr: %w", err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-addr %s: give a loopback address such as 127.0.0.1:0", o.addr)
	}
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		return err
	}
	m.ClientID, m.ClientSecret = o.clientID, o.clientSecret
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	p := &provider{m: m, opts: o}
	mux := http.NewServeMux()
	mux.HandleFunc(mockoidc.AuthorizationEndpoint, p.authorize)
	mux.HandleFunc(mockoidc.TokenEndpoint, m.Token)
	mux.HandleFunc(mockoidc.UserinfoEndpoint, m.Userinfo)
	mux.HandleFunc(mockoidc.JWKSEndpoint, m.JWKS)
	mux.HandleFunc(mockoidc.DiscoveryEndpoint, m.Discovery)
	// mockoidc derives its URLs from Server.Addr.
	m.Server = &http.Server{Addr: ln.Addr().String(), Handler: logRequests(mux), ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("BRAID_TEST_OIDC_ISSUER=%s\n", m.Issuer())
	log.Printf("braid-oidc: serving %s for client %q (%d users)", m.Issuer(), o.clientID, len(o.users))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- m.Server.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return m.Server.Shutdown(sctx)
}

// provider puts a login form in front of mockoidc's authorize endpoint,
// which logs in whichever user is queued.
type provider struct {
	m    *mockoidc.MockOIDC
	opts options
	// mu makes the queueing of a user and the authorize call one step.
	mu sync.Mutex
}

func (p *provider) authorize(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if p.opts.redirectURL != "" && r.Form.Get("redirect_uri") != p.opts.redirectURL {
		http.Error(w, "redirect_uri is not registered for this client", http.StatusBadRequest)
		return
	}
	u := p.opts.users[0]
	if p.opts.form {
		if r.Method != http.MethodPost {
			p.showForm(w, r, "")
			return
		}
		var ok bool
		if u, ok = p.opts.users.find(r.PostForm.Get("login"), r.PostForm.Get("password")); !ok {
			p.showForm(w, r, "Invalid login or password.")
			return
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m.QueueUser(u)
	p.m.Authorize(w, r)
}

var formPage = template.Must(template.New("login").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>braid-oidc login</title></head>
<body><h1>Log in to braid-oidc</h1>
{{if .Error}}<p id="error">{{.Error}}</p>{{end}}
<form method="post" action="{{.Action}}">
{{range $k, $v := .Params}}<input type="hidden" name="{{$k}}" value="{{$v}}">
{{end}}<label>Login <input id="login" name="login" autocomplete="username"></label>
<label>Password <input id="password" name="password" type="password" autocomplete="current-password"></label>
<button id="submit" type="submit">Log in</button>
</form></body></html>
`))

func (p *provider) showForm(w http.ResponseWriter, r *http.Request, msg string) {
	params := map[string]string{}
	for k, v := range r.Form {
		if k != "login" && k != "password" && len(v) > 0 {
			params[k] = v[0]
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if msg != "" {
		w.WriteHeader(http.StatusUnauthorized)
	}
	_ = formPage.Execute(w, map[string]any{"Error": msg, "Action": mockoidc.AuthorizationEndpoint, "Params": params})
}

func logRequests(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Printf("braid-oidc: %s %s", r.Method, r.URL.Path)
		h.ServeHTTP(w, r)
	})
}

// userFlag is the -user flag: login:password:email:name:groups.
type userFlag []*user

func (f *userFlag) String() string { return fmt.Sprint(len(*f), " users") }

func (f *userFlag) Set(s string) error {
	parts := strings.SplitN(s, ":", 5)
	if len(parts) != 5 || parts[0] == "" || parts[1] == "" {
		return fmt.Errorf("user %q: want login:password:email:name:group1,group2", s)
	}
	u := &user{login: parts[0], password: parts[1], email: parts[2], name: parts[3]}
	for _, g := range strings.Split(parts[4], ",") {
		if g = strings.TrimSpace(g); g != "" {
			u.groups = append(u.groups, g)
		}
	}
	*f = append(*f, u)
	return nil
}

func (f userFlag) find(login, password string) (*user, bool) {
	for _, u := range f {
		if u.login == login && u.password == password {
			return u, true
		}
	}
	return nil, false
}
