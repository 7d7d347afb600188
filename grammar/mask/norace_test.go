//go:build !race

package mask

const raceEnabled = false
