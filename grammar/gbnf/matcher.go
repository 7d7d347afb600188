package gbnf

import (
	"errors"
	"fmt"
	"io"
	"slices"
)

// MaxStacks bounds the number of live parse stacks a [Matcher] keeps. A byte
// that would need more (a grammar ambiguous enough that the set explodes)
// is refused with [ErrTooManyStacks] instead of exhausting memory; llama.cpp
// has no bound.
const MaxStacks = 1 << 16

// Errors a *[RejectError] wraps.
var (
	// ErrInvalidUTF8: the byte cannot continue valid UTF-8.
	ErrInvalidUTF8 = errors.New("gbnf: invalid UTF-8")
	// ErrTooManyStacks: the byte would leave more than [MaxStacks]
	// alternatives alive.
	ErrTooManyStacks = errors.New("gbnf: too many parse stacks")
)

// RejectError is the error [Matcher.Write] returns when a byte cannot
// continue the input.
type RejectError struct {
	// Offset is the byte offset (since the matcher started or was reset)
	// of the first byte of the code point that cannot continue the input;
	// llama.cpp and gbnf-check report this offset.
	Offset int
	// Byte is the offset of the byte that was refused; it differs from
	// Offset when the refused byte continues a multi-byte code point.
	Byte int
	// Err is nil when the grammar does not allow the code point, else
	// [ErrInvalidUTF8], [ErrTooManyStacks], or [io.ErrUnexpectedEOF] (from End:
	// the input stops before a sentence is complete).
	Err error
}

// Error formats the offset and the reason.
func (e *RejectError) Error() string {
	why := "not allowed by the grammar"
	if e.Err == io.ErrUnexpectedEOF {
		why = "unexpected end of input"
	} else if e.Err != nil {
		why = e.Err.Error()
	}
	return fmt.Sprintf("gbnf: input rejected at byte %d: %s", e.Offset, why)
}

// Unwrap returns Err.
func (e *RejectError) Unwrap() error { return e.Err }

// gbnfNode is one frame of a parse stack: the element to match next (pos)
// and the rest of the stack below it (next, -1 at the bottom). Nodes are
// interned, so equal stacks are the same node id.
type gbnfNode struct {
	pos, next int32
}

// gbnfSet is an interned set of stacks (sorted node ids; -1 is the empty
// stack: the input may end) with what has been learnt about it: the
// transitions on ASCII bytes and the bytes allowed next. Caching them turns
// the stack machine into a lazily built automaton: inside a JSON string, for
// example, every further character is one table lookup.
type gbnfSet struct {
	start, n int32 // stacks: pool[start : start+n]
	// Transitions on ASCII bytes: 0 unknown, -1 refused, else next set
	// id + 1. The first few are kept inline (most sets see one or two
	// bytes); trans holds all of them once there are more.
	few       [4]int32
	fewBytes  [4]byte
	nFew      uint8
	trans     *[128]int32
	allowed   ByteSet // valid when allowedOK
	allowedOK bool
	accepts   bool
	// wide starts the stretches of code points from U+0080 up in each of
	// which every terminal of the set takes all code points or none, so
	// that one transition stands for a whole stretch (nil: not known yet).
	wide []rune
}

// Limits of a Matcher's caches; past them it starts afresh from its current
// stacks (the results do not change, only the time).
const (
	gbnfMaxNodes = 1 << 18
	gbnfMaxSets  = 1 << 13
	gbnfMaxPool  = 1 << 20
)

