// Package engine must not import the store.
package engine

import (
	"fmt"

	"example.com/lintarchdata/internal/store"
)

// Print prints.
func Print() { fmt.Println(store.Get()) }
