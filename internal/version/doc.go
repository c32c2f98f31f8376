// Package version holds braid's build information. The Makefile sets the
// values with -ldflags; a plain `go build` reports "dev".
//
// It imports the standard library only and must not import any other braid
// package: the CLI and the server both report it.
package version
