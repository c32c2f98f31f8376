package emissary

import (
	"context"
	"fmt"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/git"
	httpart "github.com/braidwf/braid/internal/artifact/http"
	"github.com/braidwf/braid/internal/artifact/raw"
	"github.com/braidwf/braid/internal/artifact/s3"
	"github.com/braidwf/braid/internal/config"
)

// envSecrets resolves secret references from the environment, where the
// Kubernetes runtime puts each one the step needs (a secretKeyRef env var
// named config.SecretEnv(name, key)).
type envSecrets func(string) string

// Secret returns the value of BRAID_SECRET_<NAME>_<KEY>.
func (e envSecrets) Secret(_ context.Context, _, name, key string) (string, error) {
	env := config.SecretEnv(name, key)
	if v := e(env); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("secret %q has no key %q in the pod (%s is not set)", name, key, env)
}

// Drivers are the artifact drivers of a pod: s3, git, http and raw, with
// secrets from the environment. The file repository is the controller's
// local directory and cannot be reached from a pod.
func Drivers(getenv func(string) string) *artifact.Drivers {
	sec := envSecrets(getenv)
	return &artifact.Drivers{
		S3:   s3.New(sec, ""),
		Git:  git.New(sec, ""),
		HTTP: httpart.New(sec, ""),
		Raw:  raw.New(),
	}
}
