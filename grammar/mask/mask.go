package mask

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"sync"

	"github.com/toolgate/toolgate/grammar/gbnf"
)

// Bitset is a set of token ids, one bit each: id i is bit i%64 of word
// i/64. [NewBitset] makes one for a vocabulary.
type Bitset []uint64

// NewBitset returns an empty set with room for ids 0..n-1.
func NewBitset(n int) Bitset { return make(Bitset, (n+63)/64) }

// Has reports whether id is in the set.
func (b Bitset) Has(id int) bool { return b[id>>6]&(1<<(uint(id)&63)) != 0 }

// Set adds id to the set.
func (b Bitset) Set(id int) { b[id>>6] |= 1 << (uint(id) & 63) }

// Count returns the number of ids in the set.
func (b Bitset) Count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

func (b Bitset) or(c Bitset) {
	for i := range b {
		b[i] |= c[i]
	}
}

// Errors of [Session.Accept] (test with [errors.Is]).
var (
	// ErrRefused: the grammar does not allow the token here.
	ErrRefused = errors.New("mask: token not allowed here")
	// ErrFinished: an end-of-generation token was already accepted.
	ErrFinished = errors.New("mask: generation already ended")
)

// Options configure an [Engine]. A nil *Options means the defaults.
type Options struct {
	// CacheEntries bounds each Session's cache of masks by matcher
	// position ([gbnf.State]). Zero means 256; negative turns the cache
	// off. A mask takes Len()/8 bytes.
	CacheEntries int
	// NoSlices turns off the free-text fast path (see the package
	// documentation), leaving every mask to the trie walk; the masks are
	// the same. For measurements and tests.
	NoSlices bool
}

// maxSlices bounds the character classes an [Engine] prepares.
const maxSlices = 8

// Engine computes token masks for one grammar over one vocabulary. It
// holds what is prepared once per grammar (the free-text slices) and the
// narrowed slices its Sessions meet, behind a lock: safe for concurrent
// use, each goroutine with its own [Session].
type Engine struct {
	g      *gbnf.Grammar
	vocab  *Vocabulary
	t      *trie
	end    Bitset
	slices []*slice
	cache  int

	mu       sync.Mutex
	narrowed map[string]*slice // by class; nil where too few tokens
}

// maxNarrowed bounds the narrowed classes an [Engine] keeps; past it a
// position that would need a new one is walked.
const maxNarrowed = 16

// slice is the fast path for one character class of the grammar.
type slice struct {
	run    *gbnf.CodeRun
	tokens Bitset // tokens made only of the class's code points ([gbnf.CodeRun.Span])
	// links are each trie node's children that are not covered (their
	// subtree holds a token outside the slice), so that a walk never even
	// scans the covered ones (a node such as " " has thousands of
	// children, nearly all covered inside a string).
	links
	maxLen int // the longest token in the slice, in code points
	count  int
	// For a token outside the slice, by position in the trie's ids: the
	// code points of the class it starts with (exitK) and the byte after
	// them (exitB); exitK is -1 for a token in the slice.
	exitK   []int32
	exitB   []byte
	maxExit int // the largest exitK, at most maxExitRun
	// longest is, for each trie node whose subtree holds only tokens of
	// the slice, the most code points any of them has (a split code point
	// at its end counted); -1 where the subtree holds another token. A
	// walk inside a run shorter than maxLen (a string bounded below the
	// vocabulary's longest tokens) admits such a subtree at once when the
	// run from its node covers it, instead of walking every token of it.
	longest []int16
	// tail is, for each trie node whose edge and every byte below it are
	// ASCII members of the class, the most code points from its edge to
	// the end of a token below (at most 127); -1 elsewhere. Deeper in a
	// walk, where a run of the class goes on (the letters after the "."
	// of a domain, the string after a \u escape), such a subtree is
	// admitted at once when the run covers it.
	tail []int8
	// first holds the bytes that can start a member: where the matcher
	// does not allow them all, no run of the class goes on.
	first gbnf.ByteSet

	mu     sync.Mutex
	pruned map[gbnf.ByteSet]*links // by the bytes that may follow the run
}

