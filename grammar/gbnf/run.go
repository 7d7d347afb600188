package gbnf

import (
	"iter"
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
		if next == set {
			// Every member leads back here: runs go on without end.
			n, exact = 0xFFFF, false
			m.runs[runKey{r, set}] = runFit{uint16(n), exact, set}
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

// Narrow returns a part of r's members whose runs [Matcher.Run] can
// measure from here where it cannot measure r's: inside "\"" char+ "@"
// char+ "\"", where char takes "@" too, members of r lead to different
// positions, but char's class less "@" leads to one. Narrow follows the run
// for up to limit code points and, at each position, splits what is left
// of r by each terminal that takes some of it but not all, keeping the
// side with more ASCII members (then more members): the rest where the
// terminal is the narrower one ("@"), the terminal's own code points
// where it is the broader one (the letters of a top-level domain inside
// [a-zA-Z0-9.-]+), or those where no terminal would take the rest. It
// stops where no terminal takes what is left (the run ends there). ok is
// false when it finds no narrower part that some terminal takes here, or
// in the middle of a code point. Narrow does not move the [Matcher].
func (m *Matcher) Narrow(r *CodeRun, limit int) (c Class, ok bool) {
	if m.pn != 0 || r.empty || limit <= 0 {
		return Class{}, false
	}
	left := r.class.ranges
	set := m.cur
	seen := m.runPath[:0]
	defer func() { m.runPath = seen[:0] }()
	for k := 0; k < min(limit, maxRunLimit) && !slices.Contains(seen, set); k++ {
		seen = append(seen, set)
		part, takes := m.split(set, left, false)
		if !takes && k == 0 {
			part, takes = m.split(set, left, true)
		}
		if !takes {
			break // the run ends here
		}
		left = part
		if set = m.transition(set, left[0].Lo); set < 0 {
			break
		}
	}
	if slices.Equal(left, r.class.ranges) {
		return Class{}, false
	}
	return Class{Ranges: left}, true
}

// split returns part split by each terminal of set that takes some of it
// but not all (see [Matcher.Narrow]; own: keeping the terminal's side),
// and whether some terminal takes all of the result.
func (m *Matcher) split(set int32, part []CharRange, own bool) ([]CharRange, bool) {
	takes := false
	// A subset of part keeps each relation it had, so one pass is enough:
	// a terminal split off takes all of the result or none.
	for t := range m.terminals(set) {
		switch classRelation(t, &gbnfClass{ranges: part}) {
		case relSuperset:
			takes = true
		case relPartial:
			in, out := intersectRanges(part, t.ranges), subtractRanges(part, t.ranges)
			if own || bigger(in, out) {
				part, takes = in, true
			} else {
				part = out
			}
		}
	}
	return part, takes
}

// bigger reports whether code point ranges a hold more ASCII members than
// b, or as many and more members.
func bigger(a, b []CharRange) bool {
	count := func(rs []CharRange) (ascii, all int) {
		for _, r := range rs {
			all += int(r.Hi - r.Lo + 1)
			if r.Lo < 128 {
				ascii += int(min(r.Hi, 127) - r.Lo + 1)
			}
		}
		return ascii, all
	}
	aa, an := count(a)
	ba, bn := count(b)
	return aa > ba || aa == ba && an > bn
}

// intersectRanges returns the code points in both a and b; both are
// sorted and disjoint, and so is the result (a new slice).
func intersectRanges(a, b []CharRange) []CharRange {
	var out []CharRange
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := max(a[i].Lo, b[j].Lo), min(a[i].Hi, b[j].Hi)
		if lo <= hi {
			out = append(out, CharRange{lo, hi})
		}
		if a[i].Hi < b[j].Hi {
			i++
		} else {
			j++
		}
	}
	return out
}

// subtractRanges returns the code points of a not in b; both are sorted
// and disjoint, and so is the result (a new slice).
func subtractRanges(a, b []CharRange) []CharRange {
	var out []CharRange
	j := 0
	for _, r := range a {
		lo := r.Lo
		for j < len(b) && b[j].Hi < lo {
			j++
		}
		for k := j; k < len(b) && b[k].Lo <= r.Hi && lo <= r.Hi; k++ {
			if b[k].Lo > lo {
				out = append(out, CharRange{lo, b[k].Lo - 1})
			}
			lo = max(lo, b[k].Hi+1)
		}
		if lo <= r.Hi {
			out = append(out, CharRange{lo, r.Hi})
		}
	}
	return out
}

// terminals yields the class of the terminal on top of each of set's
// stacks (a token reference matches no text: it is left out).
func (m *Matcher) terminals(set int32) iter.Seq[*gbnfClass] {
	return func(yield func(*gbnfClass) bool) {
		for _, s := range m.stacksOf(set) {
			if s < 0 {
				continue
			}
			if in := m.prog.code[m.nodes[s].pos]; in.op == gbnfTerm && !yield(&m.prog.classes[in.arg]) {
				return
			}
		}
	}
}

// runStep returns the set after any one member of r from set, or false
// when some member is refused or members lead to different sets.
func (m *Matcher) runStep(r *CodeRun, set int32) (int32, bool) {
	takes := false
	for t := range m.terminals(set) {
		switch classRelation(t, &r.class) {
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
		for t := range m.terminals(set) {
			for _, r := range t.ranges {
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
