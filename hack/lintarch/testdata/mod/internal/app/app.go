// Package app is the wiring.
package app

// Main does nothing.
func Main() {}