// Matcher checks input against a grammar byte by byte, starting at rule
// root: the set of parse stacks of llama.cpp's llama_grammar_accept, with
// equal stacks merged. A byte that cannot continue the input is refused and
// leaves the Matcher unchanged, so a caller can try bytes one at a time.
//
// A Matcher caches the stack sets it has met and their transitions, and
// keeps them across Reset, so one Matcher reused for many outputs of the
// same grammar gets faster; the caches are bounded.
//
// A Matcher is not safe for concurrent use; Clone gives an independent copy
// that shares only the immutable compiled grammar.
type Matcher struct {
	prog *gbnfProgram

	nodes  []gbnfNode
	ntable []int32  // open addressing over nodes by (pos, next); -1 free
	stamp  []uint32 // per node: the build that last saw it

	sets   []gbnfSet
	pool   []int32
	stable []int32 // open addressing over sets by contents; -1 free

	epoch        uint32           // incremented when the caches are rebuilt
	cur, initial int32            // set ids
	cpTrans      map[uint64]int32 // set id << 32 | code point -> next set (or -1) for non-ASCII

	// the set being built by a step
	gen       uint32
	next      []int32
	emptySeen bool
	expanded  int
	overflow  bool

	// partial UTF-8 code point: bytes seen, bytes it needs, possible range
	pn, pneed int
	plo, phi  rune
	pstart    int

	off int   // bytes accepted since start or Reset
	err error // why the last Advance refused a byte

	runs           map[runKey]runFit // Run's answers per set
	runPath        []int32
	partialAllowed map[partialKey]ByteSet // Allowed inside a code point
}

// NewMatcher returns a [Matcher] at the start of g's root rule. A [Grammar]
// from [Parse] is already checked; one built by hand is printed and parsed
// first, so NewMatcher returns the *[ParseError] Parse would (positions then
// refer to g.String()).
func NewMatcher(g *Grammar) (*Matcher, error) {
	prog := g.prog
	if prog == nil {
		parsed, err := Parse(g.String())
		if err != nil {
			return nil, err
		}
		prog = parsed.prog
	}
	m := &Matcher{prog: prog}
	m.clearCaches()
	return m, nil
}

// clearCaches empties the node and set tables and builds the initial set.
func (m *Matcher) clearCaches() {
	if m.nodes == nil { // first use: room for a typical tool call
		m.nodes = make([]gbnfNode, 0, 512)
		m.stamp = make([]uint32, 0, 512)
		m.sets = make([]gbnfSet, 0, 128)
		m.pool = make([]int32, 0, 512)
		m.next = make([]int32, 0, 32)
	}
	m.nodes = m.nodes[:0]
	m.stamp = m.stamp[:0]
	m.ntable = resetTable(m.ntable, 1024)
	m.sets = m.sets[:0]
	m.pool = m.pool[:0]
	m.stable = resetTable(m.stable, 256)
	clear(m.cpTrans)
	clear(m.runs)
	clear(m.partialAllowed)
	m.initial = m.start()
	m.cur = m.initial
}

func resetTable(t []int32, size int) []int32 {
	if cap(t) < size {
		t = make([]int32, size)
	}
	t = t[:size]
	for i := range t {
		t[i] = -1
	}
	return t
}

// start builds the initial set from root's alternatives, as
// llama_grammar_init_impl does.
func (m *Matcher) start() int32 {
	m.beginSet()
	for _, a := range m.prog.alts[m.prog.root] {
		s := int32(-1)
		if !m.prog.code[a].endOfSeq() {
			s = m.push(a, -1)
		}
		m.advance(s)
	}
	return m.internSet()
}

func gbnfMix(a, b uint64) uint64 {
	h := (a + 0x9E3779B97F4A7C15) ^ (b * 0xBF58476D1CE4E5B9)
	h ^= h >> 31
	h *= 0x94D049BB133111EB
	return h ^ h>>29
}

// push returns the node for stack next with pos on top.
func (m *Matcher) push(pos, next int32) int32 {
	mask := uint64(len(m.ntable) - 1)
	for i := gbnfMix(uint64(pos), uint64(uint32(next))) & mask; ; i = (i + 1) & mask {
		id := m.ntable[i]
		if id < 0 {
			id = int32(len(m.nodes))
			m.nodes = append(m.nodes, gbnfNode{pos: pos, next: next})
			m.stamp = append(m.stamp, 0)
			m.ntable[i] = id
			if 2*len(m.nodes) > len(m.ntable) {
				m.growNodeTable()
			}
			return id
		}
		if n := m.nodes[id]; n.pos == pos && n.next == next {
			return id
		}
	}
}

