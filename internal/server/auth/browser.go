package auth

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
)

// BrowserConfig configures Browser.
type BrowserConfig struct {
	// AllowedHosts are the host names, besides IP addresses and the
	// loopback names, that requests may address (the Host header): exact
	// names, or suffixes that start with "." (".svc").
	AllowedHosts []string
	// AllowedOrigins are origins ("https://ui.example:8443") other pages
	// may call the API from, with CORS; none by default.
	AllowedOrigins []string
}

// Browser protects the HTTP side from what a web page the user merely
// opens could do:
//   - a Host that is not allowed (DNS rebinding) gets 403;
//   - a state-changing request from another origin gets 403 (Go's
//     CrossOriginProtection: Sec-Fetch-Site, else Origin against Host),
//     unless AllowedOrigins names it;
//   - a state-changing /api/ request whose body is not JSON (text/plain,
//     a form, multipart: what a page can send without a preflight) gets
//     415;
//   - CORS answers only for AllowedOrigins; a preflight from elsewhere
//     gets 403;
//   - every response says nosniff, frame-ancestors 'none' and
//     no-referrer.
func Browser(next http.Handler, c BrowserConfig) (http.Handler, error) {
	cop := http.NewCrossOriginProtection()
	for _, o := range c.AllowedOrigins {
		if err := cop.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("--allowed-origins %q: %w", o, err)
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeHTTPError(w, r, Status(fmt.Errorf("%w: cross-origin request from %q refused", ErrForbidden, r.Header.Get("Origin"))))
	}))
	inner := cop.Handler(jsonBodies(next))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "frame-ancestors 'none'")
		h.Set("Referrer-Policy", "no-referrer")
		if !hostAllowed(r.Host, c.AllowedHosts) {
			writeHTTPError(w, r, Status(fmt.Errorf("%w: host %q is not allowed (add it with --allowed-hosts)", ErrForbidden, r.Host)))
			return
		}
		origin := r.Header.Get("Origin")
		allowed := origin != "" && slices.Contains(c.AllowedOrigins, origin)
		if allowed {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			if !allowed {
				writeHTTPError(w, r, Status(fmt.Errorf("%w: CORS preflight from %q refused (allow origins with --allowed-origins)", ErrForbidden, origin)))
				return
			}
			h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		inner.ServeHTTP(w, r)
	}), nil
}

// hostAllowed says whether a Host header names this server: an IP
// address (DNS rebinding needs a name), a loopback name, or an allowed one.
func hostAllowed(host string, allowed []string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" || net.ParseIP(host) != nil || host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	for _, a := range allowed {
		a = strings.ToLower(a)
		if host == a || (strings.HasPrefix(a, ".") && strings.HasSuffix(host, a)) {
			return true
		}
	}
	return false
}

// jsonBodies refuses a state-changing /api/ request whose body says it is
// not JSON. No Content-Type is accepted: the argo CLI sends none.
func jsonBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct := r.Header.Get("Content-Type")
		if ct != "" && strings.HasPrefix(r.URL.Path, "/api/") && r.Method != http.MethodGet && r.Method != http.MethodHead {
			mt, _, err := mime.ParseMediaType(ct)
			if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnsupportedMediaType)
				fmt.Fprintf(w, `{"code":3,"message":%q}`+"\n", fmt.Sprintf("Content-Type %q is not accepted: send application/json", ct))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
