// Package raw is the artifact driver for inline input artifacts (the `raw` location kind): Load writes
// raw.data to the artifact's path. Raw artifacts are inputs only, so Save and Delete are unsupported.
//
// It imports internal/artifact and pkg/apis/v1alpha1 only.
package raw
