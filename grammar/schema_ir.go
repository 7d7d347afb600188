package grammar

import (
	"encoding/binary"
	"reflect"
	"unicode/utf8"

	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/grammar/internal/charclass"
)

// The schema compiler builds grammars as trees of gnode values and prints
// them as llama.cpp GBNF only at the end, so that tool grammars can be
// merged into one turn grammar (shared rules by identity, names assigned
// once) and so that simplifications (an empty alternative, an alternative
// that can never match) happen on structure rather than text.

type gop uint8

const (
	gEmpty gop = iota // matches the empty string
	gNone             // matches nothing
	gLit              // a literal string
	gClass            // one code point from a set
	gSeq
	gAlt
	gRep // subs[0] repeated min..max times (max < 0: unbounded)
	gRef // a rule
)

type gnode struct {
	h        uint64 // structural hash, set by mk
	op       gop
	null     bool  // matches the empty string
	min, max int32 // counts stay within [gbnf.MaxRepetition]; int32 keeps a node at 96 bytes
	lit      string
	ranges   []crange // sorted, non-overlapping, non-adjacent
	subs     []*gnode
	rule     *grule
}

// newNode returns a node of op with a copy of subs, allocated with the node
// when there are few (most sequences and alternatives have two to eight
// elements): one allocation instead of two.
func newNode(op gop, subs []*gnode) *gnode {
	var n *gnode
	var a []*gnode
	switch {
	case len(subs) <= 4:
		x := &struct {
			n gnode
			a [4]*gnode
		}{}
		n, a = &x.n, x.a[:]
	case len(subs) <= 8:
		x := &struct {
			n gnode
			a [8]*gnode
		}{}
		n, a = &x.n, x.a[:]
	default:
		n, a = &gnode{}, make([]*gnode, len(subs))
	}
	k := copy(a, subs)
	n.op, n.subs = op, a[:k:k]
	return n
}

// mk completes a node: its structural hash and whether it is nullable.
// Nodes are immutable once made.
func mk(n *gnode) *gnode {
	h := fnvHash(fnvOffset)
	h.word(uint64(n.op))
	switch n.op {
	case gEmpty:
		n.null = true
	case gLit:
		h.str(n.lit)
	case gClass:
		for _, r := range n.ranges {
			h.word(uint64(r.Lo)<<32 | uint64(r.Hi))
		}
	case gSeq:
		n.null = true
		for _, s := range n.subs {
			h.word(s.h)
			n.null = n.null && s.null
		}
	case gAlt:
		for _, s := range n.subs {
			h.word(s.h)
			n.null = n.null || s.null
		}
	case gRep:
		h.word(uint64(int64(n.min)))
		h.word(uint64(int64(n.max)))
		h.word(n.subs[0].h)
		n.null = n.min == 0 || n.subs[0].null
	case gRef:
		h.word(uint64(reflect.ValueOf(n.rule).Pointer()))
		n.null = n.rule.body != nil && n.rule.body.null
	}
	n.h = uint64(h)
	return n
}

// fnvHash is a structural hash in the style of FNV over 8-byte words,
// inline so that hashing a node allocates nothing. Equal hashes are
// confirmed with equalNodes, so collisions cost only a comparison.
type fnvHash uint64

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// word mixes in 8 bytes at once (FNV-style xor-multiply with a final
// avalanche per word, so that low and high bits both spread).
func (h *fnvHash) word(x uint64) {
	v := (uint64(*h) ^ x) * fnvPrime
	*h = fnvHash(v ^ v>>29)
}

func (h *fnvHash) str(s string) {
	for len(s) >= 8 {
		h.word(binary.LittleEndian.Uint64([]byte(s[:8])))
		s = s[8:]
	}
	var last uint64
	for i := 0; i < len(s); i++ {
		last |= uint64(s[i]) << (8 * i)
	}
	h.word(last ^ uint64(len(s))<<56)
}

// equalNodes is structural equality (rules by identity).
func equalNodes(a, b *gnode) bool {
	if a == b {
		return true
	}
	if a.h != b.h || a.op != b.op || a.lit != b.lit || a.min != b.min || a.max != b.max || a.rule != b.rule ||
		len(a.ranges) != len(b.ranges) || len(a.subs) != len(b.subs) {
		return false
	}
	for i := range a.ranges {
		if a.ranges[i] != b.ranges[i] {
			return false
		}
	}
	for i := range a.subs {
		if !equalNodes(a.subs[i], b.subs[i]) {
			return false
		}
	}
	return true
}

