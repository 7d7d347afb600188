package gbnf

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// String prints g as canonical GBNF: one rule per line in the order of
// g.Rules, one space between elements, " | " between alternatives, the
// shortest repetition suffix (* + ? {m} {m,} {m,n}), and escapes only where
// llama.cpp needs them or a character would not be visible. An empty
// alternative prints as "". For a [Grammar] returned by [Parse],
// Parse(g.String()) returns a grammar with the same Rules.
func (g *Grammar) String() string {
	var b []byte
	for _, r := range g.Rules {
		b = append(b, r.Name...)
		b = append(b, " ::= "...)
		b = appendAlts(b, r.Alts)
		b = append(b, '\n')
	}
	return string(b)
}

// The Append functions below write the pieces of String's output one at a
// time, for a caller that prints its own grammar structure straight into a
// buffer (the schema compiler): the escaping lives only here.

// AppendLiteral appends the literal matching the code points of s, quoted
// and escaped as String prints a [Literal] with those Chars (invalid UTF-8 in
// s reads as U+FFFD, as []rune(s) does).
func AppendLiteral(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, r := range s {
		dst = appendChar(dst, r, false)
	}
	return append(dst, '"')
}

// AppendClass appends c as String prints it.
func AppendClass(dst []byte, c Class) []byte {
	dst = append(dst, '[')
	if c.Negated {
		dst = append(dst, '^')
	}
	for i, r := range c.Ranges {
		switch {
		case i == 0 && !c.Negated && r.Lo == '^':
			dst = append(dst, `\x5E`...) // a leading ^ would negate the class
		case r.Lo == '-' && r.Hi == '-' && (i == 0 || i == len(c.Ranges)-1):
			dst = append(dst, '-') // literal at either end of a class
		default:
			dst = appendChar(dst, r.Lo, true)
		}
		if r.Hi != r.Lo {
			dst = append(dst, '-')
			dst = appendChar(dst, r.Hi, true)
		}
	}
	return append(dst, ']')
}

// AppendRepeatSuffix appends the suffix String writes after the expression
// of a [Repeat] with these counts: * + ? {m} {m,} or {m,n}.
func AppendRepeatSuffix(dst []byte, min, max int) []byte {
	switch {
	case min == 0 && max == Unbounded:
		return append(dst, '*')
	case min == 1 && max == Unbounded:
		return append(dst, '+')
	case min == 0 && max == 1:
		return append(dst, '?')
	}
	dst = append(dst, '{')
	dst = strconv.AppendInt(dst, int64(min), 10)
	switch {
	case max == Unbounded:
		dst = append(dst, ',')
	case max != min:
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, int64(max), 10)
	}
	return append(dst, '}')
}

func appendAlts(b []byte, alts []Seq) []byte {
	for i, seq := range alts {
		if i > 0 {
			b = append(b, " | "...)
		}
		if len(seq) == 0 {
			b = append(b, `""`...)
			continue
		}
		for j, e := range seq {
			if j > 0 {
				b = append(b, ' ')
			}
			b = appendExpr(b, e)
		}
	}
	return b
}

func appendExpr(b []byte, e Expr) []byte {
	switch e := e.(type) {
	case Literal:
		b = append(b, '"')
		for _, r := range e.Chars {
			b = appendChar(b, r, false)
		}
		b = append(b, '"')
	case Class:
		b = AppendClass(b, e)
	case Any:
		b = append(b, '.')
	case Ref:
		b = append(b, e.Name...)
	case Group:
		b = append(b, '(')
		b = appendAlts(b, e.Alts)
		b = append(b, ')')
	case Repeat:
		b = appendExpr(b, e.Expr)
		b = AppendRepeatSuffix(b, e.Min, e.Max)
	case Token:
		if e.Negated {
			b = append(b, '!')
		}
		b = append(b, "<["...)
		b = strconv.AppendUint(b, uint64(e.ID), 10)
		b = append(b, "]>"...)
	}
	return b
}

// appendChar writes one code point of a literal or class so that
// llama.cpp's parse_char reads it back unchanged.
func appendChar(b []byte, r rune, inClass bool) []byte {
	switch {
	case r == '\\':
		return append(b, `\\`...)
	case r == '"' && !inClass:
		return append(b, `\"`...)
	case inClass && (r == ']' || r == '['):
		return append(b, '\\', byte(r))
	case inClass && r == '-':
		return append(b, `\x2D`...) // GBNF has no \- escape
	case r == '\n':
		return append(b, `\n`...)
	case r == '\r':
		return append(b, `\r`...)
	case r == '\t':
		return append(b, `\t`...)
	case r < 0x20 || r == 0x7F:
		return appendHex(append(b, `\x`...), uint32(r), 2)
	case r < 0x80:
		return append(b, byte(r))
	case r <= 0xFFFF && (!utf8.ValidRune(r) || !unicode.IsPrint(r)):
		return appendHex(append(b, `\u`...), uint32(r), 4)
	case !unicode.IsPrint(r):
		return appendHex(append(b, `\U`...), uint32(r), 8)
	}
	return utf8.AppendRune(b, r)
}

func appendHex(b []byte, v uint32, digits int) []byte {
	const hexDigits = "0123456789ABCDEF"
	for i := digits - 1; i >= 0; i-- {
		b = append(b, hexDigits[(v>>(4*uint(i)))&0xF])
	}
	return b
}
