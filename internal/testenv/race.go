//go:build race

package testenv

// Race reports whether the race detector is on. Under it sync.Pool drops
// items, so allocation counts mean nothing, and brute-force walks run
// about ten times slower: tests that measure either ask first.
const Race = true
