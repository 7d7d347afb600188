package grammar

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sort"
	"unicode/utf8"
)

// ---------------------------------------------------------------------------
// Compilation: the parsed rules are expanded into flat element arrays exactly
// as llama_grammar_parser does (one array per symbol id, alternatives
// separated by gbnfAlt and closed by gbnfEnd, each group and each repetition
// step a generated rule), so that llama.cpp's own checks can run on the same
// shape and the matcher walks the same structure as llama_grammar_accept.

type gbnfOp uint8

const (
	gbnfEnd      gbnfOp = iota // end of the last alternative of a rule
	gbnfAlt                    // end of an alternative, another follows
	gbnfRef                    // arg: rule id
	gbnfTerm                   // arg: class index; matches one code point
	gbnfTokenRef               // a <[id]> token; never matches text
)

type gbnfInst struct {
	op  gbnfOp
	arg int32
}

func (in gbnfInst) endOfSeq() bool { return in.op == gbnfEnd || in.op == gbnfAlt }

// gbnfClass is a terminal: a sorted list of disjoint code point ranges (a
// negated class is stored as its complement) and the bytes that can start a
// matching code point.
type gbnfClass struct {
	ranges []CharRange
	ascii  [2]uint64 // code points < 128 in the class
	first  ByteSet   // bytes that can begin the UTF-8 encoding of a member
}

func (c *gbnfClass) has(r rune) bool {
	if r < 128 {
		return c.ascii[r>>6]&(1<<(uint(r)&63)) != 0
	}
	return c.overlaps(r, r)
}

// overlaps reports whether some code point in [lo, hi] is in the class.
func (c *gbnfClass) overlaps(lo, hi rune) bool {
	// the first range ending at or after lo, by binary search
	i, j := 0, len(c.ranges)
	for i < j {
		h := int(uint(i+j) >> 1)
		if c.ranges[h].Hi < lo {
			i = h + 1
		} else {
			j = h
		}
	}
	return i < len(c.ranges) && c.ranges[i].Lo <= hi
}

type gbnfProgram struct {
	code    []gbnfInst
	alts    [][]int32 // symbol id -> offsets of its alternatives in code
	classes []gbnfClass
	root    int32
}

// gbnfLowerer assigns symbol ids and expands repetitions in the order
// llama_grammar_parser does.
type gbnfLowerer struct {
	p        *gbnfParser
	ids      map[string]int32
	names    []string
	owner    []int // symbol id -> index into p.defs of the rule that produced it
	rules    [][]gbnfInst
	nAdded   int   // llama.cpp's rules.size(): highest id given a rule, plus one
	firstRef []int // symbol id -> byte offset of its first reference, -1 if none
	refCount int
	classIdx map[string]int32
	keyBuf   []byte
	block    []gbnfInst
	classes  []gbnfClass
	size     int
}

func (l *gbnfLowerer) symbol(name string, def int) int32 {
	if id, ok := l.ids[name]; ok {
		return id
	}
	id := int32(len(l.names))
	l.ids[name] = id
	l.names = append(l.names, name)
	l.owner = append(l.owner, def)
	l.firstRef = append(l.firstRef, -1)
	return id
}

// generate mirrors generate_symbol_id: a fresh id named base_<id>, which no
// rule written by hand can collide with ("_" is not a name character).
func (l *gbnfLowerer) generate(def int) int32 {
	id := int32(len(l.names))
	// llama.cpp names it base_<id>; no rule written by hand can refer to
	// it, so only messages need the name, and they use the base rule.
	l.names = append(l.names, "")
	l.owner = append(l.owner, def)
	l.firstRef = append(l.firstRef, -1)
	return id
}

// alloc returns an empty slice with capacity n, carved from a shared block
// so that the thousands of small rules of {m,n} expansions cost few
// allocations.
func (l *gbnfLowerer) alloc(n int) []gbnfInst {
	if n > 256 {
		return make([]gbnfInst, 0, n)
	}
	if cap(l.block)-len(l.block) < n {
		l.block = make([]gbnfInst, 0, 4096)
	}
	start := len(l.block)
	l.block = l.block[:start+n]
	return l.block[start : start : start+n]
}

