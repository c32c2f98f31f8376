// Package server must not import the wiring.
package server

import _ "example.com/lintarchdata/internal/app"

// X is used by the tests of the engine.
var X = 1
