// Package builtins holds the programs of the example images that a host
// lacks, so that Argo's examples run unchanged on one machine:
//
//   - Argosay is the entrypoint of argoproj/argosay:v2, a small sh script
//     with the verbs echo, cat, assert_contains, exit, sleep and sh;
//   - Cowsay prints a message in a speech bubble, as the cowsay of
//     argoproj/argosay:v1 and docker/whalesay does.
//
// They run as the hidden commands `braid argosay` and `braid cowsay`
// (internal/cli), to which the image table of internal/executor points. Each
// takes its arguments and output streams and returns an exit code; neither
// reads the environment or calls os.Exit. The package imports the standard
// library only.
package builtins
