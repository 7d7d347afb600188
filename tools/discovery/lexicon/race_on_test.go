//go:build race

package lexicon

// raceEnabled: sync.Pool drops items under the race detector, so allocation
// counts are meaningless there.
const raceEnabled = true