func (m *Matcher) growNodeTable() {
	m.ntable = resetTable(nil, 2*len(m.ntable))
	mask := uint64(len(m.ntable) - 1)
	for id, n := range m.nodes {
		i := gbnfMix(uint64(n.pos), uint64(uint32(n.next))) & mask
		for m.ntable[i] >= 0 {
			i = (i + 1) & mask
		}
		m.ntable[i] = int32(id)
	}
}

func (m *Matcher) beginSet() {
	m.next = m.next[:0]
	m.emptySeen, m.overflow, m.expanded = false, false, 0
	m.gen++
	if m.gen == 0 { // wrapped: forget old stamps
		clear(m.stamp)
		m.gen = 1
	}
}

// advance is llama_grammar_advance_stack: it expands rule references at the
// top of stack s until every resulting stack has a terminal on top (or is
// empty), and adds those to the set being built. Each distinct stack is
// expanded once per step, which keeps the work linear where llama.cpp's is
// exponential (a ::= b | b, b ::= c | c, ...).
func (m *Matcher) advance(s int32) {
	if s < 0 {
		if !m.emptySeen {
			m.emptySeen = true
			m.next = append(m.next, -1)
		}
		return
	}
	if m.stamp[s] == m.gen {
		return
	}
	m.stamp[s] = m.gen
	n := m.nodes[s]
	in := m.prog.code[n.pos]
	if in.op != gbnfRef {
		m.next = append(m.next, s)
		return
	}
	if m.expanded++; m.expanded > 8*MaxStacks {
		m.overflow = true
		return
	}
	parent := n.next
	if !m.prog.code[n.pos+1].endOfSeq() {
		parent = m.push(n.pos+1, parent)
	}
	for _, a := range m.prog.alts[in.arg] {
		ns := parent
		if !m.prog.code[a].endOfSeq() {
			ns = m.push(a, parent)
		}
		m.advance(ns)
	}
}

// internSet returns the id of the set of stacks in m.next.
func (m *Matcher) internSet() int32 {
	stacks := m.next
	sortInt32(stacks)
	h := uint64(len(stacks))
	for _, s := range stacks {
		h = gbnfMix(h, uint64(uint32(s)))
	}
	mask := uint64(len(m.stable) - 1)
	i := h & mask
	for ; m.stable[i] >= 0; i = (i + 1) & mask {
		set := &m.sets[m.stable[i]]
		if slices.Equal(m.pool[set.start:set.start+set.n], stacks) {
			return m.stable[i]
		}
	}
	id := int32(len(m.sets))
	start := int32(len(m.pool))
	m.pool = append(m.pool, stacks...)
	m.sets = append(m.sets, gbnfSet{start: start, n: int32(len(stacks)), accepts: len(stacks) > 0 && stacks[0] < 0})
	m.stable[i] = id
	if 2*len(m.sets) > len(m.stable) {
		m.stable = resetTable(m.stable[:0:0], 2*len(m.stable))
		mask = uint64(len(m.stable) - 1)
		for id := range m.sets {
			set := &m.sets[id]
			h := uint64(set.n)
			for _, s := range m.pool[set.start : set.start+set.n] {
				h = gbnfMix(h, uint64(uint32(s)))
			}
			j := h & mask
			for m.stable[j] >= 0 {
				j = (j + 1) & mask
			}
			m.stable[j] = int32(id)
		}
	}
	return id
}

