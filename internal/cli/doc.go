// Package cli holds braid's cobra commands. They mirror the argo CLI: the same
// verbs, the same main flags and the same output formats, so that an Argo
// user's habits carry over.
//
// Each command parses its flags into a value, calls the packages below it
// (spec, and later the server client, controller and engine) and prints. The
// package owns no logic of its own beyond formatting and exit codes, and it
// reads no environment variable outside the command that needs it.
package cli
