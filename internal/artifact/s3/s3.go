package s3

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const (
	// defaultEndpoint is used when an s3 location names no endpoint.
	defaultEndpoint = "s3.amazonaws.com"
	// partSize is the multipart part size: each part is read from the file as it is sent, never buffered.
	partSize = 16 << 20
	// maxAttempts bounds minio-go's retries of one request (a refused connection, a 5xx, SlowDown).
	maxAttempts = 5
	// firstBackoff is the wait after the first failed region lookup; it doubles after each.
	firstBackoff = 100 * time.Millisecond
	// dialTimeout bounds one connection attempt, so that maxAttempts to a silent endpoint end in ~15 s.
	dialTimeout = 3 * time.Second
)

// Driver moves artifacts stored in S3-compatible buckets. It is safe for concurrent use.
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

// conn is one artifact's connection: a client for its endpoint plus the names its errors use.
type conn struct {
	client    *minio.Client
	transport *http.Transport
	art       *v1alpha1.Artifact
	loc       *v1alpha1.S3Artifact
	host      string
	secrets   []string // resolved credentials, scrubbed from every error message
}

// connect checks art's s3 location and builds a client for it.
func (d *Driver) connect(ctx context.Context, art *v1alpha1.Artifact) (*conn, error) {
	if art == nil || art.S3 == nil {
		return nil, fmt.Errorf("s3 driver: artifact %q has no s3 location", artName(art))
	}
	loc := art.S3
	host, secure, err := parseEndpoint(loc.Endpoint, loc.Insecure)
	if err != nil {
		return nil, fmt.Errorf("s3 artifact %q: %w", art.Name, err)
	}
	c := &conn{art: art, loc: loc, host: host}
	if loc.Bucket == "" {
		return nil, c.errorf("no bucket is set")
	}
	if loc.RoleARN != "" {
		return nil, c.errorf("roleARN is %w", artifact.ErrUnsupported)
	}
	if e := loc.EncryptionOptions; e != nil && (e.EnableEncryption || e.KmsKeyID != "" || e.ServerSideCustomerKeySecret != nil) {
		return nil, c.errorf("encryptionOptions are %w", artifact.ErrUnsupported)
	}
	creds, err := d.credentials(ctx, c)
	if err != nil {
		return nil, err
	}
	c.transport, err = d.transport(ctx, c, secure)
	if err != nil {
		return nil, err
	}
	c.client, err = minio.New(host, &minio.Options{
		Creds:        creds,
		Secure:       secure,
		Transport:    c.transport,
		Region:       loc.Region,
		BucketLookup: bucketLookup(loc.AddressingStyle),
		MaxRetries:   maxAttempts,
	})
	if err != nil {
		c.close()
		return nil, c.wrap("connect", err)
	}
	if loc.Region == "" {
		if err := c.lookupRegion(ctx); err != nil {
			c.close()
			return nil, err
		}
	}
	return c, nil
}

// lookupRegion asks for the bucket's region, retrying while the endpoint is unreachable. minio-go asks
// once (and caches the answer) before the first request on a bucket, but never retries that question, so
// braid asks first. Any other failure is left to the operation that follows to report.
func (c *conn) lookupRegion(ctx context.Context) error {
	wait := firstBackoff
	for attempt := 1; ; attempt++ {
		_, err := c.client.GetBucketLocation(ctx, c.loc.Bucket)
		if err == nil || !transient(err) {
			return nil
		}
		if attempt == maxAttempts {
			return c.wrap("reach", err)
		}
		select {
		case <-ctx.Done():
			return c.wrap("reach", errors.Join(err, ctx.Err()))
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// transient: err is a network failure or a server-side error worth another try.
func transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		return resp.StatusCode >= 500 || resp.Code == "SlowDown" || resp.Code == "RequestTimeout"
	}
	var netErr net.Error
	return errors.As(err, &netErr)
}

// close releases the connection's idle sockets.
func (c *conn) close() {
	if c.transport != nil {
		c.transport.CloseIdleConnections()
	}
}

// parseEndpoint returns the host[:port] of endpoint and whether to use TLS. An explicit http:// or
// https:// scheme wins over insecure; otherwise TLS is used unless insecure is true.
func parseEndpoint(endpoint string, insecure *bool) (string, bool, error) {
	secure := insecure == nil || !*insecure
	host := strings.TrimSpace(endpoint)
	switch {
	case host == "":
		host = defaultEndpoint
	case strings.HasPrefix(host, "http://"):
		host, secure = strings.TrimPrefix(host, "http://"), false
	case strings.HasPrefix(host, "https://"):
		host, secure = strings.TrimPrefix(host, "https://"), true
	}
	host = strings.TrimSuffix(host, "/")
	if host == "" || strings.ContainsAny(host, "/?#@ ") {
		return "", false, fmt.Errorf("endpoint %q is not a host[:port]", endpoint)
	}
	return host, secure, nil
}

func bucketLookup(style string) minio.BucketLookupType {
	switch strings.ToLower(style) {
	case "path":
		return minio.BucketLookupPath
	case "virtual", "virtual-hosted", "virtualhosted", "dns":
		return minio.BucketLookupDNS
	}
	return minio.BucketLookupAuto
}

// credentials resolves the location's secret references; with none, it falls back to the environment
// and (with useSDKCreds) instance metadata, and to anonymous requests when those hold nothing either.
func (d *Driver) credentials(ctx context.Context, c *conn) (*credentials.Credentials, error) {
	loc := c.loc
	if loc.AccessKeySecret == nil && loc.SecretKeySecret == nil {
		providers := []credentials.Provider{
			&credentials.EnvAWS{}, &credentials.EnvMinio{}, &credentials.FileAWSCredentials{},
		}
		if loc.UseSDKCreds {
			providers = append(providers, &credentials.IAM{})
		}
		return credentials.NewChainCredentials(providers), nil
	}
	if loc.AccessKeySecret == nil || loc.SecretKeySecret == nil {
		return nil, c.errorf("both accessKeySecret and secretKeySecret must be set, or neither")
	}
	access, err := d.secret(ctx, c, "accessKeySecret", loc.AccessKeySecret)
	if err != nil {
		return nil, err
	}
	secret, err := d.secret(ctx, c, "secretKeySecret", loc.SecretKeySecret)
	if err != nil {
		return nil, err
	}
	token := ""
	if loc.SessionTokenSecret != nil {
		if token, err = d.secret(ctx, c, "sessionTokenSecret", loc.SessionTokenSecret); err != nil {
			return nil, err
		}
	}
	c.secrets = append(c.secrets, access, secret, token)
	return credentials.NewStaticV4(access, secret, token), nil
}

// secret resolves one secret reference; field names it in errors.
func (d *Driver) secret(ctx context.Context, c *conn, field string, sel *apiv1.SecretKeySelector) (string, error) {
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
	return v, nil
}

// transport builds the HTTP transport: a bounded dial timeout, and the caSecret's certificates when set.
func (d *Driver) transport(ctx context.Context, c *conn, secure bool) (*http.Transport, error) {
	tr, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, c.wrap("build the HTTP transport", err)
	}
	tr.DialContext = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
	if c.loc.CASecret == nil || !secure {
		return tr, nil
	}
	pem, err := d.secret(ctx, c, "caSecret", c.loc.CASecret)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM([]byte(pem)) {
		return nil, c.errorf("caSecret %q holds no PEM certificate", c.loc.CASecret.Name)
	}
	tr.TLSClientConfig.RootCAs = pool
	return tr, nil
}

func artName(art *v1alpha1.Artifact) string {
	if art == nil {
		return ""
	}
	return art.Name
}