// links are a trie's child lists: the children of node n are first[n],
// next[first[n]], ... (-1 ends).
type links struct {
	first, next []int32
}

// maxExitRun bounds how far into a token the run is followed to rule it
// out (tokens whose class prefix is longer are always walked), and
// maxPruned the variants of links a slice keeps.
const (
	maxExitRun = 64
	maxPruned  = 16
)

// NewEngine prepares g over vocab. The vocabulary's byte trie is built by
// the first NewEngine over it and shared by the later ones. The errors are
// those of [gbnf.NewMatcher] for a Grammar built by hand that does not
// compile.
func NewEngine(g *gbnf.Grammar, vocab *Vocabulary, opts *Options) (*Engine, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if _, err := gbnf.NewMatcher(g); err != nil {
		return nil, err
	}
	e := &Engine{g: g, vocab: vocab, t: vocab.theTrie(), end: NewBitset(vocab.Len()), cache: o.CacheEntries}
	if e.cache == 0 {
		e.cache = 256
	}
	for id, k := range vocab.kinds {
		if k == KindEnd {
			e.end.Set(id)
		}
	}
	if !o.NoSlices {
		e.prepareSlices()
	}
	return e, nil
}

// Vocabulary returns the vocabulary the [Engine] masks.
func (e *Engine) Vocabulary() *Vocabulary { return e.vocab }

// prepareSlices finds the grammar's broad character classes (negated ones,
// ".", or 26 ASCII characters and more: the bodies of strings, free text,
// the words of a pattern such as "^[a-z]+(-[a-z]+)*$") and, for each, the
// tokens made only of its code points.
func (e *Engine) prepareSlices() {
	seen := map[string]bool{}
	var classes []gbnf.Class
	var visit func(x gbnf.Expr)
	visit = func(x gbnf.Expr) {
		switch x := x.(type) {
		case gbnf.Class:
			key := string(gbnf.AppendClass(nil, x))
			if !seen[key] && broad(x) {
				seen[key] = true
				classes = append(classes, x)
			}
		case gbnf.Any:
			if !seen["."] {
				seen["."] = true
				classes = append(classes, gbnf.Class{Negated: true})
			}
		case gbnf.Group:
			for _, s := range x.Alts {
				for _, y := range s {
					visit(y)
				}
			}
		case gbnf.Repeat:
			visit(x.Expr)
		}
	}
	for _, r := range e.g.Rules {
		for _, s := range r.Alts {
			for _, x := range s {
				visit(x)
			}
		}
	}
	minCount := max(e.vocab.Len()/256, 1)
	for _, c := range classes {
		if s := e.vocab.slice(c); s.count >= minCount {
			e.slices = append(e.slices, s)
		}
	}
	sort.SliceStable(e.slices, func(i, j int) bool { return e.slices[i].count > e.slices[j].count })
	if len(e.slices) > maxSlices {
		e.slices = e.slices[:maxSlices]
	}
}

// broad reports whether c is worth a slice.
func broad(c gbnf.Class) bool {
	if c.Negated {
		return true
	}
	n := 0
	for _, r := range c.Ranges {
		if r.Hi >= 128 {
			return true
		}
		if r.Lo <= r.Hi {
			n += int(r.Hi - r.Lo + 1)
		}
	}
	return n >= 26
}

// slice returns the slice of class c over v, computing it on first use
// and keeping it for later Engines (most grammars share their string
// classes); at most maxSharedSlices are kept.
func (v *Vocabulary) slice(c gbnf.Class) *slice {
	key := string(gbnf.AppendClass(nil, c))
	v.mu.Lock()
	s, ok := v.slices[key]
	v.mu.Unlock()
	if ok {
		return s
	}
	s = v.newSlice(c)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.slices == nil || len(v.slices) >= maxSharedSlices {
		v.slices = map[string]*slice{}
	}
	v.slices[key] = s
	return s
}

// maxSharedSlices bounds the slices a [Vocabulary] keeps.
const maxSharedSlices = 64

