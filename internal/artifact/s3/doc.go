// Package s3 is the artifact driver for S3-compatible object stores (AWS S3, MinIO, ...), built on
// minio-go.
//
// It owns turning an s3 artifact location (endpoint, bucket, key, region, insecure, addressingStyle,
// caSecret, createBucketIfNotPresent and the accessKeySecret/secretKeySecret/sessionTokenSecret
// references) into requests:
//   - Load downloads one object to a file, or, when no object has the key but objects share the prefix
//     key + "/", each of them into a directory (an object key that would land outside it is refused);
//   - Save uploads a file (multipart in 16 MiB parts read straight from the file, so memory stays flat
//     whatever the size), or a directory object by object under key + "/";
//   - OpenStream reads one object; Delete removes the object and everything under key + "/".
//
// Credentials come from the secret references; when none is given, from the environment (AWS_* or
// MINIO_* variables, the AWS credentials file), and, with useSDKCreds, the cloud's instance metadata;
// failing all of those, requests are anonymous. Transient failures (a refused connection, a 5xx, SlowDown)
// are retried by minio-go a bounded number of times with capped exponential backoff; an access error is
// never retried. Errors name the artifact, bucket, key and endpoint and never a credential. A missing key
// wraps artifact.ErrNotFound; roleARN and encryptionOptions wrap artifact.ErrUnsupported.
//
// The subpackage miniotest starts a real MinIO server for tests.
//
// It imports internal/artifact, pkg/apis/v1alpha1 and libraries only.
package s3