func (l *gbnfLowerer) add(id int32, rule []gbnfInst) {
	for int(id) >= len(l.rules) {
		l.rules = append(l.rules, nil)
	}
	l.rules[id] = rule
	if int(id)+1 > l.nAdded {
		l.nAdded = int(id) + 1
	}
}

func (l *gbnfLowerer) grow(n int) error {
	l.size += n
	if l.size > MaxGrammarElements {
		return errGBNFTooLarge
	}
	return nil
}

var errGBNFTooLarge = errors.New("too large")

func (l *gbnfLowerer) alternates(alts []Seq, def int) ([]gbnfInst, error) {
	var rule []gbnfInst
	for i, seq := range alts {
		if i > 0 {
			rule = append(rule, gbnfInst{op: gbnfAlt})
		}
		for _, e := range seq {
			var err error
			if rule, err = l.expr(rule, e, def); err != nil {
				return nil, err
			}
		}
	}
	rule = append(rule, gbnfInst{op: gbnfEnd})
	return rule, l.grow(len(alts))
}

func (l *gbnfLowerer) expr(rule []gbnfInst, e Expr, def int) ([]gbnfInst, error) {
	switch e := e.(type) {
	case Literal:
		for _, r := range e.Chars {
			rule = append(rule, gbnfInst{op: gbnfTerm, arg: l.class(false, []CharRange{{r, r}})})
		}
		return rule, l.grow(len(e.Chars))
	case Class:
		if len(e.Ranges) == 0 {
			return rule, nil
		}
		return append(rule, gbnfInst{op: gbnfTerm, arg: l.class(e.Negated, e.Ranges)}), l.grow(1)
	case Any:
		return append(rule, gbnfInst{op: gbnfTerm, arg: l.class(true, nil)}), l.grow(1)
	case Token:
		return append(rule, gbnfInst{op: gbnfTokenRef}), l.grow(1)
	case Ref:
		id := l.symbol(e.Name, def)
		if l.firstRef[id] < 0 && l.refCount < len(l.p.refPos) {
			l.firstRef[id] = l.p.refPos[l.refCount]
		}
		l.refCount++
		return append(rule, gbnfInst{op: gbnfRef, arg: id}), l.grow(1)
	case Group:
		id := l.generate(def)
		sub, err := l.alternates(e.Alts, def)
		if err != nil {
			return nil, err
		}
		l.add(id, sub)
		return append(rule, gbnfInst{op: gbnfRef, arg: id}), l.grow(1)
	case Repeat:
		start := len(rule)
		rule, err := l.expr(rule, e.Expr, def)
		if err != nil {
			return nil, err
		}
		prev := append([]gbnfInst(nil), rule[start:]...)
		if e.Min == 0 {
			rule = rule[:start]
		} else {
			if err := l.grow(len(prev) * (e.Min - 1)); err != nil {
				return nil, err
			}
			for i := 1; i < e.Min; i++ {
				rule = append(rule, prev...)
			}
		}
		nOpt := 1
		if e.Max != Unbounded {
			nOpt = e.Max - e.Min
		}
		if err := l.grow(nOpt * (len(prev) + 3)); err != nil {
			return nil, err
		}
		var last int32
		for i := 0; i < nOpt; i++ {
			id := l.generate(def)
			rec := append(l.alloc(len(prev)+3), prev...)
			if e.Max == Unbounded {
				rec = append(rec, gbnfInst{op: gbnfRef, arg: id})
			} else if i > 0 {
				rec = append(rec, gbnfInst{op: gbnfRef, arg: last})
			}
			rec = append(rec, gbnfInst{op: gbnfAlt}, gbnfInst{op: gbnfEnd})
			l.add(id, rec)
			last = id
		}
		if nOpt > 0 {
			rule = append(rule, gbnfInst{op: gbnfRef, arg: last})
		}
		return rule, nil
	}
	return nil, fmt.Errorf("unknown expression %T", e)
}

