// Package executor holds what runs around a step's main command, as pure
// helpers that every runtime shares: the local runtime calls them around a
// host process, and the emissary (subpackage emissary, `braid exec` inside
// a pod of the Kubernetes runtime) around the user's container.
//
// It owns:
//
//   - The built-in image table (images.go): what an image's entrypoint is
//     and which commands it supplies that a host may lack, because a host
//     runtime cannot pull the image. BuiltinImages knows the images of
//     Argo's examples (argoproj/argosay, docker/whalesay, python, alpine,
//     busybox, ...); users add more from the config file (MergeImageTable).
//     The table's types and lookup are internal/image's (Image and
//     ImageTable are aliases of image.Entry and image.Table).
//   - Command resolution (command.go): ResolveCommand turns a container's
//     command, args and image into the argv to exec, with Kubernetes'
//     $(VAR) expansion, and fails with a message that says what to add to
//     the config file when an executable cannot be found. ResolveEnv builds
//     the container's environment and refuses references to secrets and
//     config maps, which a host does not have.
//   - Script staging (script.go): StageScript writes a script template's
//     source as an executable file and appends its path to the args, as Argo
//     appends /argo/staging/script.
//   - Result capture (result.go): Tail keeps a bounded tail of stdout;
//     Result and CaptureResult trim one trailing newline and keep the last
//     256 KiB, as Argo's CaptureScriptResult does.
//   - Output parameters (outputs.go): ReadOutputParameters reads
//     valueFrom.path files with Argo's rules (one trailing newline trimmed,
//     valueFrom.default when the file is missing, an error otherwise), at
//     most MaxParameter bytes.
//   - Reading outputs as the step saw them (viewfs.go, viewtree.go): an
//     output's path is walked element by element over the step's root (its
//     view's upper layer over the lower one, whiteouts and opaque
//     directories honoured, the private /tmp, the data directory hidden
//     but for the pod directory), links followed inside that root and
//     never out of it, files opened with O_NOFOLLOW in the directory the
//     walk reached; a path that leads into braid's data directory, /proc,
//     /sys or /dev is refused. Directories are listed the same way for
//     packing (an artifact.Tree), their links kept as links.
//   - Input artifacts (inputs.go): LoadInputs places a step's input
//     artifacts at their paths before it starts: raw data inline, any other
//     location through its internal/artifact driver, tarballs unpacked
//     safely, with subPath, mode and optional honoured.
//   - Output artifacts (save.go): SaveOutputs packs (tar+gzip, or none) and
//     saves a step's output artifacts and, with archiveLogs, its main log,
//     after it ends, and returns them with their locations; each artifact
//     is bounded (Paths.Limits), and what a driver opens by path is staged
//     in the scratch directory first.
//   - Locations (location.go): a step.ArtifactPlan is the step's
//     repository as the runtime passes it; key-only locations inherit the
//     repository; output locations default to <key>/<name>.tgz. In the file
//     repository, an s3 location with no endpoint is a folder of it named
//     after the bucket.
//   - Data templates (data.go): RunData lists artifactPaths and applies the
//     transformations (expr) to give the step's result.
//
// # Imports
//
// The package imports the API types, internal/step (the artifact plan),
// internal/image (the image table's types), internal/artifact (the Driver
// interface and archive helpers, never a driver implementation),
// internal/expr (data transformations), golang.org/x/sys/unix (openat,
// fstatat) and the standard library.
//
// # Must not import
//
// A runtime, the engine, the controller, the store, the server, the CLI or
// the wiring (internal/app): runtimes import it, and the controller and
// internal/config must not import it.
package executor
