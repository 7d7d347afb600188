package analysis

import (
	"cmp"
	"maps"
	"slices"
)

// suffixSet finds the longest of a fixed list of suffixes that a word ends
// with. The suffixes are bucketed by their last letter and sorted longest
// first, so a lookup compares only the few candidates that can match.
type suffixSet [26][]string

func newSuffixSet(suffixes ...string) *suffixSet {
	var s suffixSet
	for _, x := range suffixes {
		c := x[len(x)-1]
		if c < 'a' || c > 'z' {
			panic("analysis: suffix " + x + " does not end in a-z") // init-time data error
		}
		if !slices.Contains(s[c-'a'], x) {
			s[c-'a'] = append(s[c-'a'], x)
		}
	}
	for i := range s {
		slices.SortStableFunc(s[i], func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	}
	return &s
}

// longest returns the longest suffix of b in the set, or "".
func (s *suffixSet) longest(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	c := b[len(b)-1]
	if c < 'a' || c > 'z' {
		return ""
	}
	for _, x := range s[c-'a'] {
		if len(x) <= len(b) && string(b[len(b)-len(x):]) == x {
			return x
		}
	}
	return ""
}

// suffixRules is a stemmer step: the suffixes it replaces and, for each,
// what replaces it.
type suffixRules struct {
	set *suffixSet
	to  map[string]string
}

func newSuffixRules(to map[string]string) suffixRules {
	return suffixRules{set: newSuffixSet(slices.Collect(maps.Keys(to))...), to: to}
}
