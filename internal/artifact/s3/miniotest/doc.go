// Package miniotest starts a real MinIO server for tests: the binary hack/minio.sh installs into
// bin/tools/minio, on 127.0.0.1 with a free port, random root credentials and a temporary data directory,
// stopped by its PID.
//
// A package's TestMain calls Main. It exports the server through the BRAID_TEST_S3_* environment
// variables, which tests read with FromEnv (and skip when they are absent). When those variables are
// already set (`eval "$(make minio-up)"`), Main uses that server instead of starting one. When the binary
// is missing, Main fails the package if BRAID_REQUIRE_MINIO is set (make test sets it, so CI never skips
// silently) and otherwise lets the tests skip.
//
// It imports the standard library only.
package miniotest
