package gbnf

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String prints g as canonical GBNF: one rule per line in the order of
// g.Rules, one space between elements, " | " between alternatives, the
// shortest repetition suffix (* + ? {m} {m,} {m,n}), and escapes only where
// llama.cpp needs them or a character would not be visible. An empty
// alternative prints as "". For a Grammar returned by Parse,
// Parse(g.String()) returns a grammar with the same Rules.
func (g *Grammar) String() string {
	var b strings.Builder
	for _, r := range g.Rules {
		b.WriteString(r.Name)
		b.WriteString(" ::= ")
		gbnfWriteAlts(&b, r.Alts)
		b.WriteByte('\n')
	}
	return b.String()
}

func gbnfWriteAlts(b *strings.Builder, alts []Seq) {
	for i, seq := range alts {
		if i > 0 {
			b.WriteString(" | ")
		}
		if len(seq) == 0 {
			b.WriteString(`""`)
			continue
		}
		for j, e := range seq {
			if j > 0 {
				b.WriteByte(' ')
			}
			gbnfWriteExpr(b, e)
		}
	}
}

func gbnfWriteExpr(b *strings.Builder, e Expr) {
	switch e := e.(type) {
	case Literal:
		b.WriteByte('"')
		for _, r := range e.Chars {
			gbnfWriteChar(b, r, false)
		}
		b.WriteByte('"')
	case Class:
		b.WriteByte('[')
		if e.Negated {
			b.WriteByte('^')
		}
		for i, r := range e.Ranges {
			switch {
			case i == 0 && !e.Negated && r.Lo == '^':
				b.WriteString(`\x5E`) // a leading ^ would negate the class
			case r.Lo == '-' && r.Hi == '-' && (i == 0 || i == len(e.Ranges)-1):
				b.WriteByte('-') // literal at either end of a class
			default:
				gbnfWriteChar(b, r.Lo, true)
			}
			if r.Hi != r.Lo {
				b.WriteByte('-')
				gbnfWriteChar(b, r.Hi, true)
			}
		}
		b.WriteByte(']')
	case Any:
		b.WriteByte('.')
	case Ref:
		b.WriteString(e.Name)
	case Group:
		b.WriteByte('(')
		gbnfWriteAlts(b, e.Alts)
		b.WriteByte(')')
	case Repeat:
		gbnfWriteExpr(b, e.Expr)
		switch {
		case e.Min == 0 && e.Max == Unbounded:
			b.WriteByte('*')
		case e.Min == 1 && e.Max == Unbounded:
			b.WriteByte('+')
		case e.Min == 0 && e.Max == 1:
			b.WriteByte('?')
		case e.Max == Unbounded:
			b.WriteString("{" + strconv.Itoa(e.Min) + ",}")
		case e.Min == e.Max:
			b.WriteString("{" + strconv.Itoa(e.Min) + "}")
		default:
			b.WriteString("{" + strconv.Itoa(e.Min) + "," + strconv.Itoa(e.Max) + "}")
		}
	case Token:
		if e.Negated {
			b.WriteByte('!')
		}
		b.WriteString("<[" + strconv.FormatUint(uint64(e.ID), 10) + "]>")
	}
}

// gbnfWriteChar writes one code point of a literal or class so that llama.cpp's
// parse_char reads it back unchanged.
func gbnfWriteChar(b *strings.Builder, r rune, inClass bool) {
	switch {
	case r == '\\':
		b.WriteString(`\\`)
	case r == '"' && !inClass:
		b.WriteString(`\"`)
	case inClass && (r == ']' || r == '['):
		b.WriteByte('\\')
		b.WriteRune(r)
	case inClass && r == '-':
		b.WriteString(`\x2D`) // GBNF has no \- escape
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\r':
		b.WriteString(`\r`)
	case r == '\t':
		b.WriteString(`\t`)
	case r < 0x20 || r == 0x7F:
		b.WriteString(`\x`)
		gbnfWriteHex(b, uint32(r), 2)
	case r < 0x80:
		b.WriteByte(byte(r))
	case r <= 0xFFFF && (!utf8.ValidRune(r) || !unicode.IsPrint(r)):
		b.WriteString(`\u`)
		gbnfWriteHex(b, uint32(r), 4)
	case !unicode.IsPrint(r):
		b.WriteString(`\U`)
		gbnfWriteHex(b, uint32(r), 8)
	default:
		b.WriteRune(r)
	}
}

func gbnfWriteHex(b *strings.Builder, v uint32, digits int) {
	const hexDigits = "0123456789ABCDEF"
	for i := digits - 1; i >= 0; i-- {
		b.WriteByte(hexDigits[(v>>(4*uint(i)))&0xF])
	}
}
