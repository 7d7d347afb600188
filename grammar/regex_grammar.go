package grammar

import (
	"errors"
	"strings"

	"github.com/toolgate/toolgate/grammar/gbnf"
)

// patternContent translates a pattern into a node for the content of a
// JSON string (quotes excluded). lo and hi bound the number of code points
// it matches (hi < 0: unbounded). single is non-nil when the pattern is
// one character set repeated and anchored at both ends (^[a-z]{2,8}$), so
// that minLength/maxLength can be folded into the repetition. A pattern
// that cannot be parsed yields a nil node and a relaxation.
func (c *compiler) patternContent(pattern, ptr string) (content *gnode, lo, hi int, single *rxNode) {
	if r, ok := c.contents[pattern]; ok {
		return r.content, r.lo, r.hi, r.single
	}
	reported := c.relaxCalls
	content, lo, hi, single = c.translatePattern(pattern, ptr)
	if c.relaxCalls == reported { // nothing reported at ptr: the same at any pointer
		if c.contents == nil {
			c.contents = map[string]patternResult{}
		}
		c.contents[pattern] = patternResult{content, lo, hi, single}
	}
	return content, lo, hi, single
}

// patternResult is a translated pattern, kept for the pattern's next use
// in the same schema (several properties often share one).
type patternResult struct {
	content *gnode
	lo, hi  int
	single  *rxNode
}

// translatePattern is patternContent without the reuse.
func (c *compiler) translatePattern(pattern, ptr string) (content *gnode, lo, hi int, single *rxNode) {
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
		t.c.relaxf(t.ptr, "pattern", "the pattern nests more than 100 levels; the deeper part is not enforced")
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

// nameMatcher decides whether a property name matches an ECMA-262
// pattern: the pattern compiled as a string schema by this package's own
// translation and run by the GBNF matcher. The decision is static and
// bounded (no backtracking engine, no clock): exact is false when the
// translation relaxed something (lookaround, backreferences, counts above
// the repetition limit) or the pattern admits no string, and then the
// caller must not trust the answer.
type nameMatcher struct {
	m     *gbnf.Matcher // nil when !exact
	exact bool
}

// maxMatchedNameBytes bounds the names matched against a pattern; a longer
// name is undecided (a property name in a schema is rarely longer than 64).
const maxMatchedNameBytes = 1024

// nameMatches reports whether name matches pattern as patternProperties
// (and pattern on a string const or enum value) use it: the pattern is
// unanchored. known is false when the compiler cannot decide it exactly;
// nameMatches then records a relaxation at ptr for keyword, and the
// caller treats the name as not matching (the gateway's validator still
// decides).
func (c *compiler) nameMatches(pattern, name, ptr, keyword string) (match, known bool) {
	nm, ok := c.patterns[pattern]
	if !ok {
		nm = c.compileNameMatcher(pattern)
		if c.patterns == nil {
			c.patterns = map[string]*nameMatcher{}
		}
		c.patterns[pattern] = nm
	}
	if nm.exact && len(name) <= maxMatchedNameBytes {
		var b strings.Builder
		writeJSONString(&b, name)
		nm.m.Reset()
		if _, err := nm.m.WriteString(b.String()); err == nil {
			return nm.m.Accepts(), true
		} else if re := (*gbnf.RejectError)(nil); errors.As(err, &re) && !errors.Is(err, gbnf.ErrTooManyStacks) {
			return false, true
		}
	}
	c.relaxf(ptr, keyword, "whether %q matches the pattern %q cannot be decided exactly here; treated as not matching", name, pattern)
	return false, false
}

func (c *compiler) compileNameMatcher(pattern string) *nameMatcher {
	var b strings.Builder
	b.WriteString(`{"type":"string","pattern":`)
	writeJSONString(&b, pattern)
	b.WriteString(`}`)
	doc, err := decodeJSON([]byte(b.String()))
	if err != nil {
		return &nameMatcher{}
	}
	sub := newCompiler(doc, Options{Compact: true})
	root := sub.compileRoot()
	if sub.fatal != nil || len(sub.relax) > 0 || root.body.op == gNone {
		return &nameMatcher{}
	}
	m, err := gbnf.NewMatcher(toGBNF(root))
	if err != nil {
		return &nameMatcher{}
	}
	return &nameMatcher{m: m, exact: true}
}
