package gbnf

import (
	"slices"
	"unicode"
)

// What a token mask needs from a Matcher beyond Advance, Mark and Rewind: a
// comparable key of the position (to cache a mask per position) and how
// far a run of code points of one class surely goes from here (to admit,
// at once, every token made only of such code points, as inside a long
// JSON string).

// State is a comparable key of a Matcher's position: two positions of the
// same [Matcher] with equal States accept exactly the same continuations, so
// anything computed from one (a token mask) holds for the other. A State is
// meaningful only for the Matcher that returned it; after the Matcher
// rebuilds its bounded caches, its new States never equal the old ones.
type State struct {
	epoch     uint32
	set       int32
	pn, pneed int8
	plo, phi  rune
}

// State returns the key of the current position.
func (m *Matcher) State() State {
	if m.pn == 0 { // the partial fields are stale between code points
		return State{epoch: m.epoch, set: m.cur}
	}
	return State{epoch: m.epoch, set: m.cur, pn: int8(m.pn), pneed: int8(m.pneed), plo: m.plo, phi: m.phi}
}

// A CodeRun is a set of code points that [Matcher.Run] measures runs of,
// prepared once by [NewCodeRun]. It is immutable and may be shared by
// Matchers of any grammar and by goroutines.
type CodeRun struct {
	class gbnfClass
	rep   rune // the smallest member: its transition stands for all of them
	empty bool
}

// NewCodeRun prepares the code points of c (a negated [Class] is its
// complement over U+0000..U+10FFFF).
func NewCodeRun(c Class) *CodeRun {
	r := &CodeRun{class: newGBNFClass(c.Negated, c.Ranges)}
	if len(r.class.ranges) == 0 {
		r.empty = true
	} else {
		r.rep = r.class.ranges[0].Lo
	}
	return r
}

type runKey struct {
	r   *CodeRun
	set int32
}

// runFit is what is known of a set's run: at least n code points, exactly
// n when exact.
type runFit struct {
	n     uint16
	exact bool
	next  int32 // the set after one member, when n > 0
}

// maxRunLimit bounds Run's limit (a token is rarely longer than a few
// dozen code points).
const maxRunLimit = 1 << 12

// Run returns n, 0 <= n <= limit, such that every string of at most n code
// points of r is accepted from the current position, code point by code
// point, whatever members of r they are: feeding any such string's bytes
// with Advance succeeds. Run does not move the [Matcher] and does not check
// what may follow the run. It returns 0 when it cannot tell: in the middle
// of a code point, or where members of r lead to different positions (some
// parse stack takes some but not all of them). The answers are cached per
// position, so asking again along a run costs a lookup.
func (m *Matcher) Run(r *CodeRun, limit int) int {
	if m.pn != 0 || r.empty || limit <= 0 {
		return 0
	}
	limit = min(limit, maxRunLimit)
	if m.runs == nil {
		m.runs = map[runKey]runFit{}
	}
	// Walk forward to a set whose fit is known well enough, then fill in
	// the sets passed on the way back. The walk goes up to twice the limit,
	// so that asking again from the next limit positions of the run (as a
	// token mask does, a few code points further each time) finds enough
	// known: two steps per position, amortised.
	walk := min(2*limit, maxRunLimit)
	path := m.runPath[:0]
	set := m.cur
	n, exact := 0, false
	for {
		if f, ok := m.runs[runKey{r, set}]; ok && (f.exact || int(f.n) >= limit-len(path)) {
			n, exact = int(f.n), f.exact
			break
		}
		if len(path) >= walk {
			break // at least 0 more from set: enough for limit
		}
		next, ok := m.runStep(r, set)
		if !ok {
			m.runs[runKey{r, set}] = runFit{0, true, -1}
			exact = true
			break
		}
		path = append(path, set)
		set = next
	}
	for i := len(path) - 1; i >= 0; i-- {
		if n++; n > 0xFFFF {
			n, exact = 0xFFFF, false
		}
		m.runs[runKey{r, path[i]}] = runFit{uint16(n), exact, set}
		set = path[i]
	}
	m.runPath = path
	return min(n, limit)
}

// RunAllowed returns the union of what [Matcher.Allowed] would return at
// each position a run of r passes through, from here (before any of it)
// to after n code points of it, whatever members they are: a byte outside
// it cannot follow any run of at most n members. ok is false, and nothing
// is returned, when Run(r, n) < n.
func (m *Matcher) RunAllowed(r *CodeRun, n int) (all ByteSet, ok bool) {
	if m.Run(r, n) < n {
		return ByteSet{}, false
	}
	set := m.cur
	for k := 0; ; k++ {
		a := m.allowedOf(set)
		all.union(&a)
		if k == n {
			return all, true
		}
		if f, ok := m.runs[runKey{r, set}]; ok && f.n > 0 {
			set = f.next
		} else {
			set, _ = m.runStep(r, set)
		}
	}
}

