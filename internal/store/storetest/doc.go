// Package storetest is the contract every store backend keeps, written
// once: the archive (sqlite, postgres), the memoization cache (sqlite,
// postgres, kube's ConfigMap caches) and the semaphore limits (sqlite,
// postgres, kube's ConfigMap limits). Each backend's tests call Run with a
// Backend that opens its store on fresh storage; Run runs every case whose
// API the store has.
//
// # What it owns
//
//   - Run, Backend and Env (storetest.go): how a backend plugs in, and how
//     a case it does not support is skipped with the reason it gives
//     (Backend.Skip) or because the store lacks the API.
//   - The cases: archive.go, memo.go, synclimits.go, closed.go.
//   - Fixtures the backends' own tests share: Archived, BigWorkflow,
//     Names.
//
// A backend keeps in its own tests only what is its own: how it lays data
// out (compression, index plans), migrations, and behaviour of its kind
// (ConfigMap contents, a closed database file).
//
// # What it must not import
//
// The backends (sqlite/, postgres/, kube/): they import it, in tests.
package storetest
