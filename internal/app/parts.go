package app

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/file"
	"github.com/braidwf/braid/internal/artifact/git"
	httpart "github.com/braidwf/braid/internal/artifact/http"
	"github.com/braidwf/braid/internal/artifact/raw"
	"github.com/braidwf/braid/internal/artifact/s3"
	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/internal/server"
	"github.com/braidwf/braid/internal/store/sqlite"
)

// The SQLite store is everything the server can use: the store and each
// optional capability (sqliteCapabilities).
var (
	_ server.Store         = (*sqlite.Store)(nil)
	_ server.Archive       = (*sqlite.Store)(nil)
	_ server.Counter       = (*sqlite.Store)(nil)
	_ server.NodeDeltas    = (*sqlite.Store)(nil)
	_ server.StatusUpdater = (*sqlite.Store)(nil)
)

// sqliteCapabilities are the server capabilities of the SQLite store: all
// of them.
func sqliteCapabilities(st *sqlite.Store) server.Capabilities {
	return server.Capabilities{Archive: st, Counter: st, NodeDeltas: st, StatusUpdater: st}
}

// engineLimits is the engine's part of config.yaml's limits:.
func engineLimits(l config.Limits) engine.Limits {
	l = l.WithDefaults()
	return engine.Limits{MaxNodes: l.MaxNodes, MaxDepth: l.MaxDepth, MaxLoopItems: l.MaxLoopItems,
		MaxParameterBytes: l.MaxParameterBytes, MaxResultBytes: l.MaxResultBytes, MaxNodesPerPass: l.MaxNodesPerPass,
		Expression: expr.Budget{Time: l.ExprTimeout(), Bytes: int64(l.MaxExpressionBytes)}}
}

// artifactDrivers are the artifact drivers of one machine: the file
// repository under the data directory, and s3, git, http and raw, with
// secrets from the config file or the environment.
func artifactDrivers(cfg *config.Config) *artifact.Drivers {
	return &artifact.Drivers{
		File: file.New(cfg.ArtifactsDir()),
		Raw:  raw.New(),
		HTTP: httpart.New(cfg, ""),
		S3:   s3.New(cfg, ""),
		Git:  git.New(cfg, ""),
	}
}

// ArtifactRepositories are the configured repositories (the file
// repository when none is configured).
func ArtifactRepositories(cfg *config.Config) artifact.Repositories {
	return artifact.Repositories{Default: cfg.ArtifactRepository, Named: cfg.ArtifactRepositories}
}

// archiveTTL is the config's persistence.archiveTTL, which Load checked.
func archiveTTL(cfg *config.Config) time.Duration {
	d, _ := cfg.Persistence.TTL()
	return d
}

// warnLogger logs braid's warnings on one machine to stderr.
func warnLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// MakeDataDir creates the data directory for braid's user only (0700), as
// OpenEmbedded does; its warnings go to stderr.
func MakeDataDir(dir string) error { return makeDataDir(dir, warnLogger()) }

// makeDataDir creates the data directory for braid's user only (0700): it
// holds the store, every step's files and log, and the file artifact
// repository. One that exists with looser bits is tightened, with a
// warning; one braid's user cannot change (another user's) is left as it
// is, with a warning.
func makeDataDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	perm := info.Mode().Perm()
	if perm&0o077 == 0 {
		return nil
	}
	special := info.Mode() & (os.ModeSetgid | os.ModeSticky)
	if err := os.Chmod(dir, special|perm&0o700); err != nil {
		log.Warn("the data directory is open to other users and cannot be made private", "dir", dir, "mode", fmt.Sprintf("%04o", perm), "err", err)
		return nil
	}
	log.Warn("the data directory was open to other users: made it private (0700)", "dir", dir, "was", fmt.Sprintf("%04o", perm))
	return nil
}
