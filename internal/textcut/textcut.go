// Package textcut bounds text by bytes without cutting a character in two.
//
// A byte bound on a field (an audit entry's tool, a log line's path, an
// echo of client input) that falls inside a UTF-8 sequence leaves invalid
// UTF-8 behind: PostgreSQL refuses it in a text column, encoding/json
// turns it into U+FFFD (so an exported audit entry would no longer hash to
// what was stored), and a terminal may print garbage. [Prefix] and
// [Shorten] back off to the start of the character instead.
package textcut

import "unicode/utf8"

// Prefix returns the longest prefix of s of at most n bytes that does not
// end inside a UTF-8 sequence: s itself when it is no longer than n. It
// backs off at most [utf8.UTFMax]-1 bytes, so bytes of s that are not
// valid UTF-8 are kept as they are; a negative n is 0.
func Prefix(s string, n int) string {
	n = max(n, 0)
	if len(s) <= n {
		return s
	}
	for i := n; i >= 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i]
		}
	}
	return s[:n]
}

// Shorten is [Prefix] with "…" after a cut: for a message that quotes a
// long value. The result is at most n+3 bytes.
func Shorten(s string, n int) string {
	if p := Prefix(s, n); len(p) < len(s) {
		return p + "…"
	}
	return s
}
