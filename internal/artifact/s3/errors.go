package s3

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/braidwf/braid/internal/artifact"
)

// opError is a driver error: a message naming the artifact and its location (with any credential
// scrubbed out) over the error chain callers test with errors.Is.
type opError struct {
	msg string
	err error
}

func (e *opError) Error() string { return e.msg }
func (e *opError) Unwrap() error { return e.err }

// where names the location: s3://bucket/key at endpoint.
func (c *conn) where() string {
	return fmt.Sprintf("s3://%s/%s at %s", c.loc.Bucket, c.loc.Key, c.host)
}

// errorf reports a problem with the location itself (nothing was sent).
func (c *conn) errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return c.newError(fmt.Sprintf("s3 artifact %q (%s): %s", c.art.Name, c.where(), err), err)
}

// wrap reports a failed operation, with a hint for the common causes.
func (c *conn) wrap(op string, err error) error {
	return c.newError(fmt.Sprintf("s3 artifact %q: %s %s: %s%s", c.art.Name, op, c.where(), hint(err), err), err)
}

// notFound reports an empty location; the error wraps artifact.ErrNotFound.
func (c *conn) notFound(op string, err error) error {
	msg := fmt.Sprintf("s3 artifact %q: %s %s: no object has this key, and none is under %q",
		c.art.Name, op, c.where(), dirPrefix(c.loc.Key))
	if err != nil {
		return c.newError(msg, fmt.Errorf("%w: %w", artifact.ErrNotFound, err))
	}
	return c.newError(msg, artifact.ErrNotFound)
}

func (c *conn) newError(msg string, err error) error {
	for _, s := range c.secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "***")
		}
	}
	return &opError{msg: msg, err: err}
}

// s3Code is the S3 error code of err ("NoSuchKey", "AccessDenied", ...), or "".
func s3Code(err error) string {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		return resp.Code
	}
	return ""
}

func isNoSuchKey(err error) bool {
	code := s3Code(err)
	return code == minio.NoSuchKey || code == "NotFound"
}

// hint says what an error most likely means, or "".
func hint(err error) string {
	switch s3Code(err) {
	case minio.AccessDenied, minio.InvalidAccessKeyID, minio.SignatureDoesNotMatch, "InvalidToken",
		"ExpiredToken":
		return "access denied (check accessKeySecret/secretKeySecret and the bucket's policy): "
	case minio.NoSuchBucket:
		return "the bucket does not exist (set createBucketIfNotPresent to create it on save): "
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return fmt.Sprintf("cannot reach the endpoint (gave up after %d attempts): ", maxAttempts)
	}
	return ""
}
