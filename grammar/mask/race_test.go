//go:build race

package mask

// raceEnabled: the race detector slows the brute-force differential
// tenfold, so it walks less under -race (the walks are what it checks, not
// the concurrency).
const raceEnabled = true