// grule is a named rule. Rules are identified by pointer: the printer
// assigns unique GBNF names from the hints.
type grule struct {
	hint string
	body *gnode
}

// crange is the package's short name for [gbnf.CharRange], the one
// character-range type of the grammar packages: an inclusive range of
// code points.
type crange = gbnf.CharRange

var (
	nEmpty = mk(&gnode{op: gEmpty})
	nNone  = mk(&gnode{op: gNone})
)

func lit(s string) *gnode {
	switch {
	case s == "":
		return nEmpty
	case len(s) == 1 && s[0] < utf8.RuneSelf:
		return asciiLits[s[0]]
	}
	return mk(&gnode{op: gLit, lit: s})
}

// asciiLits holds the literal node of each ASCII character: the
// punctuation of JSON ({ } [ ] : , ") is most of a grammar's literals, and
// nodes are immutable, so every compile shares these.
var asciiLits = func() (ls [utf8.RuneSelf]*gnode) {
	for c := range ls {
		ls[c] = mk(&gnode{op: gLit, lit: string(rune(c))})
	}
	return ls
}()

func ref(r *grule) *gnode { return mk(&gnode{op: gRef, rule: r}) }

// class returns a node matching one code point in the union of the ranges.
func class(rs ...crange) *gnode {
	rs = charclass.Normalize(rs)
	if len(rs) == 0 {
		return nNone
	}
	if len(rs) == 1 && rs[0].Lo == rs[0].Hi {
		return lit(string(rs[0].Lo))
	}
	return mk(&gnode{op: gClass, ranges: rs})
}

func seq(ns ...*gnode) *gnode {
	var stack [8]*gnode // out stays on the stack: newNode copies it
	out := stack[:0]
	var b seqBuilder
	for _, n := range ns {
		switch n.op {
		case gNone:
			return nNone
		case gEmpty:
			continue
		case gSeq:
			for _, s := range n.subs {
				out = b.add(out, s)
			}
		default:
			out = b.add(out, n)
		}
	}
	return collapse(gSeq, nEmpty, b.flush(out))
}

// collapse returns the node of op over out: zero when out is empty (nEmpty
// for a sequence, nNone for an alternative), the element itself when there
// is one.
func collapse(op gop, zero *gnode, out []*gnode) *gnode {
	switch len(out) {
	case 0:
		return zero
	case 1:
		return out[0]
	}
	return mk(newNode(op, out))
}

// seqBuilder collects the elements of a sequence into out, joining each
// run of adjacent literals once.
type seqBuilder struct {
	run      [8]*gnode
	runN     int
	overflow []*gnode // run beyond len(run)
}

func (b *seqBuilder) add(out []*gnode, n *gnode) []*gnode {
	if n.op != gLit {
		return append(b.flush(out), n)
	}
	if b.runN < len(b.run) {
		b.run[b.runN] = n
	} else {
		b.overflow = append(b.overflow, n)
	}
	b.runN++
	return out
}

func (b *seqBuilder) flush(out []*gnode) []*gnode {
	switch b.runN {
	case 0:
		return out
	case 1:
		out = append(out, b.run[0])
	default:
		var stack [128]byte // most joined runs are short: one allocation, the string
		buf := stack[:0]
		b.each(func(l *gnode) { buf = append(buf, l.lit...) })
		out = append(out, lit(string(buf)))
	}
	b.runN, b.overflow = 0, b.overflow[:0]
	return out
}

func (b *seqBuilder) each(f func(*gnode)) {
	for i := 0; i < b.runN && i < len(b.run); i++ {
		f(b.run[i])
	}
	for _, l := range b.overflow {
		f(l)
	}
}

