package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/server/auth"
	"github.com/braidwf/braid/internal/server/auth/sso"
)

// ssoKeyFile is where braid server keeps the key its SSO sessions are
// encrypted with, under the data directory.
const ssoKeyFile = "sso.key"

// newSSO builds the SSO of braid server from the config's sso key: its
// secrets from the config, its RBAC rules from the named tokens (read at
// every request), its session key in <data dir>/sso.key.
func newSSO(ctx context.Context, cfg *config.Config, tokens *auth.Tokens, log *slog.Logger, secure bool, baseHref string) (auth.Verifier, http.Handler, error) {
	if cfg.SSO == nil {
		if cfg.File == "" {
			return nil, nil, fmt.Errorf("--auth-mode sso: no config file (%s, or --config) to hold the sso key (issuer, clientId, clientSecret, redirectUrl)",
				filepath.Join(cfg.DataDir, "config.yaml"))
		}
		return nil, nil, fmt.Errorf("--auth-mode sso: config %s has no sso key (issuer, clientId, clientSecret, redirectUrl)", cfg.File)
	}
	if err := cfg.SSO.Validate(); err != nil {
		return nil, nil, fmt.Errorf("--auth-mode sso: config %s: %w", cfg.File, err)
	}
	if tokens == nil {
		return nil, nil, errors.New("--auth-mode sso: no token store for the RBAC rules")
	}
	s, err := sso.New(ctx, *cfg.SSO, sso.Options{
		Secret: func(ctx context.Context, name, key string) (string, error) {
			return cfg.Secret(ctx, "", name, key)
		},
		KeyFile: filepath.Join(cfg.DataDir, ssoKeyFile),
		Rules:   tokens.Rules,
		Logger:  log.With("component", "sso"),
		Secure:  secure,
		// Where the browser lands after a login: the UI.
		BaseHref: baseHref,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("--auth-mode sso: %w", err)
	}
	return s, s.Handler(), nil
}