func (v *Vocabulary) newSlice(c gbnf.Class) *slice {
	s := &slice{run: gbnf.NewCodeRun(c), tokens: NewBitset(v.Len())}
	t := v.theTrie()
	s.exitK = make([]int32, len(t.ids))
	s.exitB = make([]byte, len(t.ids))
	spans := make([]int16, len(t.ids))
	for k, id := range t.ids {
		p := v.Piece(int(id))
		n, end := s.run.Span(p)
		if end == len(p) {
			s.exitK[k] = -1
			s.tokens.Set(int(id))
			s.count++
			s.maxLen = max(s.maxLen, n)
			spans[k] = int16(min(n, math.MaxInt16))
			continue
		}
		s.exitK[k], s.exitB[k] = int32(n), p[end]
		s.maxExit = max(s.maxExit, min(n, maxExitRun))
	}
	s.links = s.prune(t, nil)
	// Children come after their parent in preorder: a reverse scan sees
	// them first.
	s.longest = make([]int16, len(t.edge))
	for n := len(t.edge) - 1; n >= 0; n-- {
		l := int16(0)
		for k := t.tokLo[n]; k < t.tokHi[n] && l >= 0; k++ {
			if s.exitK[k] >= 0 {
				l = -1
			} else {
				l = max(l, spans[k])
			}
		}
		for c := t.first[n]; c >= 0 && l >= 0; c = t.next[c] {
			if s.longest[c] < 0 {
				l = -1
			} else {
				l = max(l, s.longest[c])
			}
		}
		s.longest[n] = l
	}
	var ascii [128]bool
	for b := range 256 {
		if _, end := s.run.Span([]byte{byte(b)}); end == 1 {
			s.first.Add(byte(b))
			if b < 0x80 {
				ascii[b] = true
			}
		}
	}
	s.tail = make([]int8, len(t.edge))
	s.tail[0] = -1 // the root has no edge
	for n := len(t.edge) - 1; n > 0; n-- {
		l := int8(-1)
		if e := t.edge[n]; e < 0x80 && ascii[e] {
			l = 1
			for c := t.first[n]; c >= 0 && l >= 0; c = t.next[c] {
				if s.tail[c] < 0 || s.tail[c] == math.MaxInt8 {
					l = -1
				} else {
					l = max(l, s.tail[c]+1)
				}
			}
		}
		s.tail[n] = l
	}
	return s
}

// prune returns the child lists of the nodes whose subtree holds a token
// outside the slice that may be allowed: with follow nil any such token;
// else only those whose run of the class is longer than maxExitRun, or
// whose exit byte is in follow (the bytes that may come after a run of at
// most maxExit code points, [gbnf.Matcher.RunAllowed]). Children come after
// their parent in preorder, so a reverse scan sees them first.
func (s *slice) prune(t *trie, follow *gbnf.ByteSet) links {
	live := make([]bool, len(t.edge))
	l := links{first: make([]int32, len(t.edge)), next: make([]int32, len(t.edge))}
	for n := len(t.edge) - 1; n >= 0; n-- {
		ok := false
		for k := t.tokLo[n]; k < t.tokHi[n] && !ok; k++ {
			ok = s.exitK[k] >= 0 && (follow == nil || s.exitK[k] > maxExitRun || follow.Has(s.exitB[k]))
		}
		l.first[n], l.next[n] = -1, -1
		last := int32(-1)
		for c := t.first[n]; c >= 0; c = t.next[c] {
			if !live[c] {
				continue
			}
			ok = true
			if last < 0 {
				l.first[n] = c
			} else {
				l.next[last] = c
			}
			last = c
		}
		live[n] = ok
	}
	return l
}

// prunedFor returns the links pruned for follow, built on first use and
// kept (at most maxPruned variants; past that the plain links).
func (s *slice) prunedFor(t *trie, follow gbnf.ByteSet) *links {
	s.mu.Lock()
	l, ok := s.pruned[follow]
	full := len(s.pruned) >= maxPruned
	s.mu.Unlock()
	if ok {
		return l
	}
	if full {
		return &s.links
	}
	built := s.prune(t, &follow)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pruned == nil {
		s.pruned = map[gbnf.ByteSet]*links{}
	}
	if l, ok := s.pruned[follow]; ok {
		return l
	}
	s.pruned[follow] = &built
	return &built
}