// runStep returns the set after any one member of r from set, or false
// when some member is refused or members lead to different sets.
func (m *Matcher) runStep(r *CodeRun, set int32) (int32, bool) {
	takes := false
	for _, s := range m.stacksOf(set) {
		if s < 0 {
			continue
		}
		in := m.prog.code[m.nodes[s].pos]
		if in.op != gbnfTerm {
			continue // a token reference matches no text
		}
		switch classRelation(&m.prog.classes[in.arg], &r.class) {
		case relSuperset:
			takes = true
		case relPartial:
			return 0, false
		}
	}
	if !takes {
		return 0, false
	}
	next := m.transition(set, r.rep)
	return next, next >= 0
}

// transition returns the set after code point c from set through the
// Matcher's caches, -1 when c is refused, -2 when the result would be too
// large.
func (m *Matcher) transition(set int32, c rune) int32 {
	if c < 0x80 {
		if known := m.sets[set].lookup(byte(c)); known != 0 {
			return known - 1
		}
		next := m.step(set, c)
		if next != -2 {
			m.sets[set].remember(byte(c), next+1)
		}
		return next
	}
	// Inside a JSON string every code point past ASCII (or every one of a
	// few stretches) leads to the same set: keyed by each code point, the
	// cache would fill up with thousands of equal transitions on a large
	// vocabulary's walk and be rebuilt mid-walk.
	c = m.stretchOf(set, c)
	key := uint64(set)<<32 | uint64(c)
	if next, ok := m.cpTrans[key]; ok {
		return next
	}
	next := m.step(set, c)
	if next != -2 {
		if m.cpTrans == nil {
			m.cpTrans = map[uint64]int32{}
		}
		m.cpTrans[key] = next
	}
	return next
}

// stretchOf returns the first code point of the stretch of set's
// gbnfSet.wide that holds c (c >= 0x80), working the stretches out on
// first use: where each terminal takes all code points or none, any one
// stands for the others.
func (m *Matcher) stretchOf(set int32, c rune) rune {
	w := m.sets[set].wide
	if w == nil {
		w = []rune{0x80}
		for _, s := range m.stacksOf(set) {
			if s < 0 {
				continue
			}
			in := m.prog.code[m.nodes[s].pos]
			if in.op != gbnfTerm {
				continue
			}
			for _, r := range m.prog.classes[in.arg].ranges {
				if r.Hi >= 0x80 {
					w = append(w, max(r.Lo, 0x80))
					if r.Hi < unicode.MaxRune {
						w = append(w, r.Hi+1)
					}
				}
			}
		}
		slices.Sort(w)
		w = slices.Compact(w)
		m.sets[set].wide = w
	}
	i, found := slices.BinarySearch(w, c)
	if !found {
		i--
	}
	return w[i]
}

type relation uint8

const (
	relDisjoint relation = iota
	relSuperset
	relPartial
)

// classRelation tells whether t holds all of c, none of it, or a part.
func classRelation(t, c *gbnfClass) relation {
	all, none := true, true
	i := 0
	for _, cr := range c.ranges {
		lo := cr.Lo
		for lo <= cr.Hi {
			for i < len(t.ranges) && t.ranges[i].Hi < lo {
				i++
			}
			if i == len(t.ranges) || t.ranges[i].Lo > cr.Hi {
				all = false // [lo, cr.Hi] is outside t
				break
			}
			if t.ranges[i].Lo > lo {
				all = false // [lo, t.Lo-1] is outside t
				lo = t.ranges[i].Lo
			}
			none = false
			if t.ranges[i].Hi >= cr.Hi {
				break
			}
			lo = t.ranges[i].Hi + 1
			i++
		}
		if !all && !none {
			return relPartial
		}
	}
	switch {
	case all:
		return relSuperset
	case none:
		return relDisjoint
	}
	return relPartial
}

// Span returns how many code points at the start of the UTF-8 text p
// could be fed, one by one, to a run of r (n), and the byte offset where
// they end (end): each is a member, and an unfinished code point at the
// very end of p (a token may end inside one) counts when it can still
// complete to a member. p[end:] starts with the first byte that cannot
// continue the run: a non-member's first byte, or invalid UTF-8 by the
// Matcher's strict rules. end == len(p) means all of p can.
func (r *CodeRun) Span(p []byte) (n, end int) {
	for end < len(p) {
		lo, hi, ok := gbnfUTF8Lead(p[end])
		if !ok {
			return n, end
		}
		need := gbnfUTF8Len(p[end])
		j := 1
		for ; j < need && end+j < len(p); j++ {
			if lo, hi, ok = gbnfUTF8Cont(lo, hi, need-j, p[end+j]); !ok {
				return n, end
			}
		}
		if !r.class.overlaps(lo, hi) {
			return n, end
		}
		n++
		end += j
	}
	return n, end
}
