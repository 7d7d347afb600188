package grammar

import (
	"strconv"
	"unicode/utf8"

	"github.com/toolgate/toolgate/grammar/gbnf"
)

// The compiler's gnode trees become GBNF here in one of two ways: printed
// straight into one buffer (printGBNF: every compile that returns text) or
// lowered into gbnf values (toGBNF: for a [gbnf.Matcher]). Both walk the tree
// in the same order and name rules alike, and the printer writes each
// literal, class and repetition count with gbnf's Append functions, so the
// text is byte for byte toGBNF(root).String() (TestPrintGBNFAgreesWithLowering)
// and the escaping lives only in gbnf.

// toGBNF lowers the grammar reachable from root into a [gbnf.Grammar] with
// root named "root". Names come from the rules' hints, made unique in the
// order rules are first reached, so the output is deterministic.
func toGBNF(root *grule) *gbnf.Grammar {
	l := &lowering{ruleNames: newRuleNames(), refs: map[*grule]gbnf.Expr{}}
	l.name(root, "root")
	g := &gbnf.Grammar{}
	for i := 0; i < len(l.order); i++ {
		r := l.order[i]
		g.Rules = append(g.Rules, &gbnf.Rule{Name: l.names[r], Alts: l.alts(r.body)})
	}
	return g
}

type lowering struct {
	ruleNames
	refs map[*grule]gbnf.Expr // one boxed Ref per rule
}

// ruleNames gives each rule reached a unique GBNF name, in the order rules
// are first reached.
type ruleNames struct {
	names map[*grule]string
	used  map[string]bool
	order []*grule
}

// newRuleNames sizes the maps for 16 rules: a tool's grammar names its
// rules without growing them, a five-tool envelope (about 30) grows them
// once, which measured cheaper in time and bytes than sizing for 32.
func newRuleNames() ruleNames {
	return ruleNames{names: make(map[*grule]string, 16), used: make(map[string]bool, 16)}
}

func (l *ruleNames) name(r *grule, want string) string {
	if n, ok := l.names[r]; ok {
		return n
	}
	base := sanitizeRuleName(want)
	n := base
	for i := 2; l.used[n]; i++ {
		n = base + "-" + strconv.Itoa(i)
	}
	l.used[n] = true
	l.names[r] = n
	l.order = append(l.order, r)
	return n
}

// sanitizeRuleName maps a hint to llama.cpp's rule-name alphabet
// [a-zA-Z0-9-].
func sanitizeRuleName(s string) string {
	if ruleNameOK(s) {
		return s // most hints are names already: no copy
	}
	return cleanRuleName(s)
}

// cleanRuleName maps s to the alphabet: each run of other characters
// becomes one dash, at most 40 characters, no dash first or last, "r" when
// nothing is left.
func cleanRuleName(s string) string {
	b := make([]byte, 0, len(s))
	dash := false
	for _, r := range s {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		if ok {
			b = append(b, byte(r))
			dash = false
		} else if !dash && len(b) > 0 {
			b = append(b, '-')
			dash = true
		}
		if len(b) >= 40 {
			break
		}
	}
	for len(b) > 0 && b[len(b)-1] == '-' {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return "r"
	}
	return string(b)
}

// ruleNameOK reports whether cleanRuleName would return s unchanged:
// 1 to 40 characters of [a-zA-Z0-9-], no dash first, last or twice in a
// row.
func ruleNameOK(s string) bool {
	if len(s) == 0 || len(s) > 40 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
		case c == '-' && s[i-1] != '-':
		default:
			return false
		}
	}
	return true
}

// alts lowers n as a list of alternatives.
func (l *lowering) alts(n *gnode) []gbnf.Seq {
	if n.op != gAlt {
		return []gbnf.Seq{l.seq(n)}
	}
	out := make([]gbnf.Seq, len(n.subs))
	for i, s := range n.subs {
		out[i] = l.seq(s)
	}
	return out
}

// seq lowers n as one alternative.
func (l *lowering) seq(n *gnode) gbnf.Seq {
	switch n.op {
	case gEmpty:
		return gbnf.Seq{}
	case gSeq:
		out := make(gbnf.Seq, len(n.subs))
		for i, s := range n.subs {
			out[i] = l.expr(s)
		}
		return out
	}
	return gbnf.Seq{l.expr(n)}
}

// noCodePoint is a class that matches no code point.
var noCodePoint = gbnf.Class{Negated: true, Ranges: []gbnf.CharRange{{Lo: 0, Hi: utf8.MaxRune}}}

