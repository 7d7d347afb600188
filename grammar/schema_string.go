package grammar

import (
	"encoding/binary"
	"strings"

	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/grammar/internal/charclass"
)

// Strings: lengths, patterns and formats, and JSON string characters.

// bounded returns unit repeated min..max times within llama.cpp's
// repetition limit, reporting what it relaxes.
func (c *compiler) bounded(unit *gnode, min, max int, ptr, minKw, maxKw string) *gnode {
	if min > gbnf.MaxRepetition {
		c.relaxf(ptr, minKw, "%s %d is above the grammar's repetition limit %d; %d is enforced", minKw, min, gbnf.MaxRepetition, gbnf.MaxRepetition)
		min = gbnf.MaxRepetition
	}
	if max > gbnf.MaxRepetition {
		c.relaxf(ptr, maxKw, "%s %d is above the grammar's repetition limit %d; not enforced", maxKw, max, gbnf.MaxRepetition)
		max = -1
	}
	return rep(unit, min, max)
}

// stringNode compiles the string keywords of a flat schema.
func (c *compiler) stringNode(s *jsonValue, ptr string) *gnode {
	minL, maxL := intKeyword(s, "minLength"), intKeyword(s, "maxLength")
	if minL < 0 {
		minL = 0
	}
	if maxL >= 0 && maxL < minL {
		return nNone
	}
	var content *gnode
	lo, hi := 0, -1
	var single *rxNode // the pattern is one repeated character set, anchored
	if pv := s.get("pattern"); pv != nil && pv.kind == jsonString {
		content, lo, hi, single = c.patternContent(pv.s, pointerJoin(ptr))
		if fv := s.get("format"); fv != nil && content != nil {
			c.relaxf(ptr, "format", "format beside pattern: the pattern is enforced, the format is not")
		}
	} else if fv := s.get("format"); fv != nil && fv.kind == jsonString {
		content, lo, hi = c.formatContent(fv.s, ptr)
	}
	if content == nil {
		if maxL < 0 && c.opts.MaxStringLength > 0 {
			maxL = max(c.opts.MaxStringLength, minL)
			c.bound(ptr, "maxLength", maxL)
			return c.share(seq(lit(`"`), c.bounded(ref(c.p.jsonChar), minL, maxL, ptr, "minLength", "maxLength"), lit(`"`)), "string")
		}
		if minL == 0 && maxL < 0 {
			return ref(c.p.str)
		}
		return seq(lit(`"`), c.bounded(ref(c.p.jsonChar), minL, maxL, ptr, "minLength", "maxLength"), lit(`"`))
	}
	if single != nil && single.max < 0 && maxL < 0 && c.opts.MaxStringLength > 0 {
		// ^[set]+$ and the like: the one repetition takes the bound.
		maxL = max(c.opts.MaxStringLength, minL, single.min)
		c.bound(ptr, "maxLength", maxL)
	}
	if minL > 0 || maxL >= 0 {
		within := lo >= minL && (maxL < 0 || (hi >= 0 && hi <= maxL))
		switch {
		case within:
		case single != nil:
			nmin, nmax := single.min, single.max
			if minL > nmin {
				nmin = minL
			}
			if maxL >= 0 && (nmax < 0 || maxL < nmax) {
				nmax = maxL
			}
			if nmax >= 0 && nmax < nmin {
				return nNone
			}
			content = c.bounded(c.charsOf(single.subs[0].ranges), nmin, nmax, ptr, "minLength", "maxLength")
		default:
			if minL > lo {
				c.relaxf(ptr, "minLength", "minLength beside a pattern or format is not enforced")
			}
			if maxL >= 0 && (hi < 0 || hi > maxL) {
				c.relaxf(ptr, "maxLength", "maxLength beside a pattern or format is not enforced")
			}
		}
	}
	return seq(lit(`"`), content, lit(`"`))
}

// charsOf returns a node for one string character whose code point is in
// rs, in the form the JSON encoding writes it: raw, or escaped where JSON
// requires (", \, control characters), plus \/ for '/'.
func (c *compiler) charsOf(rs []crange) *gnode {
	rs = charclass.Normalize(rs)
	if len(rs) == 1 && rs[0].Lo == rs[0].Hi && rs[0].Lo >= 0x20 && !strings.ContainsRune(`"\/`, rs[0].Lo) {
		return lit(string(rs[0].Lo)) // one code point written raw: what the general case below gives
	}
	var keyBuf [64]byte
	key := rangesKey(keyBuf[:0], rs)
	if n, ok := c.chars[string(key)]; ok {
		return n
	}
	var alts []*gnode
	alts = append(alts, class(intersectRanges(rs, rawChars)...))
	if inRanges(rs, '"') {
		alts = append(alts, lit(`\"`))
	}
	if inRanges(rs, '\\') {
		alts = append(alts, lit(`\\`))
	}
	if inRanges(rs, '/') {
		alts = append(alts, lit(`\/`))
	}
	ctrl := intersectRanges(rs, []crange{{Lo: 0, Hi: 0x1F}})
	if len(ctrl) == 1 && ctrl[0].Lo == 0 && ctrl[0].Hi == 0x1F {
		alts = append(alts, seq(lit(`\`), ctrlEscapes()))
	} else {
		for _, r := range ctrl {
			for cp := r.Lo; cp <= r.Hi; cp++ {
				var b strings.Builder
				writeJSONString(&b, string(cp))
				e := b.String()
				alts = append(alts, lit(e[1:len(e)-1]))
			}
		}
	}
	n := alt(alts...)
	if n.op == gAlt {
		n = ref(&grule{hint: "char", body: n})
	}
	if c.chars == nil {
		c.chars = map[string]*gnode{}
	}
	c.chars[string(key)] = n
	return n
}

// rangesKey appends the ranges to dst as a map key: eight bytes a range.
func rangesKey(dst []byte, rs []crange) []byte {
	for _, r := range rs {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(r.Lo))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(r.Hi))
	}
	return dst
}

func inRanges(rs []crange, r rune) bool {
	for _, x := range rs {
		if r >= x.Lo && r <= x.Hi {
			return true
		}
	}
	return false
}

func intersectRanges(a, b []crange) []crange {
	var out []crange
	for _, x := range a {
		for _, y := range b {
			lo, hi := x.Lo, x.Hi
			if y.Lo > lo {
				lo = y.Lo
			}
			if y.Hi < hi {
				hi = y.Hi
			}
			if lo <= hi {
				out = append(out, crange{Lo: lo, Hi: hi})
			}
		}
	}
	return charclass.Normalize(out)
}
