// Package emissary is what `braid exec emissary -- COMMAND...` does inside
// a step's pod, wrapped around the user's command in the main container:
//
//  1. read the template (ARGO_TEMPLATE, JSON) and the run's settings
//     (BRAID_* variables: protocol.go);
//  2. load the input artifacts (internal/executor.LoadInputs, with the s3,
//     git, http and raw drivers; secrets come from BRAID_SECRET_<NAME>_<KEY>
//     variables that the runtime fills with secretKeyRef);
//  3. stage a script template's source (executor.StageScript) and append its
//     path to the command;
//  4. run the command with stdout and stderr passed through, tee'd into the
//     outputs.result tail (executor.Tail) when asked and into the main log
//     when there is a repository; SIGTERM and SIGINT are forwarded to the
//     child's process group; at the deadline the group is killed;
//  5. read the output parameters, save the output artifacts and ship the
//     main log (<key>/main.log);
//  6. write the result, a Message as JSON, to the termination log
//     (/dev/termination-log), within the kubelet's 4096 bytes: a bigger
//     result is saved whole at <key>/braid-result.json and the message
//     points to it; with no repository the step fails with a message that
//     names the limit;
//  7. exit with the child's exit code.
//
// With ARGO_CONTAINER_NAME set, it then writes the marker
// /var/run/braid/ctr/<name>.done (roles.go). A containerSet's containers
// (BRAID_EMISSARY_ROLE=container) wait for their dependencies' markers, are
// skipped when one did not succeed, are retried in place per the set's
// retryStrategy, and only the one named main loads inputs and reports
// outputs. A sidecar (role sidecar) runs its command until the markers of
// BRAID_STOP_AFTER are all there, then stops it (SIGTERM, SIGKILL after the
// grace) and reports success.
//
// The termination message is the only way back: the emissary needs no API
// credentials, no RBAC and no route to the apiserver, and costs no API
// write. The Kubernetes runtime (internal/runtime/kube) builds the pod and
// reads the Message (protocol.go is the contract between the two).
//
// # Imports
//
// It imports internal/executor, internal/step (the artifact plan),
// internal/artifact and its drivers, internal/config (the secret variable
// names) and the API types.
//
// # Must not import
//
// A runtime, the engine, the controller, the store, the server, the CLI or
// the wiring (internal/app): it runs alone inside a pod, and
// internal/runtime/kube imports it for the protocol.
package emissary
