// Package kube is braid's Kubernetes store: every Argo object of a
// Kubernetes deployment is a custom resource (argoproj.io/v1alpha1) in the
// kube-apiserver, so `kubectl get wf` works. It satisfies the interfaces
// its consumers declare: controller.Store, controller.WatchStore and
// server.Store (guards in helpers_test.go).
//
// # What it owns
//
//   - Reads. Get, List and Watch are served from client-go shared
//     informers, one per kind over all namespaces, started lazily on the
//     first read of that kind and waited for (synced) then: the controller
//     pays no API read per reconcile. The informers decode straight into
//     the typed objects through a REST client configured with braid's
//     scheme (no generated clientset, no unstructured conversion).
//   - Writes go to the apiserver: Create (POST), Update (PUT), Delete.
//     Workflow status goes through the status subresource (PUT .../status)
//     with the object's resourceVersion: optimistic concurrency, mapped to
//     store.ErrConflict. UpdateWorkflowStatus writes the whole status (an
//     object has no per-node rows; changedNodes is not used) and sets the
//     caller's resourceVersion. Update of a Workflow writes metadata and
//     spec, then the status only if the apiserver's copy differs (two writes
//     at most). Whether the CRD has the subresource is asked through
//     discovery once (again after a 404); without it, status is written with
//     the object.
//   - Read-your-writes. The objects this Store wrote (and deleted) are kept
//     until its informer has caught up, so a Get or List right after a write
//     sees it. resourceVersions are compared as numbers (etcd revisions).
//   - Large status (codec.go). When the nodes' JSON is above
//     Options.CompressAbove (256 KiB) they are written as
//     status.compressedNodes (gzip, then standard base64, of the nodes JSON)
//     with status.nodes empty. When that is still above Options.OffloadAbove
//     (1 MiB) and an Offloader is configured, they are saved through it and
//     the object carries status.offloadNodeStatusVersion only. Reads undo
//     both: the informer expands nodes once as an object enters its cache,
//     so Get returns every node in Status.Nodes and no consumer sees
//     compressedNodes or offloadNodeStatusVersion. Offloaded versions that
//     are no longer current are pruned after Options.OffloadGrace; Delete
//     removes a workflow's.
//   - The PostgreSQL offloader (pgoffload.go, pgx): table
//     braid_offloaded_nodes (uid, version, nodes gzipped JSON, updated_at),
//     created on open; a version is a hash of the nodes JSON.
//   - Semaphore limits in ConfigMaps (synclimits.go): ConfigMapLimits
//     gets, creates (making the ConfigMap when missing), updates and
//     deletes one key of a ConfigMap, as argo-server's sync service does,
//     read-modify-write retried on conflict. Memoization caches are
//     ConfigMaps too (memo.go).
//   - Writes() counts the write requests sent, for the benchmarks.
//
// # Semantics shared with the embedded store
//
// List orders newest first (creationTimestamp, then namespace and name),
// filters by label selector, the fields metadata.name, metadata.namespace
// and status.phase (=, ==, !=), by Name/NameFilter and by creation time,
// and pages with Limit and an opaque Continue token (a position, so new
// objects do not shift pages). Everything is answered from the informer's
// cache, so nothing is filtered server-side. List and Watch give Workflows
// WITHOUT nodes (Status.Nodes nil), as the embedded store does; Get gives
// them all. An Update of a Workflow whose Status.Nodes is nil keeps the
// stored nodes. Watch streams changes from now on (no replay of what
// exists); a watcher that falls Options.WatchBuffer events behind is
// dropped and its channel closed: list and watch again.
//
// # Costs (local single-node cluster; see status_test.go)
//
// 10,000 nodes: 3.75 MB of JSON, 447 KB compressed (base64), written in
// about 0.2 s; the object stays far below etcd's 1.5 MiB request limit.
// A small status write takes about 10 to 35 ms (etcd's fsync).
//
// # Imports
//
// The API types, internal/store, client-go, apimachinery and pgx. It must
// not import the engine, the controller, the runtimes or the server.
package kube
