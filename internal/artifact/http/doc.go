// Package http is the artifact driver for the `http` location kind: Load and OpenStream GET the URL, Save
// PUTs the file to it (Argo's HTTP output artifact). It sends the artifact's headers and HTTP basic auth
// from secrets; OAuth2 and client certificates are not supported. A 404 is artifact.ErrNotFound; a 5xx,
// a 429 or a connection failure is retried a bounded number of times. Bodies stream both ways.
//
// It imports internal/artifact and pkg/apis/v1alpha1 only.
package http
