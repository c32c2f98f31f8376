//go:build race

package sqlite

const raceEnabled = true