// expr lowers n as one element of a sequence.
func (l *lowering) expr(n *gnode) gbnf.Expr {
	switch n.op {
	case gEmpty:
		return gbnf.Group{Alts: []gbnf.Seq{{}}}
	case gNone:
		return noCodePoint
	case gLit:
		return gbnf.Literal{Chars: []rune(n.lit)}
	case gClass:
		return lowerClass(nil, n.ranges)
	case gRef:
		if e, ok := l.refs[n.rule]; ok {
			return e
		}
		var e gbnf.Expr = gbnf.Ref{Name: l.name(n.rule, n.rule.hint)}
		l.refs[n.rule] = e
		return e
	case gSeq, gAlt:
		return gbnf.Group{Alts: l.alts(n)}
	case gRep:
		sub := l.expr(n.subs[0])
		if n.subs[0].op == gRep {
			sub = gbnf.Group{Alts: []gbnf.Seq{{sub}}} // x*? would read as two suffixes
		}
		return gbnf.Repeat{Expr: sub, Min: int(n.min), Max: int(n.max)}
	}
	panic("grammar: unknown node")
}

// lowerClass writes a class that covers more than half of the code space
// negated, which is shorter and reads as the intent ([^"\\\x00-\x1F]); a
// range of two code points becomes the two code points. The ranges are
// appended to dst[:0].
func lowerClass(dst []gbnf.CharRange, rs []crange) gbnf.Class {
	var total int64
	for _, r := range rs {
		total += int64(r.Hi - r.Lo + 1)
	}
	c := gbnf.Class{Ranges: dst[:0]}
	add := func(lo, hi rune) {
		if hi == lo+1 {
			c.Ranges = append(c.Ranges, gbnf.CharRange{Lo: lo, Hi: lo}, gbnf.CharRange{Lo: hi, Hi: hi})
			return
		}
		c.Ranges = append(c.Ranges, gbnf.CharRange{Lo: lo, Hi: hi})
	}
	if total <= utf8.MaxRune/2 {
		for _, r := range rs {
			add(r.Lo, r.Hi)
		}
		return c
	}
	c.Negated = true
	next := rune(0) // the complement of rs (normalized) within [0, utf8.MaxRune]
	for _, r := range rs {
		if r.Lo > next {
			add(next, r.Lo-1)
		}
		next = r.Hi + 1
	}
	if next <= utf8.MaxRune {
		add(next, utf8.MaxRune)
	}
	return c
}

// printGBNF prints the grammar reachable from root as toGBNF(root).String()
// does, straight into one buffer.
func printGBNF(root *grule) string {
	p := &printer{ruleNames: newRuleNames(), buf: make([]byte, 0, 4096)}
	p.name(root, "root")
	for i := 0; i < len(p.order); i++ {
		r := p.order[i]
		p.buf = append(p.buf, p.names[r]...)
		p.buf = append(p.buf, " ::= "...)
		p.alts(r.body)
		p.buf = append(p.buf, '\n')
	}
	return string(p.buf)
}

type printer struct {
	ruleNames
	buf    []byte
	ranges []gbnf.CharRange // scratch for classes
}

// alts prints n as a list of alternatives (lowering.alts).
func (p *printer) alts(n *gnode) {
	if n.op != gAlt {
		p.seq(n)
		return
	}
	for i, s := range n.subs {
		if i > 0 {
			p.buf = append(p.buf, " | "...)
		}
		p.seq(s)
	}
}

// seq prints n as one alternative (lowering.seq).
func (p *printer) seq(n *gnode) {
	switch n.op {
	case gEmpty:
		p.buf = append(p.buf, `""`...)
	case gSeq:
		for i, s := range n.subs {
			if i > 0 {
				p.buf = append(p.buf, ' ')
			}
			p.expr(s)
		}
	default:
		p.expr(n)
	}
}

// expr prints n as one element of a sequence (lowering.expr).
func (p *printer) expr(n *gnode) {
	switch n.op {
	case gEmpty:
		p.buf = append(p.buf, `("")`...)
	case gNone:
		p.buf = gbnf.AppendClass(p.buf, noCodePoint)
	case gLit:
		p.buf = gbnf.AppendLiteral(p.buf, n.lit)
	case gClass:
		c := lowerClass(p.ranges, n.ranges)
		p.ranges = c.Ranges
		p.buf = gbnf.AppendClass(p.buf, c)
	case gRef:
		p.buf = append(p.buf, p.name(n.rule, n.rule.hint)...)
	case gSeq, gAlt:
		p.buf = append(p.buf, '(')
		p.alts(n)
		p.buf = append(p.buf, ')')
	case gRep:
		if n.subs[0].op == gRep {
			p.buf = append(p.buf, '(') // x*? would read as two suffixes
			p.expr(n.subs[0])
			p.buf = append(p.buf, ')')
		} else {
			p.expr(n.subs[0])
		}
		p.buf = gbnf.AppendRepeatSuffix(p.buf, int(n.min), int(n.max))
	default:
		panic("grammar: unknown node")
	}
}
