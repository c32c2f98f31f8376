// Package e2e runs the real braid binary against real inputs: Argo's example
// corpus (when ../shared/conformance is present) and the bad inputs braid
// must survive. The binary is built once per test run into a temporary
// directory, or taken from $BRAID_BIN.
package e2e
