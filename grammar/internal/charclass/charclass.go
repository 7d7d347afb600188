// Package charclass holds the one definition of a character class's
// normal form, which package gbnf's matcher and package grammar's schema
// compiler both build on: the class's code points as inclusive ranges,
// sorted, none empty and no two overlapping or adjacent.
//
// The functions take any range type shaped as gbnf.CharRange is
// (struct{ Lo, Hi rune }), so that this package needs neither of its users.
package charclass

import (
	"cmp"
	"slices"
	"unicode/utf8"
)

// Range is an inclusive range of code points, Lo to Hi: gbnf.CharRange
// and any type with its shape.
type Range interface{ ~struct{ Lo, Hi rune } }

// span is the shape every [Range] converts to and from.
type span = struct{ Lo, Hi rune }

// Normal reports whether rs is already in normal form.
func Normal[R Range](rs []R) bool {
	for i, r := range rs {
		s := span(r)
		if s.Lo > s.Hi || i > 0 && s.Lo <= span(rs[i-1]).Hi+1 {
			return false
		}
	}
	return true
}

// Normalize returns rs in normal form: rs itself when it already is one,
// else a new slice. rs is not modified.
func Normalize[R Range](rs []R) []R {
	if Normal(rs) {
		return rs
	}
	out := make([]R, 0, len(rs))
	for _, r := range rs {
		if s := span(r); s.Lo <= s.Hi {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b R) int { return cmp.Compare(span(a).Lo, span(b).Lo) })
	merged := out[:0]
	for _, r := range out {
		s := span(r)
		if n := len(merged); n > 0 && s.Lo <= span(merged[n-1]).Hi+1 {
			last := span(merged[n-1])
			merged[n-1] = R(span{Lo: last.Lo, Hi: max(last.Hi, s.Hi)})
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// Complement returns, in normal form, the code points in [0, utf8.MaxRune]
// that rs does not hold. It is always a new slice.
func Complement[R Range](rs []R) []R {
	var out []R
	next := rune(0)
	for _, r := range Normalize(rs) {
		s := span(r)
		if s.Lo > next {
			out = append(out, R(span{Lo: next, Hi: s.Lo - 1}))
		}
		next = s.Hi + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, R(span{Lo: next, Hi: utf8.MaxRune}))
	}
	return out
}
