//go:build !amd64

package local

// enterCode is the trampoline's machine code (enter_amd64.go); none here:
// steps are forked into user namespaces of their own instead.
var enterCode []byte
