package grammar

import (
	"sync"
	"time"

	"github.com/dlclark/regexp2"
)

// patternContent translates a pattern into a node for the content of a
// JSON string (quotes excluded). lo and hi bound the number of code points
// it matches (hi < 0: unbounded). single is non-nil when the pattern is
// one character set repeated and anchored at both ends (^[a-z]{2,8}$), so
// that minLength/maxLength can be folded into the repetition. A pattern
// that cannot be parsed yields a nil node and a relaxation.
func (c *compiler) patternContent(pattern, ptr string) (content *gnode, lo, hi int, single *rxNode) {
	ast, p, err := parseRegex(pattern)
	if err != nil {
		c.relaxf(ptr, "pattern", "%v; not enforced", err)
		return nil, 0, -1, nil
	}
	for _, is := range p.issues {
		c.relaxf(ptr, "pattern", "%s: %s", is.construct, is.reason)
	}
	t := &rxTranslator{c: c, groups: p.groups, ptr: ptr}
	branches := []*rxNode{ast}
	if ast.kind == rxAlt {
		branches = ast.subs
	}
	anyChars := star(ref(c.p.jsonChar))
	var alts []*gnode
	lo, hi = -1, 0
	for _, b := range branches {
		items := []*rxNode{b}
		if b.kind == rxCat {
			items = b.subs
		}
		start, end := false, false
		for len(items) > 0 && items[0].kind == rxStart {
			items, start = items[1:], true
		}
		for len(items) > 0 && items[len(items)-1].kind == rxEnd {
			items, end = items[:len(items)-1], true
		}
		body := make([]*gnode, 0, len(items)+2)
		if !start {
			body = append(body, anyChars)
		}
		for _, it := range items {
			body = append(body, t.node(it))
		}
		if !end {
			body = append(body, anyChars)
		}
		alts = append(alts, seq(body...))
		l, h := regexLength(&rxNode{kind: rxCat, subs: items}, p.groups)
		if !start || !end {
			h = -1
		}
		if lo < 0 || l < lo {
			lo = l
		}
		if hi >= 0 && (h < 0 || h > hi) {
			hi = h
		}
		if len(branches) == 1 && start && end && len(items) == 1 && items[0].kind == rxRep && items[0].subs[0].kind == rxSet {
			single = items[0]
		}
	}
	if lo < 0 {
		lo = 0
	}
	return alt(alts...), lo, hi, single
}

type rxTranslator struct {
	c      *compiler
	groups []*rxNode
	ptr    string
	depth  int
}

func (t *rxTranslator) node(n *rxNode) *gnode {
	t.depth++
	defer func() { t.depth-- }()
	if t.depth > 100 {
		return nEmpty
	}
	switch n.kind {
	case rxSet:
		return t.c.charsOf(n.ranges)
	case rxCat:
		subs := make([]*gnode, len(n.subs))
		for i, s := range n.subs {
			subs[i] = t.node(s)
		}
		return seq(subs...)
	case rxAlt:
		subs := make([]*gnode, len(n.subs))
		for i, s := range n.subs {
			subs[i] = t.node(s)
		}
		return alt(subs...)
	case rxRep:
		return t.c.bounded(t.node(n.subs[0]), n.min, n.max, t.ptr, "pattern", "pattern")
	case rxStart, rxEnd:
		t.c.relaxf(t.ptr, "pattern", "an anchor inside the pattern (not at its start or end) is treated as always true")
		return nEmpty
	case rxBackref:
		if n.group-1 < len(t.groups) && t.groups[n.group-1] != nil {
			return t.node(t.groups[n.group-1])
		}
		return nEmpty
	}
	return nEmpty
}

var regexCache sync.Map // pattern → *regexp2.Regexp or error

// regexMatch reports whether s contains a match of the ECMA-262 pattern,
// as JSON Schema's pattern keyword defines.
func regexMatch(pattern, s string) (bool, error) {
	v, ok := regexCache.Load(pattern)
	if !ok {
		re, err := regexp2.Compile(pattern, regexp2.ECMAScript)
		if err != nil {
			regexCache.Store(pattern, err)
			return false, err
		}
		re.MatchTimeout = 100 * time.Millisecond
		v = re
		regexCache.Store(pattern, re)
	}
	switch x := v.(type) {
	case error:
		return false, x
	case *regexp2.Regexp:
		return x.MatchString(s)
	}
	return false, nil
}