// lookup returns the cached transition on ASCII byte b: 0 unknown, -1
// refused, else next set id + 1.
func (s *gbnfSet) lookup(b byte) int32 {
	if s.trans != nil {
		return s.trans[b]
	}
	for i := uint8(0); i < s.nFew; i++ {
		if s.fewBytes[i] == b {
			return s.few[i]
		}
	}
	return 0
}

// remember caches a transition given as lookup returns it (0, from a
// refusal's -1 + 1, is stored as -1).
func (s *gbnfSet) remember(b byte, next int32) {
	if next == 0 {
		next = -1
	}
	switch {
	case s.trans != nil:
		s.trans[b] = next
	case int(s.nFew) < len(s.few):
		s.fewBytes[s.nFew], s.few[s.nFew] = b, next
		s.nFew++
	default:
		s.trans = new([128]int32)
		for i := range s.few {
			s.trans[s.fewBytes[i]] = s.few[i]
		}
		s.trans[b] = next
	}
}

func sortInt32(a []int32) {
	for i := 1; i < len(a); i++ { // sets are small; insertion sort
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func (m *Matcher) stacksOf(set int32) []int32 {
	s := &m.sets[set]
	return m.pool[s.start : s.start+s.n]
}

// step feeds one whole code point to every stack of set
// (llama_grammar_accept) and returns the resulting set, -1 when no stack
// accepts c, or -2 when the result would be too large.
func (m *Matcher) step(set int32, c rune) int32 {
	m.beginSet()
	for _, s := range m.stacksOf(set) {
		if s < 0 {
			continue
		}
		n := m.nodes[s]
		in := m.prog.code[n.pos]
		if in.op != gbnfTerm || !m.prog.classes[in.arg].has(c) {
			continue
		}
		base := n.next
		if !m.prog.code[n.pos+1].endOfSeq() {
			base = m.push(n.pos+1, base)
		}
		m.advance(base)
		if m.overflow || len(m.next) > MaxStacks {
			return -2
		}
	}
	if len(m.next) == 0 {
		return -1
	}
	return m.internSet()
}

// move makes set the current one, first starting the caches afresh when
// they are full.
func (m *Matcher) move(set int32) {
	if len(m.nodes) > gbnfMaxNodes || len(m.sets) > gbnfMaxSets || len(m.pool) > gbnfMaxPool || len(m.cpTrans) > gbnfMaxSets || len(m.partialAllowed) > gbnfMaxSets {
		set = m.rebuild(set)
	}
	m.cur = set
}

// rebuild clears the caches and returns the id set has in the new ones.
func (m *Matcher) rebuild(set int32) int32 {
	oldNodes := m.nodes
	stacks := append([]int32(nil), m.stacksOf(set)...)
	m.epoch++
	m.nodes = nil // keep oldNodes intact while copying
	m.stamp = nil
	m.clearCaches()
	return m.copyStacks(oldNodes, stacks)
}

// copyStacks interns, in m's caches, the set of the stacks that live in
// nodes (another matcher's, or m's before a rebuild), sharing common tails
// as they were shared there, and returns its id.
func (m *Matcher) copyStacks(nodes []gbnfNode, stacks []int32) int32 {
	memo := map[int32]int32{}
	var copyStack func(s int32) int32
	copyStack = func(s int32) int32 {
		if s < 0 {
			return -1
		}
		if t, ok := memo[s]; ok {
			return t
		}
		t := m.push(nodes[s].pos, copyStack(nodes[s].next))
		memo[s] = t
		return t
	}
	m.beginSet()
	for _, s := range stacks {
		m.next = append(m.next, copyStack(s))
	}
	return m.internSet()
}

// Advance feeds one byte. It returns false, and leaves the matcher
// unchanged, when no continuation of the input with this byte can be a
// sentence of the grammar (or the byte breaks UTF-8).
func (m *Matcher) Advance(b byte) bool {
	m.err = nil
	if m.pn == 0 {
		if b < 0x80 {
			if known := m.sets[m.cur].lookup(b); known > 0 {
				m.move(known - 1)
				m.off++
				return true
			} else if known < 0 {
				return false
			}
			next := m.step(m.cur, rune(b))
			if next == -2 {
				m.err = ErrTooManyStacks
				return false
			}
			m.sets[m.cur].remember(b, next+1)
			if next < 0 {
				return false
			}
			m.move(next)
			m.off++
			return true
		}
		lo, hi, ok := gbnfUTF8Lead(b)
		if !ok {
			m.err = ErrInvalidUTF8
			return false
		}
		if !m.anyTop(lo, hi) {
			return false
		}
		m.pn, m.pneed, m.plo, m.phi, m.pstart = 1, gbnfUTF8Len(b), lo, hi, m.off
		m.off++
		return true
	}
	lo, hi, ok := gbnfUTF8Cont(m.plo, m.phi, m.pneed-m.pn, b)
	if !ok {
		m.err = ErrInvalidUTF8
		return false
	}
	if m.pn+1 == m.pneed {
		next := m.transition(m.cur, lo)
		if next < 0 {
			if next == -2 {
				m.err = ErrTooManyStacks
			}
			return false
		}
		m.move(next)
		m.pn = 0
		m.off++
		return true
	}
	if !m.anyTop(lo, hi) {
		return false
	}
	m.pn++
	m.plo, m.phi = lo, hi
	m.off++
	return true
}

// anyTop reports whether some stack's terminal accepts a code point in [lo, hi].
func (m *Matcher) anyTop(lo, hi rune) bool {
	for _, s := range m.stacksOf(m.cur) {
		if s < 0 {
			continue
		}
		in := m.prog.code[m.nodes[s].pos]
		if in.op == gbnfTerm && m.prog.classes[in.arg].overlaps(lo, hi) {
			return true
		}
	}
	return false
}

// Write feeds p byte by byte. It returns how many bytes were accepted and,
// when a byte is refused, a *[RejectError]; the matcher then stands after the
// accepted bytes. It never returns an error of another type.
func (m *Matcher) Write(p []byte) (int, error) {
	for i, b := range p {
		if !m.Advance(b) {
			return i, m.reject()
		}
	}
	return len(p), nil
}

// WriteString is Write for a string.
func (m *Matcher) WriteString(s string) (int, error) {
	for i := 0; i < len(s); i++ {
		if !m.Advance(s[i]) {
			return i, m.reject()
		}
	}
	return len(s), nil
}

func (m *Matcher) reject() *RejectError {
	start := m.off
	if m.pn > 0 {
		start = m.pstart
	}
	return &RejectError{Offset: start, Byte: m.off, Err: m.err}
}

// Accepts reports whether the bytes so far form a complete sentence of the
// grammar (the end of input may come now). More bytes may still be allowed.
func (m *Matcher) Accepts() bool {
	return m.pn == 0 && m.sets[m.cur].accepts
}

// End reports whether the input may end here: nil when the bytes so far
// form a complete sentence, else a *[RejectError] wrapping
// [io.ErrUnexpectedEOF] whose Offset is where llama.cpp reports the failure
// (the end of the input, or the start of an unfinished code point).
func (m *Matcher) End() error {
	if m.Accepts() {
		return nil
	}
	start := m.off
	if m.pn > 0 {
		start = m.pstart
	}
	return &RejectError{Offset: start, Byte: m.off, Err: io.ErrUnexpectedEOF}
}

// Offset returns the number of bytes accepted since the matcher started or
// was last reset.
func (m *Matcher) Offset() int { return m.off }

// Allowed returns the bytes Advance would accept next. It does not say
// whether the input may end here; Accepts does.
func (m *Matcher) Allowed() ByteSet {
	if m.pn == 0 {
		return m.allowedOf(m.cur)
	}
	key := partialKey{set: m.cur, remain: int8(m.pneed - m.pn), lo: m.plo, hi: m.phi}
	if out, ok := m.partialAllowed[key]; ok {
		return out
	}
	var out ByteSet
	for b := 0x80; b < 0xC0; b++ {
		lo, hi, ok := gbnfUTF8Cont(m.plo, m.phi, int(key.remain), byte(b))
		if ok && m.anyTop(lo, hi) {
			out.Add(byte(b))
		}
	}
	if m.partialAllowed == nil {
		m.partialAllowed = map[partialKey]ByteSet{}
	}
	m.partialAllowed[key] = out
	return out
}

// allowedOf returns the bytes that can begin a code point after set.
func (m *Matcher) allowedOf(id int32) ByteSet {
	set := &m.sets[id]
	if !set.allowedOK {
		var all ByteSet
		for _, s := range m.stacksOf(id) {
			if s < 0 {
				continue
			}
			if in := m.prog.code[m.nodes[s].pos]; in.op == gbnfTerm {
				all.union(&m.prog.classes[in.arg].first)
			}
		}
		set.allowed, set.allowedOK = all, true
	}
	return set.allowed
}

// partialKey is a position inside a code point, for the cache of Allowed.
type partialKey struct {
	set    int32
	remain int8
	lo, hi rune
}

// Clone returns an independent copy of m in its current state. The copy
// starts with empty caches (only the current stacks are copied).
func (m *Matcher) Clone() *Matcher {
	c := &Matcher{prog: m.prog, pn: m.pn, pneed: m.pneed, plo: m.plo, phi: m.phi, pstart: m.pstart, off: m.off}
	c.clearCaches()
	c.cur = c.copyStacks(m.nodes, m.stacksOf(m.cur))
	return c
}

// A Mark is a position of a [Matcher] that Rewind can return to: cheap to
// take and to restore (a token mask tries each candidate token's bytes
// from the same position).
type Mark struct {
	m         *Matcher
	epoch     uint32
	cur       int32
	pn, pneed int
	plo, phi  rune
	pstart    int
	off       int
}

// Mark returns the current position.
func (m *Matcher) Mark() Mark {
	return Mark{m: m, epoch: m.epoch, cur: m.cur, pn: m.pn, pneed: m.pneed, plo: m.plo, phi: m.phi, pstart: m.pstart, off: m.off}
}

// Rewind returns m to mk, a [Mark] taken from m. It returns false, and leaves
// m unchanged, when mk is from another [Matcher] or when m has rebuilt its
// caches since (they are bounded; this happens after thousands of distinct
// states); Clone before the bytes is the fallback then.
func (m *Matcher) Rewind(mk Mark) bool {
	if mk.m != m || mk.epoch != m.epoch {
		return false
	}
	m.cur, m.pn, m.pneed, m.plo, m.phi, m.pstart, m.off = mk.cur, mk.pn, mk.pneed, mk.plo, mk.phi, mk.pstart, mk.off
	m.err = nil
	return true
}

// Reset returns m to the start of the grammar, keeping its caches.
func (m *Matcher) Reset() {
	m.cur = m.initial
	m.pn, m.off, m.err = 0, 0, nil
}

// Match reports whether the whole input is a sentence of g. When it is
// not, offset is the byte offset where the input goes wrong, as llama.cpp
// reports it: the start of the first code point that cannot continue the
// input, or len(input) when the input is a proper prefix of a sentence (or
// the start of its last, unfinished code point). When it is, offset is
// len(input). For a [Grammar] built by hand that does not compile, Match
// returns false, -1.
func (g *Grammar) Match(input []byte) (ok bool, offset int) {
	m, err := NewMatcher(g)
	if err != nil {
		return false, -1
	}
	if _, err := m.Write(input); err != nil {
		return false, err.(*RejectError).Offset
	}
	if err := m.End(); err != nil {
		return false, err.(*RejectError).Offset
	}
	return true, len(input)
}
