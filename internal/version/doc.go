// Package version holds braid's build information. The Makefile sets the
// values with -ldflags; a plain `go build` reports "dev".
package version
