package app

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/file"
	"github.com/braidwf/braid/internal/artifact/git"
	httpart "github.com/braidwf/braid/internal/artifact/http"
	"github.com/braidwf/braid/internal/artifact/raw"
	"github.com/braidwf/braid/internal/artifact/s3"
	"github.com/braidwf/braid/internal/config"
)

// restConfig finds the cluster: --kubeconfig, else $KUBECONFIG, else the
// in-cluster config (a pod's ServiceAccount), else ~/.kube/config.
func restConfig(flag string, getenv func(string) string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	switch {
	case flag != "":
		rules = &clientcmd.ClientConfigLoadingRules{ExplicitPath: flag}
	case getenv(clientcmd.RecommendedConfigPathEnvVar) != "":
		rules.Precedence = filepath.SplitList(getenv(clientcmd.RecommendedConfigPathEnvVar))
	default:
		if rc, err := rest.InClusterConfig(); err == nil {
			return withUserAgent(rc), nil
		}
	}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("find the Kubernetes cluster (--kubeconfig, KUBECONFIG or in-cluster config): %w", err)
	}
	return withUserAgent(rc), nil
}

func withUserAgent(rc *rest.Config) *rest.Config {
	if rc.UserAgent == "" {
		rc.UserAgent = "braid"
	}
	if rc.QPS == 0 {
		rc.QPS, rc.Burst = 200, 400
	}
	return rc
}

// kubeArtifactDrivers are the drivers the controller and the server read
// and delete artifacts with on a cluster; secrets come from the config
// file or environment first, then from Kubernetes Secrets.
func kubeArtifactDrivers(cfg *config.Config, client kubernetes.Interface) *artifact.Drivers {
	sec := &kubeSecrets{client: client, cfg: cfg}
	return &artifact.Drivers{
		File: file.New(cfg.ArtifactsDir()),
		Raw:  raw.New(),
		HTTP: httpart.New(sec, ""),
		S3:   s3.New(sec, ""),
		Git:  git.New(sec, ""),
	}
}

// kubeSecrets resolves secret references: the config file's secrets and
// the environment (config.SecretEnv), then the Secret in the namespace.
type kubeSecrets struct {
	client kubernetes.Interface
	cfg    *config.Config
}

func (s *kubeSecrets) Secret(ctx context.Context, namespace, name, key string) (string, error) {
	v, cerr := s.cfg.Secret(ctx, namespace, name, key)
	if cerr == nil || namespace == "" {
		return v, cerr
	}
	sec, err := s.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("secret %s/%s: %w", namespace, name, err)
	}
	data, ok := sec.Data[key]
	if !ok {
		return "", fmt.Errorf("secret %s/%s has no key %q", namespace, name, key)
	}
	return string(data), nil
}

// configMapValues resolves a semaphore's ConfigMap limit: the config
// file's ConfigMaps first, then the ConfigMap in the cluster.
type configMapValues struct {
	client kubernetes.Interface
	cfg    *config.Config
}

func (c *configMapValues) value(namespace, name, key string) (string, bool) {
	if v, ok := c.cfg.ConfigMapValue(namespace, name, key); ok {
		return v, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cm, err := c.client.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", false
	}
	v, ok := cm.Data[key]
	return v, ok
}
