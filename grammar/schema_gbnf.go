package grammar

import (
	"strconv"
	"unicode/utf8"

	"github.com/toolgate/toolgate/grammar/gbnf"
)

// The compiler's gnode trees become gbnf values here, and gbnf's printer
// (Grammar.String) is the only one that writes GBNF text.

// toGBNF lowers the grammar reachable from root into a gbnf.Grammar with
// root named "root". Names come from the rules' hints, made unique in the
// order rules are first reached, so the output is deterministic.
func toGBNF(root *grule) *gbnf.Grammar {
	l := &lowering{names: map[*grule]string{}, used: map[string]bool{}, refs: map[*grule]gbnf.Expr{}}
	l.name(root, "root")
	g := &gbnf.Grammar{}
	for i := 0; i < len(l.order); i++ {
		r := l.order[i]
		g.Rules = append(g.Rules, &gbnf.Rule{Name: l.names[r], Alts: l.alts(r.body)})
	}
	return g
}

type lowering struct {
	refs  map[*grule]gbnf.Expr // one boxed Ref per rule
	names map[*grule]string
	used  map[string]bool
	order []*grule
}

func (l *lowering) name(r *grule, want string) string {
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
		return lowerClass(n.ranges)
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
		return gbnf.Repeat{Expr: sub, Min: n.min, Max: n.max}
	}
	panic("grammar: unknown node")
}

// lowerClass writes a class that covers more than half of the code space
// negated, which is shorter and reads as the intent ([^"\\\x00-\x1F]); a
// range of two code points becomes the two code points.
func lowerClass(rs []crange) gbnf.Class {
	var total int64
	for _, r := range rs {
		total += int64(r.hi - r.lo + 1)
	}
	c := gbnf.Class{}
	if total > utf8.MaxRune/2 {
		rs, c.Negated = negRanges(rs), true
	}
	c.Ranges = make([]gbnf.CharRange, 0, len(rs))
	for _, r := range rs {
		if r.hi == r.lo+1 {
			c.Ranges = append(c.Ranges, gbnf.CharRange{Lo: r.lo, Hi: r.lo}, gbnf.CharRange{Lo: r.hi, Hi: r.hi})
			continue
		}
		c.Ranges = append(c.Ranges, gbnf.CharRange{Lo: r.lo, Hi: r.hi})
	}
	return c
}
