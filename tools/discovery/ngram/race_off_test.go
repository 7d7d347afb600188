//go:build !race

package ngram

const raceEnabled = false
