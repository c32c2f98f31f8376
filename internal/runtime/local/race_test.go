//go:build race

package local

// raceEnabled: the race detector multiplies memory use.
const raceEnabled = true