func alt(ns ...*gnode) *gnode {
	var stack [8]*gnode
	out := stack[:0]
	hasEmpty := false
	for _, n := range ns {
		switch n.op {
		case gNone:
			continue
		case gAlt:
			out = append(out, n.subs...)
		case gEmpty:
			hasEmpty = true
		default:
			out = append(out, n)
		}
	}
	// Drop structurally identical alternatives: duplicates only grow
	// llama.cpp's stack set.
	uniq := out[:0]
	switch {
	case len(out) <= 1:
		uniq = out
	case len(out) <= 16: // a scan is cheaper than a map
	small:
		for _, n := range out {
			for _, m := range uniq {
				if m.h == n.h && equalNodes(m, n) {
					continue small
				}
			}
			uniq = append(uniq, n)
		}
	default:
		seen := make(map[uint64][]*gnode, len(out))
	next:
		for _, n := range out {
			for _, m := range seen[n.h] {
				if equalNodes(m, n) {
					continue next
				}
			}
			seen[n.h] = append(seen[n.h], n)
			uniq = append(uniq, n)
		}
	}
	out = uniq
	if hasEmpty {
		if len(out) == 0 {
			return nEmpty
		}
		if len(out) == 1 && !out[0].nullable() {
			return opt(out[0])
		}
		out = append(out, nEmpty)
	}
	return collapse(gAlt, nNone, out)
}

func opt(n *gnode) *gnode  { return rep(n, 0, 1) }
func star(n *gnode) *gnode { return rep(n, 0, -1) }
func plus(n *gnode) *gnode { return rep(n, 1, -1) }

// rep repeats n between min and max times (max < 0: unbounded). Callers
// keep min and max within [gbnf.MaxRepetition]. An unbounded repetition of something
// that can match empty is rewritten to repeat its non-empty part, because
// llama.cpp recurses without end on such grammars.
func rep(n *gnode, min, max int) *gnode {
	if max >= 0 && max < min {
		return nNone
	}
	if max == 0 {
		return nEmpty
	}
	switch n.op {
	case gNone:
		if min == 0 {
			return nEmpty
		}
		return nNone
	case gEmpty:
		return nEmpty
	}
	if min == 1 && max == 1 {
		return n
	}
	if n.nullable() {
		ne := nonEmpty(n)
		if ne.op == gNone {
			return nEmpty
		}
		if max < 0 {
			r := newNode(gRep, []*gnode{ne})
			r.min, r.max = 0, -1
			return mk(r)
		}
		// n{min,max} with n nullable is n'{0,max} for n' = n without ε.
		n, min = ne, 0
	}
	if max > emitRepetitionLimit || min > emitRepetitionLimit {
		// Newer llama.cpp servers refuse a count of 2000 or more (the old
		// one [gbnf.Parse] follows accepts 2000): n{min,max} is written as
		// n{min1,max1} n{min2,max2} with every count under 2000.
		firstMin, lo, hi := min, 0, -1
		if firstMin > emitRepetitionLimit {
			firstMin, lo = emitRepetitionLimit, min-emitRepetitionLimit
		}
		if max >= 0 {
			hi = max - emitRepetitionLimit
		}
		return seq(rep(n, firstMin, emitRepetitionLimit), rep(n, lo, hi))
	}
	r := newNode(gRep, []*gnode{n})
	r.min, r.max = int32(min), int32(max)
	return mk(r)
}

// emitRepetitionLimit is the largest count the compiler writes in one
// repetition: llama.cpp's servers since its MAX_REPETITION_THRESHOLD check
// refuse {2000} and above ("failed to parse grammar"), measured against
// the llama-server of node-llama-cpp 3.21.1; larger bounds (up to
// [gbnf.MaxRepetition]) are split into consecutive repetitions.
const emitRepetitionLimit = 1999

// nullable reports whether n matches the empty string.
func (n *gnode) nullable() bool { return n.null }

// nonEmpty returns a node for the language of n without the empty string.
func nonEmpty(n *gnode) *gnode {
	if !n.nullable() {
		return n
	}
	switch n.op {
	case gEmpty, gNone:
		return nNone
	case gAlt:
		subs := make([]*gnode, len(n.subs))
		for i, s := range n.subs {
			subs[i] = nonEmpty(s)
		}
		return alt(subs...)
	case gSeq:
		// L(ab)\ε = (L(a)\ε)L(b) ∪ (L(b)\ε) when a is nullable (it is: n is nullable).
		head, tail := n.subs[0], seq(n.subs[1:]...)
		return alt(seq(nonEmpty(head), tail), nonEmpty(tail))
	case gRep:
		ne := nonEmpty(n.subs[0])
		if n.max < 0 {
			return rep(ne, 1, -1)
		}
		return rep(ne, 1, int(n.max))
	case gRef:
		return nonEmpty(n.rule.body)
	}
	return n
}
