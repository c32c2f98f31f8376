package cli

import (
	"net"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/server/auth"
)

// localCredential is the local token of the data directory, to send to
// addr when addr is the server that data directory's server.json names
// and the user gave no token. It is never sent to any other server.
func (g *globalFlags) localCredential(addr string) string {
	if g.str("token", g.token, "ARGO_TOKEN") != "" {
		return ""
	}
	dataDir, _, ok := g.localServerFor(addr)
	if !ok {
		return ""
	}
	cred, err := auth.ReadLocalToken(dataDir)
	if err != nil {
		return ""
	}
	return cred
}

// localServerFor is the data directory and its server.json when that
// file names the server at addr; ok is false otherwise.
func (g *globalFlags) localServerFor(addr string) (dataDir string, sf config.ServerInfo, ok bool) {
	cfg, err := g.loadConfig()
	if err != nil {
		return "", sf, false
	}
	sf, err = config.ReadServerInfo(config.ServerFile(cfg.DataDir))
	if err != nil || !sameServer(sf.Address, addr) {
		return "", sf, false
	}
	return cfg.DataDir, sf, true
}

// sameServer says whether two host:port addresses reach the same server:
// the same port, and the same host or two loopback spellings
// (localhost, 127.0.0.1, ::1).
func sameServer(a, b string) bool {
	if a == b {
		return true
	}
	ha, pa, err1 := net.SplitHostPort(a)
	hb, pb, err2 := net.SplitHostPort(b)
	if err1 != nil || err2 != nil || pa != pb {
		return false
	}
	return ha == hb || (loopback(ha) && loopback(hb))
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
