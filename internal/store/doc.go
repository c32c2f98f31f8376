// Package store holds what every store shares: kinds, list options, watch
// events and the errors a store returns. The interface a consumer needs is
// declared by that consumer (the controller, the server). Implementations
// live below: sqlite/ (embedded), later kube/ and postgres/.
package store
