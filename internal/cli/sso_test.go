package cli

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/server/auth"
)

func TestNewSSOConfigErrors(t *testing.T) {
	dir := t.TempDir()
	tokens, err := auth.OpenTokens(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		cfg  *config.Config
		want string
	}{
		{&config.Config{DataDir: dir}, "no config file"},
		{&config.Config{DataDir: dir, File: dir + "/c.yaml"}, "c.yaml has no sso key"},
		{&config.Config{DataDir: dir, File: "c.yaml", SSO: &config.SSOConfig{Issuer: "https://login.example"}}, "sso.redirectUrl: required"},
	} {
		if _, _, err := newSSO(context.Background(), tc.cfg, tokens, log, true, "/"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}
