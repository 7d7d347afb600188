//go:build race

package discovery_test

// raceEnabled reports that the race detector is on: the dataset tests then
// skip the baseline comparison, which only doubles their time.
const raceEnabled = true
