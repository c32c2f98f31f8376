// Package ui serves braid's web UI: the files ui/ builds into dist/
// (committed, and embedded here, so that building braid needs only Go),
// with index.html for every page's URL and its <base href> set to the
// server's --base-href.
//
// It owns the static files and their HTTP caching, nothing else: the UI
// talks to the server only through the public API, so this package must
// not import the server, the store or the engine.
package ui
