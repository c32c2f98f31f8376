// Package synclock keeps the locks of Argo's synchronization and the
// controller-wide workflow parallelism, in memory, for one controller.
//
// # What it owns
//
//   - Locks: semaphores (synchronization.semaphores[] and the legacy
//     semaphore) and mutexes (mutexes[] and the legacy mutex), for whole
//     workflows and for template invocations (nodes). A lock is named as
//     Argo names it: "<ns>/ConfigMap/<name>/<key>" for a ConfigMap
//     semaphore, "<ns>/Database/<key>" for a database semaphore or mutex,
//     "<ns>/Mutex/<name>" for a mutex. A holder is "<ns>/<workflow>" (a
//     workflow-level lock) or "<ns>/<workflow>/<node ID>" (a template).
//     A ConfigMap semaphore's limit is read from the configured ConfigMaps,
//     a database semaphore's from the configured database limits, on every
//     attempt; a mutex's is 1. A limit that cannot be read makes the holder
//     wait with a message that says why, never fail.
//   - Throttler: Argo's parallelism and namespaceParallelism, how many
//     workflows run at once, controller-wide and per namespace.
//
// Waiters are served in Argo's order: higher spec.priority first, then the
// older workflow, then the earlier request. A holder asks again on every
// reconcile; when a lock frees, Notify names the workflows whose turn it
// may be, and the controller runs them again. Nothing here blocks.
//
// After a restart the controller rebuilds both from the stored workflows:
// Restore puts back the holders that status.synchronization records, and
// Throttler.Started the workflows already running. Status projects a
// workflow's holdings and waits into its status.synchronization.
//
// It imports only the API types and the standard library; the engine and
// the controller use it through small interfaces.
package synclock
