package http

import (
	"context"
	"errors"
	"fmt"
	"io"
	nethttp "net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Driver moves artifacts over HTTP for the workflows of one namespace (where its secrets are read).
type Driver struct {
	secrets   artifact.Secrets
	namespace string
	client    *nethttp.Client
	backoff   artifact.Backoff
}

var _ artifact.Driver = (*Driver)(nil)

// Option changes a Driver made by New.
type Option func(*Driver)

// WithClient sends requests with c instead of the default client.
func WithClient(c *nethttp.Client) Option { return func(d *Driver) { d.client = c } }

// WithBackoff retries transient failures as b says instead of artifact.DefaultBackoff.
func WithBackoff(b artifact.Backoff) Option { return func(d *Driver) { d.backoff = b } }

// New returns a driver reading secrets of namespace through secrets (nil when no artifact uses auth).
func New(secrets artifact.Secrets, namespace string, opts ...Option) *Driver {
	t := nethttp.DefaultTransport.(*nethttp.Transport).Clone()
	t.ResponseHeaderTimeout = time.Minute
	d := &Driver{
		secrets:   secrets,
		namespace: namespace,
		client:    &nethttp.Client{Transport: t},
		backoff:   artifact.DefaultBackoff(),
	}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Load GETs the URL into the file path, writing a temporary file beside it and renaming it into place.
func (d *Driver) Load(ctx context.Context, art *v1alpha1.Artifact, path string) error {
	loc, err := location(art)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return d.fail(art, loc, "load", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return d.fail(art, loc, "load", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	err = artifact.Retry(ctx, d.backoff, func(ctx context.Context) (bool, error) {
		body, retry, err := d.get(ctx, loc)
		if err != nil {
			return retry, err
		}
		defer body.Close()
		if err := restart(tmp); err != nil {
			return false, err
		}
		if _, err := io.Copy(tmp, body); err != nil {
			return true, fmt.Errorf("reading the response: %w", err)
		}
		return false, nil
	})
	if err != nil {
		return d.fail(art, loc, "load", err)
	}
	if err := tmp.Close(); err != nil {
		return d.fail(art, loc, "load", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil { // CreateTemp made it 0600
		return d.fail(art, loc, "load", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return d.fail(art, loc, "load", err)
	}
	return nil
}

// restart empties f for another attempt.
func restart(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.Seek(0, io.SeekStart)
	return err
}

// OpenStream GETs the URL and returns the response body.
func (d *Driver) OpenStream(ctx context.Context, art *v1alpha1.Artifact) (io.ReadCloser, error) {
	loc, err := location(art)
	if err != nil {
		return nil, err
	}
	var body io.ReadCloser
	err = artifact.Retry(ctx, d.backoff, func(ctx context.Context) (bool, error) {
		b, retry, err := d.get(ctx, loc)
		body = b
		return retry, err
	})
	if err != nil {
		return nil, d.fail(art, loc, "open", err)
	}
	return body, nil
}

// Save PUTs the file at path to the URL. A directory must be archived first: a URL holds one file.
func (d *Driver) Save(ctx context.Context, path string, art *v1alpha1.Artifact) error {
	loc, err := location(art)
	if err != nil {
		return err
	}
	info, err := os.Stat(path)
	if err != nil {
		return d.fail(art, loc, "save "+path+" to", err)
	}
	if !info.Mode().IsRegular() {
		return d.fail(art, loc, "save "+path+" to",
			errors.New("an HTTP location holds one file; archive the directory (tar) to save it"))
	}
	err = artifact.Retry(ctx, d.backoff, func(ctx context.Context) (bool, error) {
		return d.put(ctx, loc, path, info.Size())
	})
	if err != nil {
		return d.fail(art, loc, "save "+path+" to", err)
	}
	return nil
}

// Delete is unsupported, as in Argo: an HTTP location may not be one the workflow owns.
func (d *Driver) Delete(ctx context.Context, art *v1alpha1.Artifact) error {
	loc, err := location(art)
	if err != nil {
		return err
	}
	return d.fail(art, loc, "delete", fmt.Errorf("deleting an HTTP artifact is %w", artifact.ErrUnsupported))
}

// get sends one GET and returns the body of a 2xx response.
func (d *Driver) get(ctx context.Context, loc *v1alpha1.HTTPArtifact) (io.ReadCloser, bool, error) {
	req, err := d.request(ctx, nethttp.MethodGet, loc, nil)
	if err != nil {
		return nil, false, err
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, ctx.Err() == nil, err
	}
	if retry, err := check(resp); err != nil {
		return nil, retry, err
	}
	return resp.Body, false, nil
}

// put sends one PUT of the file at path.
func (d *Driver) put(ctx context.Context, loc *v1alpha1.HTTPArtifact, path string, size int64) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	req, err := d.request(ctx, nethttp.MethodPut, loc, f)
	if err != nil {
		return false, err
	}
	req.ContentLength = size
	if size == 0 {
		req.Body = nethttp.NoBody
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return ctx.Err() == nil, err
	}
	if retry, err := check(resp); err != nil {
		return retry, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return false, resp.Body.Close()
}

// request builds a request with the artifact's headers and credentials.
func (d *Driver) request(ctx context.Context, method string, loc *v1alpha1.HTTPArtifact, body io.Reader) (*nethttp.Request, error) {
	req, err := nethttp.NewRequestWithContext(ctx, method, loc.URL, body)
	if err != nil {
		return nil, errors.New("the URL is not valid") // the parse error would repeat the URL, password included
	}
	for _, h := range loc.Headers {
		req.Header.Add(h.Name, h.Value)
	}
	if err := d.auth(ctx, loc.Auth, req); err != nil {
		return nil, err
	}
	return req, nil
}

// auth adds basic auth, and refuses the auth methods braid does not implement.
func (d *Driver) auth(ctx context.Context, a *v1alpha1.HTTPAuth, req *nethttp.Request) error {
	if a == nil {
		return nil
	}
	o := a.OAuth2
	if o.ClientIDSecret != nil || o.ClientSecretSecret != nil || o.TokenURLSecret != nil || len(o.Scopes) > 0 ||
		len(o.EndpointParams) > 0 {
		return fmt.Errorf("http.auth.oauth2 is %w; use basicAuth or headers", artifact.ErrUnsupported)
	}
	if a.ClientCert.ClientCertSecret != nil || a.ClientCert.ClientKeySecret != nil {
		return fmt.Errorf("http.auth.clientCert is %w; use basicAuth or headers", artifact.ErrUnsupported)
	}
	b := a.BasicAuth
	if b.UsernameSecret == nil && b.PasswordSecret == nil {
		return nil
	}
	user, err := d.secret(ctx, "usernameSecret", b.UsernameSecret)
	if err != nil {
		return err
	}
	pass, err := d.secret(ctx, "passwordSecret", b.PasswordSecret)
	if err != nil {
		return err
	}
	req.SetBasicAuth(user, pass)
	return nil
}

// secret reads one basic auth secret ("" when sel is nil).
func (d *Driver) secret(ctx context.Context, field string, sel *apiv1.SecretKeySelector) (string, error) {
	if sel == nil {
		return "", nil
	}
	if d.secrets == nil {
		return "", fmt.Errorf("http.auth.basicAuth.%s: no secret store is configured", field)
	}
	v, err := d.secrets.Secret(ctx, artifact.SecretNamespace(ctx, d.namespace), sel.Name, sel.Key)
	if err != nil {
		return "", fmt.Errorf("http.auth.basicAuth.%s (secret %q key %q): %w", field, sel.Name, sel.Key, err)
	}
	return v, nil
}

// check turns a non-2xx response into an error (closing its body) and says whether to retry it.
func check(resp *nethttp.Response) (bool, error) {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return false, nil
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	msg := fmt.Sprintf("server answered %s", resp.Status)
	if s := strings.TrimSpace(string(snippet)); s != "" {
		msg += ": " + s
	}
	switch {
	case resp.StatusCode == nethttp.StatusNotFound:
		return false, fmt.Errorf("%w: %s", artifact.ErrNotFound, msg)
	case resp.StatusCode >= 500, resp.StatusCode == nethttp.StatusTooManyRequests,
		resp.StatusCode == nethttp.StatusRequestTimeout:
		return true, errors.New(msg)
	}
	return false, errors.New(msg)
}

// location returns art's HTTP location.
func location(art *v1alpha1.Artifact) (*v1alpha1.HTTPArtifact, error) {
	if art == nil || art.HTTP == nil {
		return nil, errors.New("http artifact driver: the artifact has no http location")
	}
	if art.HTTP.URL == "" {
		return nil, fmt.Errorf("artifact %q: http.url is empty", art.Name)
	}
	return art.HTTP, nil
}

// fail wraps err with the artifact and its URL, with any password in the URL redacted.
func (d *Driver) fail(art *v1alpha1.Artifact, loc *v1alpha1.HTTPArtifact, op string, err error) error {
	return fmt.Errorf("artifact %q: %s %s: %w", art.Name, op, redact(loc.URL), err)
}

// redact hides a URL's password.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
