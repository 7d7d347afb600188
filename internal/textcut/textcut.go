// Package textcut bounds text by bytes without cutting a character in two.
//
// A byte bound on a field (an audit entry's tool, a log line's path, an
// echo of client input) that falls inside a UTF-8 sequence leaves invalid
// UTF-8 behind: PostgreSQL refuses it in a text column, encoding/json
// turns it into U+FFFD (so an exported audit entry would no longer hash to
// what was stored), and a terminal may print garbage. [Prefix],
// [Shorten] and [Ends] back off to the start of the character instead.
package textcut

import (
	"strings"
	"unicode/utf8"
)

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

// endsGap stands between the two ends [Ends] keeps.
const endsGap = " … "

// Ends returns s itself when it is no longer than n bytes, and otherwise
// its first and last parts, about half of n each, joined by " … ", in at
// most n bytes, without cutting a character in two: for a long text whose
// point may be at either end, such as a user's message that pastes a
// document before or after its request. A negative n is 0; an n too small
// for the gap gives [Prefix]'s cut.
func Ends(s string, n int) string {
	n = max(n, 0)
	if len(s) <= n {
		return s
	}
	if n < 2*len(endsGap) {
		return Prefix(s, n)
	}
	head := Prefix(s, (n-len(endsGap))/2)
	room := n - len(endsGap) - len(head)
	i := len(s) - room
	for j := i; j < len(s) && j < i+utf8.UTFMax; j++ {
		if utf8.RuneStart(s[j]) {
			i = j
			break
		}
	}
	return strings.TrimRight(head, " ") + endsGap + strings.TrimLeft(s[i:], " ")
}