// Session is one generation's position in the grammar and its cache of
// masks. It is not safe for concurrent use.
type Session struct {
	e     *Engine
	m     *gbnf.Matcher
	out   []byte // the bytes accepted so far, to replay after a cache rebuild
	ended bool

	cache map[gbnf.State]Bitset
	stats Stats

	// part is the slice whose run the walk is inside, though shorter than
	// its longest token (nil: none); depth counts the code points the
	// walk's current trie node starts.
	part  *slice
	depth int
	// deep are the slices whose runs a walk looks for at each node: the
	// Engine's and the narrowed one the mask started with (none when the
	// mask did not start with a narrowed one).
	deep []*slice
}

// Stats counts what a Session's masks cost.
type Stats struct {
	// Masks is the number of Fill calls; Cached of them were served from
	// the cache, Sliced used a free-text slice.
	Masks, Cached, Sliced int
	// Nodes is the number of trie edges the walks advanced over.
	Nodes int
	// Subtrees counts the trie subtrees admitted whole inside a run
	// shorter than the longest token of its class (a bounded string).
	Subtrees int
	// Replays counts recoveries after the matcher rebuilt its bounded
	// caches during a walk.
	Replays int
}

// NewSession starts a generation at the beginning of the grammar.
func (e *Engine) NewSession() *Session {
	m, _ := gbnf.NewMatcher(e.g) // checked by [NewEngine]
	s := &Session{e: e, m: m}
	if e.cache > 0 {
		s.cache = make(map[gbnf.State]Bitset)
	}
	return s
}

// Reset starts a new generation at the beginning of the grammar, keeping
// the Session's caches (a later generation of the same grammar meets the
// same positions).
func (s *Session) Reset() {
	s.m.Reset()
	s.out = s.out[:0]
	s.ended = false
}

// Output returns the bytes accepted so far. The caller must not modify
// them.
func (s *Session) Output() []byte { return s.out }

// Ended reports whether an end-of-generation token was accepted.
func (s *Session) Ended() bool { return s.ended }

// Complete reports whether the output so far is a complete sentence of the
// grammar: an end-of-generation token would be allowed now.
func (s *Session) Complete() bool { return !s.ended && s.m.Accepts() }

// Stats returns the counts so far.
func (s *Session) Stats() Stats { return s.stats }

// Fill sets dst to the tokens allowed next; dst must come from
// NewBitset(vocabulary length). After the end of the generation no token
// is allowed.
func (s *Session) Fill(dst Bitset) {
	if len(dst) != len(s.e.end) {
		panic(fmt.Sprintf("mask: Fill with a Bitset of %d words, want %d", len(dst), len(s.e.end)))
	}
	clear(dst)
	if s.ended {
		return
	}
	s.stats.Masks++
	key := s.m.State()
	if got, ok := s.cache[key]; ok {
		s.stats.Cached++
		copy(dst, got)
		return
	}
	for try := 0; !s.fill(dst, try < 2); try++ {
		// The matcher rebuilt its caches mid-walk: put it back where the
		// output left it, in the new caches, and walk again (after two
		// such walks, token by token).
		s.stats.Replays++
		s.replay()
		clear(dst)
		key = s.m.State()
	}
	if s.cache != nil {
		var buf Bitset
		if len(s.cache) >= s.e.cache {
			// Evict one entry, the first the map's randomised iteration
			// gives, and reuse its memory.
			for k, b := range s.cache {
				delete(s.cache, k)
				buf = b
				break
			}
		}
		s.cache[key] = append(buf[:0], dst...)
	}
}

func (s *Session) replay() {
	s.m.Reset()
	if _, err := s.m.Write(s.out); err != nil {
		panic("mask: the accepted output no longer matches: " + err.Error())
	}
}

