package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	gossh "golang.org/x/crypto/ssh"
	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Driver checks out git repositories as input artifacts. It is safe for concurrent use.
type Driver struct {
	secrets   artifact.Secrets
	namespace string
}

var _ artifact.Driver = (*Driver)(nil)

// New returns a driver that resolves the locations' secret references in namespace through secrets.
// secrets may be nil when no location names a secret.
func New(secrets artifact.Secrets, namespace string) *Driver {
	return &Driver{secrets: secrets, namespace: namespace}
}

// Save is unsupported: a git location is input-only.
func (d *Driver) Save(_ context.Context, _ string, art *v1alpha1.Artifact) error {
	return d.unsupported(art, "save")
}

// OpenStream is unsupported: a git location is a directory, not one stream.
func (d *Driver) OpenStream(_ context.Context, art *v1alpha1.Artifact) (io.ReadCloser, error) {
	return nil, d.unsupported(art, "open as a stream")
}

// Delete is unsupported: braid never writes to a git location, so there is nothing of its own to delete.
func (d *Driver) Delete(_ context.Context, art *v1alpha1.Artifact) error {
	return d.unsupported(art, "delete")
}

func (d *Driver) unsupported(art *v1alpha1.Artifact, op string) error {
	repo := ""
	if art != nil && art.Git != nil {
		repo = redactURL(art.Git.Repo)
	}
	return fmt.Errorf("git artifact %q (%s): %s is %w: git locations are input-only",
		artName(art), repo, op, artifact.ErrUnsupported)
}

// checkout is one Load: the location, its credentials and the names its errors use.
type checkout struct {
	art     *v1alpha1.Artifact
	loc     *v1alpha1.GitArtifact
	auth    transport.AuthMethod
	secrets []string // resolved credentials, scrubbed from every error message
}

// Load clones art's repository into the directory dst and checks out its revision. dst must not exist
// or be empty; on failure, what Load created is removed.
func (d *Driver) Load(ctx context.Context, art *v1alpha1.Artifact, dst string) error {
	if art == nil || art.Git == nil {
		return fmt.Errorf("git driver: artifact %q has no git location", artName(art))
	}
	c := &checkout{art: art, loc: art.Git}
	if strings.TrimSpace(c.loc.Repo) == "" {
		return c.errorf("no repo is set")
	}
	ep, err := transport.NewEndpoint(c.loc.Repo)
	if err != nil {
		return c.errorf("repo is not a git URL: %v", err)
	}
	if c.auth, err = d.authMethod(ctx, c, ep); err != nil {
		return err
	}
	created, err := prepareDir(dst)
	if err != nil {
		return c.errorf("prepare %s: %v", dst, err)
	}
	if err := c.clone(ctx, dst); err != nil {
		cleanDir(dst, created)
		return err
	}
	return nil
}

// authMethod builds the location's credentials from its secret references.
func (d *Driver) authMethod(ctx context.Context, c *checkout, ep *transport.Endpoint) (transport.AuthMethod, error) {
	loc := c.loc
	sshURL := ep.Protocol == "ssh"
	if loc.SSHPrivateKeySecret != nil {
		key, err := d.secret(ctx, c, "sshPrivateKeySecret", loc.SSHPrivateKeySecret)
		if err != nil {
			return nil, err
		}
		user := ep.User
		if user == "" {
			user = "git"
		}
		auth, err := gitssh.NewPublicKeys(user, []byte(key), "")
		if err != nil {
			return nil, c.errorf("sshPrivateKeySecret %q does not hold a usable private key", loc.SSHPrivateKeySecret.Name)
		}
		if loc.InsecureIgnoreHostKey {
			auth.HostKeyCallback = gossh.InsecureIgnoreHostKey() //nolint:gosec // asked for by insecureIgnoreHostKey
		}
		return auth, nil
	}
	if loc.UsernameSecret == nil && loc.PasswordSecret == nil {
		if sshURL && loc.InsecureIgnoreHostKey {
			return nil, c.errorf("insecureIgnoreHostKey needs sshPrivateKeySecret or usernameSecret/passwordSecret")
		}
		return nil, nil
	}
	var user, pass string
	var err error
	if loc.UsernameSecret != nil {
		if user, err = d.secret(ctx, c, "usernameSecret", loc.UsernameSecret); err != nil {
			return nil, err
		}
	}
	if loc.PasswordSecret != nil {
		if pass, err = d.secret(ctx, c, "passwordSecret", loc.PasswordSecret); err != nil {
			return nil, err
		}
	}
	if sshURL {
		if user == "" {
			user = ep.User
		}
		auth := &gitssh.Password{User: user, Password: pass}
		if loc.InsecureIgnoreHostKey {
			auth.HostKeyCallback = gossh.InsecureIgnoreHostKey() //nolint:gosec // asked for by insecureIgnoreHostKey
		}
		return auth, nil
	}
	return &githttp.BasicAuth{Username: user, Password: pass}, nil
}

// secret resolves one secret reference; field names it in errors. The value is remembered for scrubbing.
func (d *Driver) secret(ctx context.Context, c *checkout, field string, sel *apiv1.SecretKeySelector) (string, error) {
	if sel.Name == "" || sel.Key == "" {
		return "", c.errorf("%s needs both a name and a key", field)
	}
	if d.secrets == nil {
		return "", c.errorf("%s: no secret store is configured to resolve secret %q", field, sel.Name)
	}
	v, err := d.secrets.Secret(ctx, artifact.SecretNamespace(ctx, d.namespace), sel.Name, sel.Key)
	if err != nil {
		return "", c.wrap(fmt.Sprintf("resolve %s (secret %q, key %q)", field, sel.Name, sel.Key), err)
	}
	c.secrets = append(c.secrets, v)
	return v, nil
}

// prepareDir makes sure dst is an empty directory and reports whether Load created it.
func prepareDir(dst string) (bool, error) {
	entries, err := os.ReadDir(dst)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return true, os.MkdirAll(dst, 0o755)
	case err != nil:
		return false, err
	case len(entries) > 0:
		return false, errors.New("the destination directory is not empty")
	}
	return false, nil
}

// cleanDir undoes a failed clone: it removes dst when Load created it, else empties it.
func cleanDir(dst string, created bool) {
	if created {
		_ = os.RemoveAll(dst)
		return
	}
	entries, _ := os.ReadDir(dst)
	for _, e := range entries {
		_ = os.RemoveAll(dst + string(os.PathSeparator) + e.Name())
	}
}

func artName(art *v1alpha1.Artifact) string {
	if art == nil {
		return ""
	}
	return art.Name
}
