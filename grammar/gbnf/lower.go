package gbnf

import (
	"errors"
	"fmt"
	"slices"

	"github.com/toolgate/toolgate/grammar/internal/charclass"
)

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
	var merged []CharRange
	if negated {
		merged = charclass.Complement(ranges)
	} else {
		merged = slices.Clone(charclass.Normalize(ranges)) // the class keeps it; ranges is the grammar's
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
		l.owner[id] = i // the rule that defines it, not the first that referred to it
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
