// Package store holds what every store shares, so that the embedded
// (sqlite/), Kubernetes (kube/) and archive (postgres/) stores give their
// consumers the same values and errors.
//
// # What it owns
//
//   - The vocabulary of a store (store.go): the kinds, Object, ListOptions
//     and ListOrder, watch Events, MemoEntry, SyncLimitRef, and the
//     sentinel errors a store returns (ErrNotFound, ErrAlreadyExists,
//     ErrConflict, ErrInvalid, ErrForbidden, ErrUnavailable).
//   - The archive's options and format (archive.go, archivecodec.go):
//     NameFilter and ArchiveListOptions, and how every archive encodes a
//     workflow (ArchivedSummary, ArchivedNodes, DecodeArchived).
//   - Small rules every store and its callers follow: GenerateName
//     (name.go, metadata.generateName as the Kubernetes API server resolves
//     it), Modify (modify.go, a read-modify-write retried on ErrConflict)
//     and WorkflowGone (gone.go, whether neither the live store nor the
//     archive holds a workflow any more).
//
// The contract the backends share (the archive, the memo caches, the
// semaphore limits) is tested once, in storetest/, which each backend's
// tests run.
//
// The interface a consumer needs is declared by that consumer (the
// controller, the server), never here.
//
// # Must not import
//
// It imports the API types, apimachinery and the standard library only. It
// must not import its implementations (sqlite/, kube/, postgres/), the
// engine, the controller, the runtimes, the executor, the server or the
// CLI: they all sit above it.
package store
