package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/image"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// EnvHome names the environment variable that sets the data directory.
const EnvHome = "BRAID_HOME"

// Config is braid's configuration.
type Config struct {
	// DataDir holds the embedded store, the step logs and the artifacts.
	DataDir string `json:"-"`
	// File is the file the config was read from ("" when there was none:
	// the default file does not exist).
	File string `json:"-"`
	// sources are what Load was given, for Live to load again.
	sources Sources
	// Images extends the built-in image table: what an image's entrypoint
	// is, for steps whose container has no command, and the commands it
	// supplies that the host lacks.
	Images image.Table `json:"images,omitempty"`
	// ArtifactRepository is the default artifact repository, as Argo's
	// artifact-repositories ConfigMap holds it (s3, file, ...); nil means
	// the local file repository under <data dir>/artifacts.
	ArtifactRepository *v1alpha1.ArtifactRepository `json:"artifactRepository,omitempty"`
	// ArtifactRepositories are the named repositories that a workflow's
	// artifactRepositoryRef picks: ConfigMap name, then key.
	ArtifactRepositories map[string]map[string]v1alpha1.ArtifactRepository `json:"artifactRepositories,omitempty"`
	// Secrets stand in for Kubernetes Secrets on one machine: name, then
	// key, then value. A secret not listed here is read from the
	// environment (see Secrets).
	Secrets map[string]map[string]string `json:"secrets,omitempty"`
	// Isolation says whether each step of the local runtime gets a root
	// view of its own: none, auto (the default, for "") or required. The
	// --isolation flag of braid run overrides it.
	Isolation string `json:"isolation,omitempty"`
	// ImagesDir holds container images as OCI image layouts (a directory
	// with an index.json) or OCI archives (.tar of such a layout). With
	// isolation, a step whose image is found there runs on the image's
	// root file system instead of the host's. "" means <data dir>/images.
	ImagesDir string `json:"imagesDir,omitempty"`
	// ConfigMaps stand in for Kubernetes ConfigMaps on one machine: name,
	// then key, then value. Semaphore limits (synchronization
	// configMapKeyRef) are read from here. A name may be qualified by its
	// namespace ("argo/my-config"); an unqualified name serves every
	// namespace.
	ConfigMaps map[string]map[string]string `json:"configMaps,omitempty"`
	// Parallelism bounds how many workflows run at once (Argo's
	// controller-wide parallelism); 0 means no bound.
	Parallelism int `json:"parallelism,omitempty"`
	// NamespaceParallelism bounds how many workflows of one namespace run
	// at once; 0 means no bound.
	NamespaceParallelism int `json:"namespaceParallelism,omitempty"`
	// Synchronization holds the limits of database semaphores.
	Synchronization Synchronization `json:"synchronization,omitempty"`
	// RetentionPolicy keeps at most that many completed workflows of each
	// final phase in the live store (the archive keeps them all).
	RetentionPolicy RetentionPolicy `json:"retentionPolicy,omitempty"`
	// WorkflowDefaults is merged under every workflow when it starts, as
	// Argo's workflowDefaults: its spec under the workflow's (or under the
	// stored spec of one that names a template), its labels and
	// annotations where the workflow has none of that key.
	WorkflowDefaults *v1alpha1.Workflow `json:"workflowDefaults,omitempty"`
	// Persistence configures the workflow archive, under Argo's key.
	Persistence Persistence `json:"persistence,omitempty"`
	// SSO configures OpenID Connect single sign-on (--auth-mode sso),
	// under Argo's key; see SSOConfig.
	SSO *SSOConfig `json:"sso,omitempty"`
	// Limits bound what one workflow may make the server build (see Limits).
	Limits Limits `json:"limits,omitempty"`

	getenv func(string) string
}

// Synchronization configures the semaphores that live in the database
// (synchronization semaphores with database: {key}).
type Synchronization struct {
	// Limits maps "namespace/key" to the semaphore's limit.
	Limits map[string]int `json:"limits,omitempty"`
}

// RetentionPolicy is Argo's controller retentionPolicy: how many completed
// workflows of each final phase to keep; 0 keeps all.
type RetentionPolicy struct {
	Completed int `json:"completed,omitempty"`
	Failed    int `json:"failed,omitempty"`
	Errored   int `json:"errored,omitempty"`
}

// Sources are the inputs Load combines; flags win over the environment,
// which wins over the file.
type Sources struct {
	DataDirFlag string              // --data-dir
	ConfigFlag  string              // --config; default <data dir>/config.yaml when it exists
	Getenv      func(string) string // os.Getenv in production
	HomeDir     func() (string, error)
}

// Load builds the Config.
func Load(src Sources) (*Config, error) {
	if src.Getenv == nil {
		src.Getenv = os.Getenv
	}
	if src.HomeDir == nil {
		src.HomeDir = os.UserHomeDir
	}
	dir := src.DataDirFlag
	if dir == "" {
		dir = src.Getenv(EnvHome)
	}
	if dir == "" {
		home, err := src.HomeDir()
		if err != nil {
			return nil, fmt.Errorf("find the home directory for %s (set %s or --data-dir): %w", "~/.braid", EnvHome, err)
		}
		dir = filepath.Join(home, ".braid")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	cfg := &Config{}
	file := src.ConfigFlag
	explicit := file != ""
	if !explicit {
		file = filepath.Join(abs, "config.yaml")
	}
	data, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !explicit:
	case err != nil:
		return nil, fmt.Errorf("read config %s: %w", file, err)
	default:
		if err := yaml.UnmarshalStrict(data, cfg); err != nil {
			return nil, fmt.Errorf("config %s: %w", file, err)
		}
	}
	if err := CheckIsolation(cfg.Isolation); err != nil {
		return nil, fmt.Errorf("config %s: %w", file, err)
	}
	if err := cfg.Limits.Check(); err != nil {
		return nil, fmt.Errorf("config %s: %w", file, err)
	}
	if _, err := cfg.Persistence.TTL(); err != nil {
		return nil, fmt.Errorf("config %s: %w", file, err)
	}
	cfg.DataDir = abs
	cfg.getenv = src.Getenv
	cfg.sources = src
	if err == nil {
		cfg.File = file
	}
	return cfg, nil
}

// CheckIsolation accepts the isolation modes: "" (auto), none, auto and
// required.
func CheckIsolation(mode string) error {
	switch mode {
	case "", "none", "auto", "required":
		return nil
	}
	return fmt.Errorf("isolation %q: use none, auto or required", mode)
}

// ArtifactsDir is the root of the local file artifact repository.
func (c *Config) ArtifactsDir() string { return filepath.Join(c.DataDir, "artifacts") }

// StorePath is the embedded store's file under the data directory.
func (c *Config) StorePath() string { return filepath.Join(c.DataDir, "braid.db") }

// Persistence is the archive's part of the config (Argo's persistence).
type Persistence struct {
	// ArchiveTTL deletes archived workflows that finished longer ago than
	// this: a duration such as 7d, 12h or 90m. "" keeps them for ever.
	ArchiveTTL string `json:"archiveTTL,omitempty"`
}

// TTL is ArchiveTTL as a duration; 0 when it is not set.
func (p Persistence) TTL() (time.Duration, error) {
	if p.ArchiveTTL == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(p.ArchiveTTL)
	if days, ok := strings.CutSuffix(p.ArchiveTTL, "d"); ok && err != nil {
		var n int
		if n, err = strconv.Atoi(days); err == nil {
			d = time.Duration(n) * 24 * time.Hour
		}
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("persistence.archiveTTL %q: use a positive duration such as 7d, 12h or 90m", p.ArchiveTTL)
	}
	return d, nil
}
