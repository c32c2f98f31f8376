// Package runtime declares what a step runtime does: start a step, kill it,
// report its result, and serve its logs. Implementations live below it:
// local/ runs steps as host processes, kube/ (later) as pods.
//
// The package holds only types and the interface; it imports the API types
// and nothing else of braid.
package runtime