// class interns a terminal; negated classes and "." (negated, no ranges)
// are stored as the complement over all Unicode code points.
func (l *gbnfLowerer) class(negated bool, ranges []CharRange) int32 {
	key := append(l.keyBuf[:0], byte(gbnfBoolInt(negated)))
	for _, r := range ranges {
		key = append(key, byte(r.Lo), byte(r.Lo>>8), byte(r.Lo>>16), byte(r.Lo>>24),
			byte(r.Hi), byte(r.Hi>>8), byte(r.Hi>>16), byte(r.Hi>>24))
	}
	l.keyBuf = key
	if i, ok := l.classIdx[string(key)]; ok {
		return i
	}
	i := int32(len(l.classes))
	l.classIdx[string(key)] = i
	l.classes = append(l.classes, newGBNFClass(negated, ranges))
	return i
}

func newGBNFClass(negated bool, ranges []CharRange) gbnfClass {
	var rs []CharRange
	for _, r := range ranges {
		if r.Lo <= r.Hi {
			rs = append(rs, r)
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Lo < rs[j].Lo })
	var merged []CharRange
	for _, r := range rs {
		if n := len(merged); n > 0 && r.Lo <= merged[n-1].Hi+1 {
			if r.Hi > merged[n-1].Hi {
				merged[n-1].Hi = r.Hi
			}
			continue
		}
		merged = append(merged, r)
	}
	if negated {
		var comp []CharRange
		next := rune(0)
		for _, r := range merged {
			if r.Lo > next {
				comp = append(comp, CharRange{next, r.Lo - 1})
			}
			next = r.Hi + 1
		}
		if next <= utf8.MaxRune {
			comp = append(comp, CharRange{next, utf8.MaxRune})
		}
		merged = comp
	}
	c := gbnfClass{ranges: merged}
	for _, r := range merged {
		for b := r.Lo; b <= r.Hi && b < 128; b++ {
			c.ascii[b>>6] |= 1 << (uint(b) & 63)
		}
	}
	c.first[0], c.first[1] = c.ascii[0], c.ascii[1]
	if len(merged) > 0 && merged[len(merged)-1].Hi >= 128 {
		for b := 0xC2; b <= 0xF4; b++ {
			if lo, hi, _ := gbnfUTF8Lead(byte(b)); c.overlaps(lo, hi) {
				c.first.Add(byte(b))
			}
		}
	}
	return c
}

// gbnfCompile lowers the parsed definitions and runs llama.cpp's checks
// (undefined rules, empty grammar, root, left recursion) and this package's
// own (recursion without consuming input, size).
func gbnfCompile(defs []*Rule, p *gbnfParser) (*gbnfProgram, error) {
	if len(defs) == 0 {
		return nil, &ParseError{Offset: len(p.src), Msg: "grammar is empty (no rules)", Err: ErrEmptyGrammar, Line: gbnfLineOf(p.src, len(p.src)), Col: gbnfColOf(p.src, len(p.src))}
	}
	l := &gbnfLowerer{p: p, ids: map[string]int32{}, classIdx: map[string]int32{}}
	for i, r := range defs {
		id := l.symbol(r.Name, i)
		rule, err := l.alternates(r.Alts, i)
		if err != nil {
			return nil, p.errAt(p.defPos[i], ErrTooLarge, fmt.Sprintf("rule %s expands to more than %d elements", r.Name, MaxGrammarElements))
		}
		l.add(id, rule)
	}
	// llama_grammar_parser::parse: every rule up to the highest defined id
	// must exist, and every reference must point at a defined rule.
	for id := 0; id < len(l.names); id++ {
		if id < len(l.rules) && l.rules[id] != nil {
			continue
		}
		referenced := l.firstRef[id] >= 0
		if id < l.nAdded || referenced && l.referencedFromRules(int32(id)) {
			off := l.firstRef[id]
			if off < 0 {
				off = 0
			}
			return nil, p.errAt(off, ErrUndefinedRule, "undefined rule '"+l.names[id]+"'")
		}
	}
	rootID, ok := l.ids["root"]
	if !ok || int(rootID) >= len(l.rules) || l.rules[rootID] == nil {
		return nil, p.errAt(0, ErrNoRoot, "grammar does not contain a 'root' rule")
	}
	n := l.nAdded
	if id, bad := gbnfLlamaLeftRecursion(l.rules[:n]); bad {
		def := l.owner[id]
		return nil, p.errAt(p.defPos[def], ErrLeftRecursion, "unsupported grammar, left recursion detected for rule '"+defs[def].Name+"'")
	}
	if id, bad := gbnfNullableCycle(l.rules[:n]); bad {
		def := l.owner[id]
		return nil, p.errAt(p.defPos[def], ErrEmptyLoop, "rule '"+defs[def].Name+"' can recurse without consuming input, e.g. a repetition of something that can match empty; llama.cpp crashes on this grammar")
	}
	prog := &gbnfProgram{classes: l.classes, root: rootID, alts: make([][]int32, n)}
	size, nAlts := 0, 0
	for _, rule := range l.rules[:n] {
		size += len(rule)
		for _, in := range rule {
			if in.endOfSeq() {
				nAlts++
			}
		}
	}
	prog.code = make([]gbnfInst, 0, size)
	altStarts := make([]int32, 0, nAlts)
	for id, rule := range l.rules[:n] {
		start := int32(len(prog.code))
		first := len(altStarts)
		altStarts = append(altStarts, start)
		for j, in := range rule[:len(rule)-1] {
			if in.op == gbnfAlt {
				altStarts = append(altStarts, start+int32(j)+1)
			}
		}
		prog.alts[id] = altStarts[first:len(altStarts):len(altStarts)]
		prog.code = append(prog.code, rule...)
	}
	// Rule references inside code still name symbol ids; alts is indexed
	// by id, so no relocation is needed.
	return prog, nil
}

