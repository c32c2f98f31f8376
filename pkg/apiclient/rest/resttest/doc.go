// Package resttest holds request types shaped like the generated API
// messages (json and protobuf tags, Kubernetes option types), for the tests
// of the REST binding (package rest) and of the server's gateway.
//
// It imports the Kubernetes API types and the standard library only, and
// only tests import it; like all of pkg/, it must not import internal/.
package resttest