// fill computes the mask at the matcher's position into dst (cleared); it
// returns false when the walk could not finish (a Rewind failed). Without
// trie it tries each token on its own, which always finishes: a walk
// explores many positions at once, a token only a few.
func (s *Session) fill(dst Bitset, trie bool) bool {
	if s.m.Accepts() {
		dst.or(s.e.end)
	}
	if !trie {
		for _, id := range s.e.t.ids {
			mk := s.m.Mark()
			if _, err := s.m.Write(s.e.vocab.Piece(int(id))); err == nil {
				dst.Set(int(id))
			}
			if !s.m.Rewind(mk) {
				s.replay()
			}
		}
		return true
	}
	l := &links{s.e.t.first, s.e.t.next}
	s.part, s.depth = nil, 0
	s.deep = s.deep[:0]
	for _, sl := range s.e.slices {
		run := s.m.Run(sl.run, sl.maxLen)
		narrowed := false
		if run < sl.maxLen {
			if n := s.e.narrow(s.m, sl); n != nil {
				if r := s.m.Run(n.run, n.maxLen); r >= n.maxLen || r > run {
					sl, run, narrowed = n, r, true
				}
			}
		}
		if run >= sl.maxLen {
			dst.or(sl.tokens)
			l = &sl.links
			if follow, ok := s.m.RunAllowed(sl.run, sl.maxExit); ok {
				l = sl.prunedFor(s.e.t, follow)
			}
			s.stats.Sliced++
			s.part = nil
			if narrowed {
				// Inside a pattern the tokens left to walk go on in other
				// runs (the letters after a domain's "."). Elsewhere the
				// look-ups would cost more than they spare.
				s.deep = append(append(s.deep, s.e.slices...), sl)
			}
			break
		}
		if run > 0 && s.part == nil {
			s.part = sl
		}
	}
	return s.walk(0, dst, l.first, l.next)
}