func (l *gbnfLowerer) referencedFromRules(id int32) bool {
	for _, rule := range l.rules {
		for _, in := range rule {
			if in.op == gbnfRef && in.arg == id {
				return true
			}
		}
	}
	return false
}

func gbnfLineOf(src string, off int) int {
	line := 1
	for i := 0; i < off && i < len(src); i++ {
		if src[i] == '\n' {
			line++
		}
	}
	return line
}

func gbnfColOf(src string, off int) int {
	col := 1
	for i := 0; i < off && i < len(src); i++ {
		if src[i] == '\n' {
			col = 1
		} else {
			col++
		}
	}
	return col
}

// gbnfLlamaLeftRecursion is llama_grammar_detect_left_recursion run over every
// rule as llama_grammar_init_impl does. A rule "may be empty" only when it
// has a syntactically empty alternative, exactly as in llama.cpp; deeper
// nullable cycles are left to gbnfNullableCycle.
func gbnfLlamaLeftRecursion(rules [][]gbnfInst) (int, bool) {
	n := len(rules)
	visited := make([]bool, n)
	inProgress := make([]bool, n)
	mayBeEmpty := make([]bool, n)
	var detect func(i int) bool
	detect = func(i int) bool {
		if inProgress[i] {
			return true
		}
		if visited[i] {
			// llama.cpp explores it again; nothing reachable from a
			// finished rule can close a cycle, so the answer is the same
			// and the time is not exponential
			return false
		}
		inProgress[i] = true
		rule := rules[i]
		atStart := true
		for _, in := range rule {
			if in.endOfSeq() {
				if atStart {
					mayBeEmpty[i] = true
					break
				}
				atStart = true
			} else {
				atStart = false
			}
		}
		recurse := true
		for _, in := range rule {
			switch {
			case in.op == gbnfRef && recurse:
				if detect(int(in.arg)) {
					return true
				}
				if !mayBeEmpty[in.arg] {
					recurse = false
				}
			case in.endOfSeq():
				recurse = true
			default:
				recurse = false
			}
		}
		inProgress[i] = false
		visited[i] = true
		return false
	}
	for i := 0; i < n; i++ {
		if !visited[i] && detect(i) {
			return i, true
		}
	}
	return 0, false
}

