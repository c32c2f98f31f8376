package cli

import (
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
	cfg, err := g.loadConfig()
	if err != nil {
		return ""
	}
	sf, err := config.ReadServerInfo(config.ServerFile(cfg.DataDir))
	if err != nil || sf.Address != addr {
		return ""
	}
	cred, err := auth.ReadLocalToken(cfg.DataDir)
	if err != nil {
		return ""
	}
	return cred
}