// narrow returns the slice of sl's class narrowed at m's position
// ([gbnf.Matcher.Narrow]: inside "\"" char+ "@" char+ "\"", char's class
// less "@"), built on first use; nil when there is none, or it is not
// [broad] (the "s" of a key where a string could start; a slice's build
// costs milliseconds), or it holds too few tokens to spare a walk.
func (e *Engine) narrow(m *gbnf.Matcher, sl *slice) *slice {
	c, ok := m.Narrow(sl.run, sl.maxLen)
	if !ok || !broad(c) {
		return nil
	}
	key := string(gbnf.AppendClass(nil, c))
	e.mu.Lock()
	n, ok := e.narrowed[key]
	full := len(e.narrowed) >= maxNarrowed
	e.mu.Unlock()
	if ok || full {
		return n
	}
	n = e.vocab.slice(c)
	if n.count < max(e.vocab.Len()/256, 1) {
		n = nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.narrowed == nil {
		e.narrowed = map[string]*slice{}
	}
	e.narrowed[key] = n
	return n
}

// walk adds the tokens below trie node n that the matcher accepts from its
// position, following the children that first and next link (the trie's
// own, or a slice's uncovered ones), and returns with the matcher where it
// started; false when it could not return (the matcher rebuilt its
// caches).
func (s *Session) walk(n int32, dst Bitset, first, next []int32) bool {
	t := s.e.t
	c := first[n]
	if c < 0 {
		return true
	}
	// With one child, Advance alone decides; with more, Allowed spares
	// the refused ones.
	var allowed gbnf.ByteSet
	if next[c] >= 0 {
		allowed = s.m.Allowed()
	} else {
		allowed.Add(t.edge[c])
	}
	// Inside a run shorter than the class's longest token, a child whose
	// subtree holds only the class's tokens, none longer than the run from
	// here, is admitted without a step.
	run := 0
	if s.part != nil {
		run = s.m.Run(s.part.run, s.part.maxLen)
	}
	deep := len(s.deep) > 0 && next[c] >= 0 // Allowed known
	mk := s.m.Mark()
	for ; c >= 0; c = next[c] {
		if !allowed.Has(t.edge[c]) {
			continue
		}
		if run > 0 {
			if l := s.part.longest[c]; l >= 0 && int(l)-s.depth <= run {
				s.admit(c, dst)
				continue
			}
		}
		if deep && s.admitTail(c, &allowed, dst) {
			continue
		}
		if !s.m.Advance(t.edge[c]) {
			continue
		}
		s.stats.Nodes++
		for k := t.tokLo[c]; k < t.tokHi[c]; k++ {
			dst.Set(int(t.ids[k]))
		}
		cp := 0
		if t.edge[c]&0xC0 != 0x80 {
			cp = 1 // c starts a code point
		}
		s.depth += cp
		if first[c] >= 0 && !s.admitSubtree(c, dst) && !s.walk(c, dst, first, next) {
			return false
		}
		s.depth -= cp
		if !s.m.Rewind(mk) {
			return false
		}
	}
	return true
}

// admitTail adds every token below trie node c, a child of the matcher's
// position, when the rest of each from c on is made of ASCII members of
// a class in s.deep whose run from here covers it; it reports whether it
// did. allowed is the matcher's Allowed: where it lacks a member's first
// byte, Run need not be asked.
func (s *Session) admitTail(c int32, allowed *gbnf.ByteSet, dst Bitset) bool {
	for _, sl := range s.deep {
		if l := sl.tail[c]; l >= 0 && covers(allowed, &sl.first) && s.m.Run(sl.run, sl.maxLen) >= int(l) {
			s.admit(c, dst)
			return true
		}
	}
	return false
}

// covers reports whether every byte of b is in a.
func covers(a, b *gbnf.ByteSet) bool {
	return b[0]&^a[0] == 0 && b[1]&^a[1] == 0 && b[2]&^a[2] == 0 && b[3]&^a[3] == 0
}

// admitSubtree adds every token below trie node c, where the matcher
// stands, when they are all tokens of s.part's slice and the run from
// here surely takes the rest of each (Run refuses in the middle of a code
// point, where depth would miscount); it reports whether it did.
func (s *Session) admitSubtree(c int32, dst Bitset) bool {
	sl := s.part
	if sl == nil || sl.longest[c] < 0 {
		return false
	}
	rest := int(sl.longest[c]) - s.depth
	if rest <= 0 || s.m.Run(sl.run, rest) < rest {
		return false
	}
	s.admit(c, dst)
	return true
}

// admit adds every token of trie node c's subtree.
func (s *Session) admit(c int32, dst Bitset) {
	t := s.e.t
	for k := t.tokAt[c]; k < t.tokAt[t.subtree[c]]; k++ {
		dst.Set(int(t.ids[k]))
	}
	s.stats.Subtrees++
}

// Accept feeds token id: its bytes, or for an end-of-generation token the
// end. It returns an error wrapping [ErrRefused], and leaves the [Session]
// unchanged, when the token is not allowed here (exactly when Fill would
// not have set it), [ErrFinished] after the end.
func (s *Session) Accept(id int) error {
	if s.ended {
		return ErrFinished
	}
	if id < 0 || id >= s.e.vocab.Len() {
		return fmt.Errorf("%w: token %d is not in the vocabulary", ErrRefused, id)
	}
	switch s.e.vocab.kinds[id] {
	case KindEnd:
		if !s.m.Accepts() {
			return fmt.Errorf("%w: end of generation (token %d) before the grammar is complete", ErrRefused, id)
		}
		s.ended = true
		return nil
	case KindControl:
		return fmt.Errorf("%w: control token %d", ErrRefused, id)
	}
	if !s.e.vocab.textual(id) {
		return fmt.Errorf("%w: token %d is empty or holds a NUL byte", ErrRefused, id)
	}
	p := s.e.vocab.Piece(id)
	mk := s.m.Mark()
	if _, err := s.m.Write(p); err != nil {
		if !s.m.Rewind(mk) {
			s.replay()
		}
		return fmt.Errorf("%w: token %d %q: %w", ErrRefused, id, p, err)
	}
	s.out = append(s.out, p...)
	return nil
}