// gbnfNullableCycle finds a rule that can reach itself through left corners
// that match the empty string (with nullability computed properly, to a
// fixed point). llama_grammar_advance_stack recurses forever on such a rule.
func gbnfNullableCycle(rules [][]gbnfInst) (int, bool) {
	n := len(rules)
	nullable := make([]bool, n)
	for changed := true; changed; {
		changed = false
		for i, rule := range rules {
			if nullable[i] {
				continue
			}
			ok := true
			for _, in := range rule {
				if in.endOfSeq() {
					if ok {
						nullable[i] = true
						changed = true
						break
					}
					ok = true
				} else if in.op != gbnfRef || !nullable[in.arg] {
					ok = false
				}
			}
		}
	}
	// Edges: rule -> rule referenced at a position preceded only by
	// nullable references in its alternative (a left corner).
	edgeStart := make([]int, n+1)
	var targets []int32
	for i, rule := range rules {
		edgeStart[i] = len(targets)
		prefixNullable := true
		for _, in := range rule {
			switch {
			case in.endOfSeq():
				prefixNullable = true
			case in.op == gbnfRef:
				if prefixNullable {
					targets = append(targets, in.arg)
				}
				prefixNullable = prefixNullable && nullable[in.arg]
			default:
				prefixNullable = false
			}
		}
	}
	edgeStart[n] = len(targets)
	edges := func(i int) []int32 { return targets[edgeStart[i]:edgeStart[i+1]] }
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, n)
	type frame struct{ rule, edge int }
	for start := 0; start < n; start++ {
		if color[start] != white {
			continue
		}
		stack := []frame{{start, 0}}
		color[start] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.edge == len(edges(top.rule)) {
				color[top.rule] = black
				stack = stack[:len(stack)-1]
				continue
			}
			next := edges(top.rule)[top.edge]
			top.edge++
			switch color[next] {
			case grey:
				return int(next), true
			case white:
				color[next] = grey
				stack = append(stack, frame{int(next), 0})
			}
		}
	}
	return 0, false
}

// ---------------------------------------------------------------------------
// UTF-8 helpers (strict: no overlong forms, no surrogates, nothing above
// U+10FFFF).

// gbnfUTF8Lead returns the code points whose encoding starts with b.
func gbnfUTF8Lead(b byte) (lo, hi rune, ok bool) {
	switch {
	case b < 0x80:
		return rune(b), rune(b), true
	case b < 0xC2:
		return 0, 0, false
	case b < 0xE0:
		lo = rune(b&0x1F) << 6
		return lo, lo | 0x3F, true
	case b == 0xE0:
		return 0x800, 0xFFF, true
	case b == 0xED:
		return 0xD000, 0xD7FF, true
	case b < 0xF0:
		lo = rune(b&0x0F) << 12
		return lo, lo | 0xFFF, true
	case b == 0xF0:
		return 0x10000, 0x3FFFF, true
	case b < 0xF4:
		lo = rune(b&0x07) << 18
		return lo, lo | 0x3FFFF, true
	case b == 0xF4:
		return 0x100000, 0x10FFFF, true
	}
	return 0, 0, false
}

// gbnfUTF8Cont returns the range of code points after continuation byte b
// extends a partial sequence whose possible code points are [lo, hi] with
// remain bytes still to come (including b). ok is false when b cannot come
// next.
func gbnfUTF8Cont(lo, hi rune, remain int, b byte) (rune, rune, bool) {
	if b&0xC0 != 0x80 {
		return 0, 0, false
	}
	shift := uint(6 * (remain - 1))
	nlo := lo&^(0x3F<<shift) | rune(b&0x3F)<<shift
	nhi := nlo | (1<<shift - 1)
	if nlo < lo || nhi > hi {
		return 0, 0, false
	}
	return nlo, nhi, true
}

func gbnfUTF8Len(b byte) int {
	switch {
	case b < 0x80:
		return 1
	case b < 0xE0:
		return 2
	case b < 0xF0:
		return 3
	}
	return 4
}

// ---------------------------------------------------------------------------
// Matching.

// ByteSet is a set of bytes, one bit each.
type ByteSet [4]uint64

// Has reports whether b is in the set.
func (s *ByteSet) Has(b byte) bool { return s[b>>6]&(1<<(b&63)) != 0 }

// Add puts b in the set.
func (s *ByteSet) Add(b byte) { s[b>>6] |= 1 << (b & 63) }

// Len returns the number of bytes in the set.
func (s *ByteSet) Len() int {
	return bits.OnesCount64(s[0]) + bits.OnesCount64(s[1]) + bits.OnesCount64(s[2]) + bits.OnesCount64(s[3])
}

// Bytes returns the members in increasing order.
func (s *ByteSet) Bytes() []byte {
	var out []byte
	for b := 0; b < 256; b++ {
		if s.Has(byte(b)) {
			out = append(out, byte(b))
		}
	}
	return out
}

