// Package app wires braid together: it opens the store, starts the
// runtime, builds the controller, the API server's options, the artifact
// drivers, the archive and the semaphore limits of one deployment, and
// runs them. Everything that decides how the parts fit lives here, once,
// so that braid server, braid controller, braid run and a command's direct
// mode build the same thing the same way.
//
// # What it owns
//
//	OpenEmbedded(ctx, EmbeddedConfig) *Embedded   braid on one machine: SQLite store, local runtime, controller
//	  (*Embedded).Run(ctx, wf, ...)               braid run: one workflow, to its end
//	  (*Embedded).Serve(ctx, Listen)              braid server: the Manager, the cron scheduler, the API
//	StartDirect(ctx, cfg, host) *Direct           the API server in-process on the data directory's store (no controller)
//	OpenKube(ctx, KubeConfig) *Kube               braid on Kubernetes: CRD store, optional offload and archive databases,
//	                                              and, WithController, the pod runtime and the controller
//	  (*Kube).Serve(ctx, Listen, *Election)       braid server --backend kube (driving too with an Election)
//	  (*Kube).Drive(ctx, Election)                braid controller: drive workflows while holding the Lease
//	MakeDataDir, InstallNamespace, ArtifactRepositories   small helpers the CLI shares
//
// # Optional parts are typed fields
//
// What a deployment may lack is a typed field of Embedded or Kube, and nil
// means off: Kube.Archive is nil without an archive database,
// Kube.Offload without an offload database, Kube.Runtime and
// Kube.Controller unless opened WithController. The API server and the
// controller get the optional parts the same way, as typed fields
// (server.Capabilities; controller.Options' Archive, Hooks and MemoPruner),
// set here from what was opened; nothing finds a capability by type
// assertion. The API server reads step logs through server.StepLogs, which
// each runtime implements (logs.go): local.LogFiles on the data directory,
// kuberuntime.PodLogs on the cluster, told here where a gone pod's shipped
// log lies (controller.ShippedLog over the live workflow).
//
// # Who may import it
//
// Only internal/cli and cmd/braid import app: it sits at the top, just
// under the commands. It imports the store, runtime, controller, server,
// artifact and config packages; none of them may import it, and nothing
// else in internal/ or pkg/ may either. Flags and their parsing stay in
// internal/cli, which turns them into EmbeddedConfig, KubeConfig, Listen
// and Election, calls app and prints.
package app
