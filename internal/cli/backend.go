package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/braidwf/braid/internal/app"
	"github.com/braidwf/braid/internal/server/auth"
	"github.com/braidwf/braid/internal/server/auth/kubeauth"
)

// The backends of braid server and braid controller.
const (
	backendEmbedded = "embedded"
	backendKube     = "kube"
)

// backendFlags choose where workflows are kept and where steps run.
type backendFlags struct {
	backend       string
	kubeconfig    string
	executorImage string
	offloadDSN    string
	archiveDSN    string
	namespaced    bool
	managedNS     string
}

func (b *backendFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&b.backend, "backend", backendEmbedded,
		"embedded (SQLite store, steps as host processes) or kube (CRDs in a Kubernetes cluster, steps as pods)")
	fl.StringVar(&b.kubeconfig, "kubeconfig", "",
		"with --backend kube: the kubeconfig file (default $KUBECONFIG, else the in-cluster config, else ~/.kube/config)")
	fl.StringVar(&b.executorImage, "executor-image", "",
		"with --backend kube: the image holding braid at /bin/braid, copied into every step's pod (default braid:dev)")
	fl.StringVar(&b.offloadDSN, "offload-dsn", "",
		"with --backend kube: a PostgreSQL DSN where node status too large for the Workflow object is kept (default $BRAID_OFFLOAD_DSN)")
	fl.StringVar(&b.archiveDSN, "archive-dsn", "",
		"with --backend kube: a PostgreSQL DSN where completed workflows are archived and the archive is served (default $BRAID_ARCHIVE_DSN; none: no archive)")
	fl.BoolVar(&b.namespaced, "namespaced", false,
		"with --backend kube: watch and serve one namespace only (--managed-namespace), needing only namespaced RBAC")
	fl.StringVar(&b.managedNS, "managed-namespace", "",
		"with --namespaced: the namespace to manage (default the namespace braid runs in, else default)")
}

// namespace is the one namespace a namespaced braid manages, or "" for all.
func (b backendFlags) namespace() string {
	if !b.namespaced {
		return ""
	}
	if b.managedNS != "" {
		return b.managedNS
	}
	return app.InstallNamespace()
}

func (b backendFlags) validate() error {
	switch b.backend {
	case backendEmbedded:
		if b.kubeconfig != "" || b.executorImage != "" || b.offloadDSN != "" || b.archiveDSN != "" || b.namespaced || b.managedNS != "" {
			return errors.New("--kubeconfig, --executor-image, --offload-dsn, --archive-dsn, --namespaced and --managed-namespace need --backend kube")
		}
		return nil
	case backendKube:
		if b.managedNS != "" && !b.namespaced {
			return errors.New("--managed-namespace needs --namespaced")
		}
		return nil
	}
	return fmt.Errorf("--backend %q: want %s or %s", b.backend, backendEmbedded, backendKube)
}

// kubeConfig is what app.OpenKube needs from the flags.
func (b backendFlags) kubeConfig(dataDir, configFile string, log *slog.Logger, withController bool) app.KubeConfig {
	return app.KubeConfig{Kubeconfig: b.kubeconfig, ExecutorImage: b.executorImage, OffloadDSN: b.offloadDSN,
		ArchiveDSN: b.archiveDSN, Namespace: b.namespace(), DataDir: dataDir, ConfigFile: configFile,
		Logger: log, WithController: withController}
}

// kubeAuth builds braid server's auth on a cluster, as argo-server's
// --auth-mode: client (the default) takes each caller's Kubernetes token,
// which the apiserver authenticates (SelfSubjectReview) and authorizes by
// RBAC (SelfSubjectAccessReview) with that token (internal/server/auth/kubeauth);
// server gives every caller the server's own rights (its kubeconfig or
// ServiceAccount).
func (a authFlags) kubeAuth(rc *rest.Config, log *slog.Logger, secure bool) (*serverAuth, error) {
	modes, err := auth.ParseModes(a.modes)
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	if slices.Contains(modes, auth.ModeSSO) {
		return nil, &exitError{code: 2, err: errors.New("--auth-mode sso is not available with --backend kube yet: use client or server")}
	}
	c := auth.Config{Modes: modes, Audit: log.With("component", "audit"),
		TokenHint: "a Kubernetes token, e.g. kubectl create token SERVICEACCOUNT"}
	if slices.Contains(modes, auth.ModeClient) {
		k, err := kubeauth.New(rc, kubeauth.Options{})
		if err != nil {
			return nil, fmt.Errorf("client auth mode: %w", err)
		}
		c.Client, c.Authorizer = k, k
	}
	gk, err := auth.NewGatekeeper(c)
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	web, base, err := a.newUI()
	if err != nil {
		return nil, err
	}
	return &serverAuth{gk: gk, http: auth.HTTPConfig{SecureCookies: secure}, ui: web, baseHref: base,
		browser: auth.BrowserConfig{AllowedHosts: a.allowedHosts, AllowedOrigins: a.allowedOrigins}}, nil
}
