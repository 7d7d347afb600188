//go:build !race

package testenv

// Race reports whether the race detector is on (see race.go).
const Race = false
