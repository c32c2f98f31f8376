// Package store is a leaf of the layering.
package store

// Get returns one.
func Get() int { return 1 }
