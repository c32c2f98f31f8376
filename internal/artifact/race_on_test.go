//go:build race

package artifact

// raceEnabled: the race detector slows byte-heavy tests about 20-fold, so they move less data.
const raceEnabled = true