func (s *ByteSet) union(t *ByteSet) {
	s[0] |= t[0]
	s[1] |= t[1]
	s[2] |= t[2]
	s[3] |= t[3]
}

// MaxStacks bounds the number of live parse stacks a Matcher keeps. A byte
// that would need more (a grammar ambiguous enough that the set explodes)
// is refused with ErrTooManyStacks instead of exhausting memory; llama.cpp
// has no bound.
const MaxStacks = 1 << 16

// Errors a *RejectError wraps.
var (
	// ErrInvalidUTF8: the byte cannot continue valid UTF-8.
	ErrInvalidUTF8 = errors.New("grammar: invalid UTF-8")
	// ErrTooManyStacks: the byte would leave more than MaxStacks
	// alternatives alive.
	ErrTooManyStacks = errors.New("grammar: too many parse stacks")
)

// RejectError is the error Matcher.Write returns when a byte cannot
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
	// ErrInvalidUTF8, ErrTooManyStacks, or io.ErrUnexpectedEOF (from End:
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
	return fmt.Sprintf("grammar: input rejected at byte %d: %s", e.Offset, why)
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
}

// NewMatcher returns a Matcher at the start of g's root rule. A Grammar
// from Parse is already checked; one built by hand is printed and parsed
// first, so NewMatcher returns the *ParseError Parse would (positions then
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
		if int(set.n) == len(stacks) && equalInt32(m.pool[set.start:set.start+set.n], stacks) {
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

func equalInt32(a, b []int32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
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
	if len(m.nodes) > gbnfMaxNodes || len(m.sets) > gbnfMaxSets || len(m.pool) > gbnfMaxPool || len(m.cpTrans) > gbnfMaxSets {
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
	memo := map[int32]int32{}
	var copyStack func(s int32) int32
	copyStack = func(s int32) int32 {
		if s < 0 {
			return -1
		}
		if t, ok := memo[s]; ok {
			return t
		}
		t := m.push(oldNodes[s].pos, copyStack(oldNodes[s].next))
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
		key := uint64(m.cur)<<32 | uint64(lo)
		next, ok := m.cpTrans[key]
		if !ok {
			next = m.step(m.cur, lo)
			if next != -2 {
				if m.cpTrans == nil {
					m.cpTrans = map[uint64]int32{}
				}
				m.cpTrans[key] = next
			}
		}
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
// when a byte is refused, a *RejectError; the matcher then stands after the
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
// form a complete sentence, else a *RejectError wrapping
// io.ErrUnexpectedEOF whose Offset is where llama.cpp reports the failure
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
		set := &m.sets[m.cur]
		if !set.allowedOK {
			var all ByteSet
			for _, s := range m.stacksOf(m.cur) {
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
	var out ByteSet
	remain := m.pneed - m.pn
	for b := 0x80; b < 0xC0; b++ {
		lo, hi, ok := gbnfUTF8Cont(m.plo, m.phi, remain, byte(b))
		if ok && m.anyTop(lo, hi) {
			out.Add(byte(b))
		}
	}
	return out
}

// Clone returns an independent copy of m in its current state. The copy
// starts with empty caches (only the current stacks are copied).
func (m *Matcher) Clone() *Matcher {
	c := &Matcher{prog: m.prog, pn: m.pn, pneed: m.pneed, plo: m.plo, phi: m.phi, pstart: m.pstart, off: m.off}
	c.clearCaches()
	memo := map[int32]int32{}
	var copyStack func(s int32) int32
	copyStack = func(s int32) int32 {
		if s < 0 {
			return -1
		}
		if t, ok := memo[s]; ok {
			return t
		}
		t := c.push(m.nodes[s].pos, copyStack(m.nodes[s].next))
		memo[s] = t
		return t
	}
	c.beginSet()
	for _, s := range m.stacksOf(m.cur) {
		c.next = append(c.next, copyStack(s))
	}
	c.cur = c.internSet()
	return c
}

// A Mark is a position of a Matcher that Rewind can return to: cheap to
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

// Rewind returns m to mk, a Mark taken from m. It returns false, and leaves
// m unchanged, when mk is from another Matcher or when m has rebuilt its
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
// len(input). For a Grammar built by hand that does not compile, Match
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
