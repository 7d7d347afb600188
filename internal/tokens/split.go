package tokens

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// o200k_base first splits a text into pieces by a regular expression and
// then encodes each piece on its own, so a text's token count is the sum
// of its pieces' counts. split finds the same pieces as that expression
// (run by github.com/dlclark/regexp2, as tiktoken-go does) by hand, about
// thirty times faster, and Count encodes each piece with the ranks (a
// piece that is itself a token, as most words are, costs one look-up). The
// expression, alternatives tried in order at each position:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	\p{N}{1,3}
//	 ?[^\s\p{L}\p{N}]+[\r\n/]*
//	\s*[\r\n]+
//	\s+(?!\S)
//	\s+
//
// TestSplitMatchesRegexp and FuzzSplit compare the two.

// isUpper is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}].
func isUpper(r rune) bool {
	if r < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z'
	}
	return unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M)
}

// isLower is [\p{Ll}\p{Lm}\p{Lo}\p{M}].
func isLower(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z'
	}
	return unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M)
}

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r)
}

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return unicode.IsNumber(r)
}

// isPrefix is [^\r\n\p{L}\p{N}].
func isPrefix(r rune) bool { return r != '\r' && r != '\n' && !isLetter(r) && !isNumber(r) }

// isSymbol is [^\s\p{L}\p{N}].
func isSymbol(r rune) bool { return !unicode.IsSpace(r) && !isLetter(r) && !isNumber(r) }

// contraction returns the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at rs[i:], or 0.
func contraction(rs []rune, i int) int {
	if i+1 >= len(rs) || rs[i] != '\'' {
		return 0
	}
	lower := func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	switch lower(rs[i+1]) {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if i+2 < len(rs) && lower(rs[i+2]) == 'e' {
			return 3
		}
	case 'l':
		if i+2 < len(rs) && lower(rs[i+2]) == 'l' {
			return 3
		}
	}
	return 0
}

// wordLowerEnd matches [upper]*[lower]+ at rs[s:], backtracking as the
// expression does, and returns its end or -1.
func wordLowerEnd(rs []rune, s int) int {
	u := s
	for u < len(rs) && isUpper(rs[u]) {
		u++
	}
	if u < len(rs) && isLower(rs[u]) {
		w := u + 1
		for w < len(rs) && isLower(rs[w]) {
			w++
		}
		return w
	}
	// Give back upper characters until one is also lower ([\p{Lm}\p{Lo}\p{M}]).
	for k := u - 1; k >= s; k-- {
		if isLower(rs[k]) {
			return k + 1
		}
	}
	return -1
}

// wordUpperEnd matches [upper]+[lower]* at rs[s:] and returns its end or -1.
func wordUpperEnd(rs []rune, s int) int {
	if s >= len(rs) || !isUpper(rs[s]) {
		return -1
	}
	u := s + 1
	for u < len(rs) && isUpper(rs[u]) {
		u++
	}
	for u < len(rs) && isLower(rs[u]) {
		u++
	}
	return u
}

// pieceEnd returns the end of the piece that starts at rs[i], or i when
// no alternative matches there (the character is then in no piece).
func pieceEnd(rs []rune, i int) int {
	n := len(rs)
	for _, word := range []func([]rune, int) int{wordLowerEnd, wordUpperEnd} {
		if isPrefix(rs[i]) && i+1 < n {
			if e := word(rs, i+1); e >= 0 {
				return e + contraction(rs, e)
			}
		}
		if e := word(rs, i); e >= 0 {
			return e + contraction(rs, e)
		}
	}
	if isNumber(rs[i]) {
		e := i + 1
		for e < n && e < i+3 && isNumber(rs[e]) {
			e++
		}
		return e
	}
	s := i
	if rs[s] == ' ' && s+1 < n && isSymbol(rs[s+1]) {
		s++
	}
	if isSymbol(rs[s]) {
		e := s + 1
		for e < n && isSymbol(rs[e]) {
			e++
		}
		for e < n && (rs[e] == '\r' || rs[e] == '\n' || rs[e] == '/') {
			e++
		}
		return e
	}
	if !unicode.IsSpace(rs[i]) {
		return i
	}
	e := i + 1
	for e < n && unicode.IsSpace(rs[e]) {
		e++
	}
	for k := e - 1; k >= i; k-- { // \s*[\r\n]+
		if rs[k] == '\r' || rs[k] == '\n' {
			return k + 1
		}
	}
	if e < n && e-1 > i { // \s+(?!\S)
		return e - 1
	}
	return e // \s+
}

// split calls piece with each piece of text, in order.
func split(rs []rune, piece func(start, end int)) {
	for i := 0; i < len(rs); {
		e := pieceEnd(rs, i)
		if e == i {
			i++
			continue
		}
		piece(i, e)
		i = e
	}
}

// runeBufs holds the scratch of countFast: a text's runes and the byte
// offsets of their boundaries.
var runeBufs = sync.Pool{New: func() any { return new(runeBuf) }}

type runeBuf struct {
	rs  []rune
	off []int
}

// countFast is Count's work once the ranks are loaded.
func countFast(text string) int {
	b := runeBufs.Get().(*runeBuf)
	defer runeBufs.Put(b)
	rs := b.rs[:0]
	for _, r := range text {
		rs = append(rs, r)
	}
	b.rs = rs
	if !utf8.ValidString(text) {
		text = string(rs) // as the regexp sees it: each bad byte a U+FFFD
	}
	// Byte offsets of the rune boundaries, so that a piece is a substring.
	var off []int
	if len(rs) != len(text) {
		off = b.off[:0]
		for i := range text {
			off = append(off, i)
		}
		off = append(off, len(text))
		b.off = off
	}
	n := 0
	split(rs, func(s, e int) {
		if off != nil {
			s, e = off[s], off[e]
		}
		n += enc.count(text[s:e])
	})
	return n
}
