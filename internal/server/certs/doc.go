// Package certs owns the server certificate of `braid server`: the
// self-signed ECDSA P-256 certificate that Ensure makes (and remakes) under a
// directory, the server tls.Config that Load builds from a certificate and
// key pair, and the SHA-256 fingerprint that the CLI pins instead of
// verifying a chain (see pkg/apiclient/client Options.CertFingerprint).
//
// Files: tls.crt and tls.key, both mode 0600, each written atomically (a
// temporary file in the same directory, then a rename); the directory is
// created 0700.
//
// It uses only the standard library; it must not import other braid
// packages (the CLI imports it for braid server's TLS flags).
package certs
