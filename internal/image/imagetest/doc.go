// Package imagetest writes OCI image layouts and archives for tests: the
// real format, built from files given in the test, so that a test needs no
// registry and no image tool.
//
// It imports the standard library only, and only tests import it.
package imagetest
