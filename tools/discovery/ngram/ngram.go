// Package ngram is toolgate's embedded default dense embedder: it needs no
// model, no network and no download.
//
// A text's vector is the feature-hashed sum of three kinds of evidence,
// each hashed with a sign into Dim buckets:
//
//   - character n-grams (3 to 5 bytes, with word-boundary padding) of the
//     folded tokens, so that inflections, typos and compounds overlap
//     ("upload", "uploads", "uploader");
//   - stemmed terms (analysis.Terms), so whole-word matches weigh more than
//     shared fragments;
//   - lexicon concepts (lexicon.Concepts): a word's hand-written tool
//     vocabulary group or common WordNet synsets, and for Spanish and Polish
//     words those of their English translations, so that "delete file",
//     "remove document" and "borrar archivo" share features. A word with
//     several concepts spreads its weight over them (1/√n each). Two- and
//     three-word phrases the lexicon lists ("pull request", "turn off",
//     "base de datos") add their concepts too.
//
// Stop words are skipped, repeated features are weighted sublinearly
// (1 + ln tf) and the vector is L2-normalized, so the dot product of two
// vectors is their cosine similarity. Embedding is deterministic: the same
// text gives the same vector in every process and build.
//
// An Embedder caches the features of the tokens it has seen and of the
// three-token windows that may start a phrase of the lexicon
// ([Options.FeatureCache] features, 2^18 or about 4 MiB by default; the cache
// starts over when full), so that a request made of known words costs
// look-ups rather than hashing, stemming and lexicon queries. A window
// that starts no phrase (most of them: lexicon.MayStartPhrase) is decided
// in two map look-ups and not cached. The cache changes no vector.
package ngram

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/toolgate/toolgate/tools/discovery/analysis"
	"github.com/toolgate/toolgate/tools/discovery/lexicon"
)

// Defaults.
const (
	DefaultDim  = 512
	DefaultMinN = 3
	DefaultMaxN = 5
)

// ErrOptions is wrapped by NewChecked's errors for invalid options.
var ErrOptions = errors.New("ngram: invalid options")

// Options configures an Embedder. A nil *Options means all defaults.
type Options struct {
	// Dim is the vector length, a power of two in [64, 65536]. Zero means
	// [DefaultDim] (512).
	Dim int
	// MinN and MaxN bound the character n-gram sizes, 1 ≤ MinN ≤ MaxN ≤ 8.
	// Zero means [DefaultMinN] (3) and [DefaultMaxN] (5).
	MinN, MaxN int
	// Analyzer tokenizes, detects the language, removes stop words and
	// stems. Nil means analysis.New(nil).
	Analyzer *analysis.Analyzer
	// Lexicon maps words to concepts. Nil means lexicon.Default().
	Lexicon *lexicon.Lexicon
	// NoLexicon turns concept features off (n-grams and terms only).
	NoLexicon bool
	// NGramWeight, TermWeight and ConceptWeight scale the three kinds of
	// evidence. Zero means 1, 1.5 and 1.5; a negative value turns that kind
	// off.
	NGramWeight, TermWeight, ConceptWeight float64
	// FeatureCache bounds how many features the Embedder keeps for the
	// tokens and phrase windows it has seen (16 bytes each; the cache
	// starts over when full and changes no vector). Zero means
	// [DefaultFeatureCache]; a negative value keeps none.
	FeatureCache int
}

// DefaultFeatureCache is the default [Options.FeatureCache]: 2^18 features,
// about 4 MiB.
const DefaultFeatureCache = 1 << 18

// Embedder embeds texts into Dim-dimensional unit vectors. It is immutable
// after New and safe for concurrent use.
type Embedder struct {
	dim        int
	minN, maxN int
	an         *analysis.Analyzer
	lex        *lexicon.Lexicon
	wNgram     float32
	wTerm      float32
	wConcept   float32
	scratchers sync.Pool
	// cache keeps the features of recent tokens and phrase windows (what
	// rawFeatures appends for them is a function of the window and the
	// language alone), so that a request made of known words is mostly
	// look-ups.
	cache featureCache
}

// featureCache maps a token or phrase window, in a language, to the
// features it contributes. It holds at most max features and starts over
// when full. Keys are one string each (see tokenKey and phraseKey), built
// in a scratch buffer so that a look-up hashes one string and allocates
// nothing; stored keys are copies. Stored features are copied into slab,
// a block of slabFeatures shared by many entries, rather than each into
// an allocation of its own: a new request's words are stored a few at a
// time. Each entry's slice is capped at its length, so that an append to
// it cannot write into the next; the slabs go with the map when the cache
// starts over. A slab given up for a new one leaves fewer than
// slabFeatures/8 of its features unused: a longer entry is stored alone.
type featureCache struct {
	max  int // 0: keep nothing
	mu   sync.RWMutex
	m    map[string][]Feature
	n    int
	slab []Feature
}

// slabFeatures is how many features a featureCache's slab holds (16 KiB).
const slabFeatures = 1024

// tokenKey is the key of a token in lang: the language, a 0 byte, the
// token. phraseKey is the key of a window: a 1 byte, then its three tokens
// each ended by a 0 byte (the language plays no part in a window's
// concepts). Tokens are runs of letters and digits, so they hold neither
// byte and no two keys collide.
func tokenKey(buf []byte, lang analysis.Lang, tok string) []byte {
	buf = append(append(append(buf[:0], lang...), 0), tok...)
	return buf
}

func phraseKey(buf []byte, w [3]string) []byte {
	buf = append(buf[:0], 1)
	for _, t := range w {
		buf = append(append(buf, t...), 0)
	}
	return buf
}

func (c *featureCache) get(key []byte) ([]Feature, bool) {
	c.mu.RLock()
	f, ok := c.m[string(key)]
	c.mu.RUnlock()
	return f, ok
}

// put stores f for key.
func (c *featureCache) put(key []byte, f []Feature) {
	if len(f)+1 > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.n+len(f)+1 > c.max {
		c.m, c.n, c.slab = make(map[string][]Feature), 0, nil
	}
	switch {
	case len(f) > slabFeatures/8:
		// A long token's features go on their own: the slab's free tail,
		// which a new slab leaves unused, is never more than an eighth.
		c.m[string(key)] = slices.Clip(slices.Clone(f))
	default:
		if len(f) > cap(c.slab)-len(c.slab) {
			c.slab = make([]Feature, 0, min(slabFeatures, c.max))
		}
		at := len(c.slab)
		c.slab = append(c.slab, f...)
		c.m[string(key)] = c.slab[at:len(c.slab):len(c.slab)]
	}
	c.n += len(f) + 1
}

// New returns an Embedder configured by opts (nil means defaults). Invalid
// fields are replaced by their defaults; [NewChecked] reports them instead.
func New(opts *Options) *Embedder {
	e, err := NewChecked(opts)
	if err == nil {
		return e
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if validDim(o.Dim) != nil {
		o.Dim = 0
	}
	if validN(o.MinN, o.MaxN) != nil {
		o.MinN, o.MaxN = 0, 0
	}
	e, _ = NewChecked(&o)
	return e
}

func validDim(d int) error {
	if d == 0 {
		return nil
	}
	if d < 64 || d > 65536 || d&(d-1) != 0 {
		return fmt.Errorf("%w: Dim %d is not a power of two in [64, 65536]", ErrOptions, d)
	}
	return nil
}

func validN(minN, maxN int) error {
	if minN == 0 && maxN == 0 {
		return nil
	}
	if minN == 0 {
		minN = DefaultMinN
	}
	if maxN == 0 {
		maxN = DefaultMaxN
	}
	if minN < 1 || maxN > 8 || minN > maxN {
		return fmt.Errorf("%w: MinN %d and MaxN %d must satisfy 1 ≤ MinN ≤ MaxN ≤ 8", ErrOptions, minN, maxN)
	}
	return nil
}

// NewChecked is New that rejects invalid options with an error wrapping
// [ErrOptions] that names the field.
func NewChecked(opts *Options) (*Embedder, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := validDim(o.Dim); err != nil {
		return nil, err
	}
	if err := validN(o.MinN, o.MaxN); err != nil {
		return nil, err
	}
	e := &Embedder{dim: o.Dim, minN: o.MinN, maxN: o.MaxN, an: o.Analyzer, lex: o.Lexicon}
	if e.dim == 0 {
		e.dim = DefaultDim
	}
	if e.minN == 0 {
		e.minN = DefaultMinN
	}
	if e.maxN == 0 {
		e.maxN = DefaultMaxN
	}
	if e.an == nil {
		e.an = analysis.New(nil)
	}
	if e.lex == nil && !o.NoLexicon {
		e.lex = lexicon.Default()
	}
	if o.NoLexicon {
		e.lex = nil
	}
	if e.lex != nil {
		// A token's English concepts are looked up by the stem its term
		// feature has made: the Analyzer keeps it.
		e.lex = e.lex.WithStemmer(e.an)
	}
	weight := func(w, def float64) float32 {
		switch {
		case w == 0:
			return float32(def)
		case w < 0:
			return 0
		}
		return float32(w)
	}
	e.wNgram = weight(o.NGramWeight, 1)
	e.wTerm = weight(o.TermWeight, 1.5)
	e.wConcept = weight(o.ConceptWeight, 1.5)
	e.scratchers.New = func() any { return &scratch{} }
	switch {
	case o.FeatureCache == 0:
		e.cache.max = DefaultFeatureCache
	case o.FeatureCache > 0:
		e.cache.max = o.FeatureCache
	}
	return e, nil
}

// DropCache empties the feature cache, and its memory goes with it: a
// caller that has just embedded a big catalog's cards drops what they left
// there (at 100,000 cards, 8 MiB of their vocabulary), which a request
// then fills again with its own words. It changes no vector; safe for
// concurrent use.
func (e *Embedder) DropCache() {
	e.cache.mu.Lock()
	defer e.cache.mu.Unlock()
	e.cache.m, e.cache.n, e.cache.slab = nil, 0, nil
}

// CachedFeatures returns how many features the cache holds, at most
// [Options.FeatureCache].
func (e *Embedder) CachedFeatures() int {
	e.cache.mu.RLock()
	defer e.cache.mu.RUnlock()
	return e.cache.n
}

// Dim returns the length of the vectors Embed returns.
func (e *Embedder) Dim() int { return e.dim }

// Embed returns one unit vector of length Dim per text, in order. The
// vectors belong to the caller. A text with no usable word (empty, only
// stop words or digits) gets the zero vector. Embed checks ctx between
// texts and returns ctx.Err() if it is done; it returns no other error.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*e.dim)
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = e.EmbedTo(flat[i*e.dim:(i+1)*e.dim:(i+1)*e.dim], t)
	}
	return out, nil
}

// EmbedTo writes the unit vector of text into dst and returns it. dst is
// reused when its capacity is at least Dim, otherwise a new slice is
// allocated. With a reused dst, EmbedTo does not allocate in the steady
// state (beyond the analyzer's one string per text).
func (e *Embedder) EmbedTo(dst []float32, text string) []float32 {
	if cap(dst) < e.dim {
		dst = make([]float32, e.dim)
	}
	dst = dst[:e.dim]
	clear(dst)
	sc := e.scratchers.Get().(*scratch)
	mask := uint64(e.dim - 1)
	for _, f := range e.distinct(sc, text) {
		b, v := f.bucket(mask)
		dst[b] += v
	}
	e.scratchers.Put(sc)
	var norm float64
	for _, v := range dst {
		norm += float64(v) * float64(v)
	}
	if norm > 0 {
		inv := float32(1 / math.Sqrt(norm))
		for i := range dst {
			dst[i] *= inv
		}
	}
	return dst
}

// distinct returns the distinct features of text (in sc), in the order
// both embeddings sum them.
func (e *Embedder) distinct(sc *scratch, text string) []Feature {
	sc.merged = sc.table.merge(sc.merged[:0], e.rawFeatures(sc, text))
	return sc.merged
}

// bucket returns the dimension f adds to, of a vector whose dimension
// is mask+1, and the signed weight it adds.
func (f Feature) bucket(mask uint64) (uint64, float32) {
	if f.H>>63 != 0 {
		return f.H & mask, -f.W
	}
	return f.H & mask, f.W
}

// EmbedNonZero appends the non-zero dimensions of text's unit vector (the
// one EmbedTo returns), in ascending order, to dims and their values to
// vals, and returns both. It touches only the dimensions the text's
// features hash to, so a short text costs its features rather than Dim;
// with reused slices it does not allocate in the steady state. It keeps
// no reference to text, which the caller may then overwrite.
func (e *Embedder) EmbedNonZero(dims []int32, vals []float32, text string) ([]int32, []float32) {
	sc := e.scratchers.Get().(*scratch)
	dims, vals = e.nonZero(sc, dims, vals, e.rawFeatures(sc, text))
	e.scratchers.Put(sc)
	return dims, vals
}

// EmbedTokensNonZero is EmbedNonZero for a text whose folded tokens (what
// [analysis.Analyzer.Tokens] returns for it, stop words included) and
// language (what the Embedder's Analyzer detects for it) the caller has
// already: the same dimensions and values, without analysing the text
// again. toks is only read.
func (e *Embedder) EmbedTokensNonZero(dims []int32, vals []float32, toks []string, lang analysis.Lang) ([]int32, []float32) {
	sc := e.scratchers.Get().(*scratch)
	sc.raw = e.tokensFeatures(sc, sc.raw[:0], toks, lang)
	dims, vals = e.nonZero(sc, dims, vals, sc.raw)
	e.scratchers.Put(sc)
	return dims, vals
}

// nonZero appends the non-zero dimensions of the unit vector of the
// features raw (with repeats), ascending, to dims and their values to
// vals. Each distinct feature is added to its dimension as the
// table's merge would emit it, with no slice of them in between.
func (e *Embedder) nonZero(sc *scratch, dims []int32, vals []float32, raw []Feature) ([]int32, []float32) {
	if len(sc.dense) != e.dim {
		sc.dense = make([]float32, e.dim)
		sc.used = make([]uint64, (e.dim+63)/64)
	}
	dense, used := sc.dense, sc.used
	sc.table.sum(raw, uint64(e.dim-1), dense, used)
	// The same sums as EmbedTo's, in the same order: its zeros add nothing.
	// Room for every dimension touched is made once, not an append each.
	n := 0
	for _, word := range used {
		n += bits.OnesCount64(word)
	}
	d0, start := len(dims), len(vals)
	dims, vals = slices.Grow(dims, n)[:d0+n], slices.Grow(vals, n)[:start+n]
	outD, outV := dims[d0:], vals[start:]
	k := 0
	var norm float64
	for w, word := range used {
		for word != 0 {
			b := w*64 + bits.TrailingZeros64(word)
			word &= word - 1
			if v := dense[b]; v != 0 {
				norm += float64(v) * float64(v)
				outD[k], outV[k] = int32(b), v
				k++
			}
			dense[b] = 0
		}
		used[w] = 0
	}
	dims, vals = dims[:d0+k], vals[:start+k]
	if norm > 0 {
		inv := float32(1 / math.Sqrt(norm))
		for i := start; i < len(vals); i++ {
			vals[i] *= inv
		}
	}
	return dims, vals
}

// Feature is one hashed feature of a text: H is a 64-bit hash (its low
// bits pick the bucket, its top bit the sign) and W its weight after
// sublinear tf scaling.
type Feature struct {
	H uint64
	W float32
}

// Features appends the hashed features of text to dst, sorted by H with
// each hash once, and returns the extended slice. It is what EmbedTo sums;
// it lets an index keep a sparse representation instead of a dense vector.
func (e *Embedder) Features(dst []Feature, text string) []Feature {
	sc := e.scratchers.Get().(*scratch)
	start := len(dst)
	dst = sc.table.merge(dst, e.rawFeatures(sc, text))
	e.scratchers.Put(sc)
	slices.SortFunc(dst[start:], func(a, b Feature) int { return cmp.Compare(a.H, b.H) })
	return dst
}

type scratch struct {
	toks     []string
	concepts []lexicon.Concept
	raw      []Feature
	merged   []Feature // raw's distinct features
	table    featureTable
	key      []byte    // a feature cache key
	padded   []byte    // a token with a space either side (ngrams)
	dense    []float32 // EmbedNonZero's sums, all zero between calls
	used     []uint64  // and the dimensions it touched, a bit each
}

// featureTable merges repeated features without sorting: an
// open-addressing hash set, reused across calls. Between calls every slot
// is zero; used marks the slots a call filled, so that it reads and
// clears only those.
type featureTable struct {
	slots []tableSlot
	used  []uint64 // a bit per slot
}

type tableSlot struct {
	h     uint64
	w     float32
	count int32
}

// merge appends to dst each distinct hash of raw once, with weight
// w·(1 + ln tf) where w is the hash's largest single weight, in an
// unspecified order (the same for the same raw), and returns dst.
func (t *featureTable) merge(dst, raw []Feature) []Feature {
	slots, used := t.insert(raw)
	// In slot order, as a scan of every slot would emit them.
	for k, word := range used {
		for word != 0 {
			i := k*64 + bits.TrailingZeros64(word)
			word &= word - 1
			dst = append(dst, slots[i].take())
		}
		used[k] = 0
	}
	return dst
}

// sum adds each feature merge would emit for raw, in merge's order, to
// its dimension of dense (a vector of mask+1 dimensions, signed by the
// hash's top bit as bucket says) and sets the dimension's bit
// in dims.
func (t *featureTable) sum(raw []Feature, mask uint64, dense []float32, dims []uint64) {
	slots, used := t.insert(raw)
	for k, word := range used {
		for word != 0 {
			i := k*64 + bits.TrailingZeros64(word)
			word &= word - 1
			// take, by hand: a call per feature cost a sixth of the loop.
			sl := &slots[i]
			f := Feature{H: sl.h, W: sl.w}
			if sl.count > 1 {
				f.W *= tfScale(sl.count)
			}
			*sl = tableSlot{}
			b, v := f.bucket(mask)
			dense[b] += v
			dims[b/64] |= 1 << (b % 64)
		}
		used[k] = 0
	}
}

// take returns the slot's merged feature and empties the slot.
func (s *tableSlot) take() Feature {
	f := Feature{H: s.h, W: s.w}
	if s.count > 1 {
		f.W *= tfScale(s.count)
	}
	*s = tableSlot{}
	return f
}

// tfScale is a feature's sublinear tf scale, 1 + ln count, as a float32:
// from tfScales below its length, computed past it. A long request
// repeats many n-grams ("ing", "tion"): the logarithm was 3% of the CPU
// of BFCL's longest requests.
func tfScale(count int32) float32 {
	if uint32(count) < uint32(len(tfScales)) {
		return tfScales[count]
	}
	return 1 + float32(math.Log(float64(count)))
}

// tfScales holds 1 + ln c for every count c below its length, each the
// very float32 the formula gives (tfScales[0] is unused).
var tfScales = func() (t [64]float32) {
	for c := 1; c < len(t); c++ {
		t[c] = 1 + float32(math.Log(float64(c)))
	}
	return t
}()

// insert counts each distinct hash of raw in the table with its largest
// weight, and returns the slots and the bits of those filled; the caller
// empties each filled slot and clears the bits.
func (t *featureTable) insert(raw []Feature) ([]tableSlot, []uint64) {
	size := 16
	for size < 2*len(raw) {
		size <<= 1
	}
	if cap(t.slots) < size {
		t.slots = make([]tableSlot, size)
		t.used = make([]uint64, (size+63)/64)
	}
	slots, used := t.slots[:size], t.used[:(size+63)/64]
	mask := uint64(size - 1)
	for _, f := range raw {
		h := f.H
		if h == 0 {
			h = 1 // 0 marks an empty slot
		}
		for i := h & mask; ; i = (i + 1) & mask {
			s := &slots[i]
			if s.count == 0 {
				*s = tableSlot{h: h, w: f.W, count: 1}
				used[i/64] |= 1 << (i % 64)
				break
			}
			if s.h == h {
				s.w = max(s.w, f.W)
				s.count++
				break
			}
		}
	}
	return slots, used
}

// Seeds that keep the three feature kinds apart in hash space.
const (
	seedNgram   = 0x9e3779b97f4a7c15
	seedTerm    = 0xc2b2ae3d27d4eb4f
	seedConcept = 0x165667b19e3779f9
)

// rawFeatures returns the features of text with repeats, in sc.raw.
// The tokens are the analyzer's transient ones: read here, copied only
// into cache keys, cleared before the analyzer reuses their buffer.
func (e *Embedder) rawFeatures(sc *scratch, text string) []Feature {
	e.an.TokensLangFunc(sc.toks[:0], text, func(toks []string, lang analysis.Lang) {
		sc.toks = toks
		sc.raw = e.tokensFeatures(sc, sc.raw[:0], toks, lang)
		clear(sc.toks)
	})
	return sc.raw
}

// tokensFeatures appends to raw the features of a text whose folded
// tokens are toks, in lang, and returns it; toks is only read.
func (e *Embedder) tokensFeatures(sc *scratch, raw []Feature, toks []string, lang analysis.Lang) []Feature {
	for _, tok := range toks {
		// A token without features (digits, a stop word) is cached
		// too: one look-up decides it.
		sc.key = tokenKey(sc.key, lang, tok)
		if f, ok := e.cache.get(sc.key); ok {
			raw = append(raw, f...)
			continue
		}
		n0 := len(raw)
		if hasLetter(tok) && !analysis.IsStopWord(lang, tok) && (lang == analysis.English || !analysis.IsStopWord(analysis.English, tok)) {
			raw = e.tokenFeatures(sc, raw, lang, tok)
		}
		e.cache.put(sc.key, raw[n0:])
	}
	if e.lex != nil && e.wConcept > 0 {
		raw = e.phraseFeatures(sc, raw, toks)
	}
	return raw
}

// tokenFeatures appends the features of one token of a text in lang.
func (e *Embedder) tokenFeatures(sc *scratch, raw []Feature, lang analysis.Lang, tok string) []Feature {
	// Character n-grams of " tok ", weighted so that each token's
	// n-grams carry about the same total mass whatever its length.
	if e.wNgram > 0 {
		n0 := len(raw)
		sc.padded = append(append(append(sc.padded[:0], ' '), tok...), ' ')
		raw = e.ngrams(raw, sc.padded)
		if k := len(raw) - n0; k > 0 {
			w := e.wNgram / float32(math.Sqrt(float64(k)))
			for i := n0; i < len(raw); i++ {
				raw[i].W = w
			}
		}
	}
	if e.wTerm > 0 {
		term := tok
		if lang == analysis.English && e.lex != nil {
			if lemma, ok := e.lex.Lemma(tok); ok { // "sent" → "send"
				term = lemma
			}
		}
		raw = append(raw, Feature{H: hashString(seedTerm, e.an.Stem(lang, term)), W: e.wTerm})
	}
	if e.lex != nil && e.wConcept > 0 {
		sc.concepts = e.conceptsOf(sc.concepts[:0], lang, tok)
		// An ambiguous word spreads its weight over its concepts, so
		// that a word with many senses does not outweigh a precise one.
		spread := float32(1)
		if len(sc.concepts) > 1 {
			spread = 1 / float32(math.Sqrt(float64(len(sc.concepts))))
		}
		for _, c := range sc.concepts {
			raw = append(raw, Feature{H: mix(seedConcept ^ c.ID), W: e.wConcept * c.Weight * spread})
		}
	}
	return raw
}

// phraseFeatures appends the concepts of the two- and three-word phrases
// the lexicon knows ("pull request", "turn off", "base de datos"), matched
// on the tokens before stop-word removal.
func (e *Embedder) phraseFeatures(sc *scratch, raw []Feature, toks []string) []Feature {
	for i := 0; i+1 < len(toks); i++ {
		// Most windows start no phrase the lexicon knows: deciding that
		// costs less than a cache look-up, and they stay out of the cache.
		w := [3]string{toks[i], toks[i+1]}
		if i+2 < len(toks) {
			w[2] = toks[i+2]
		}
		if !e.lex.MayStartPhrase(w[0], w[1], w[2]) {
			continue
		}
		sc.key = phraseKey(sc.key, w)
		if f, ok := e.cache.get(sc.key); ok {
			raw = append(raw, f...)
			continue
		}
		n0 := len(raw)
		sc.concepts = sc.concepts[:0]
		if i+2 < len(toks) {
			sc.concepts = e.lex.PhraseConcepts(sc.concepts, "", toks[i], toks[i+1], toks[i+2])
		}
		sc.concepts = e.lex.PhraseConcepts(sc.concepts, "", toks[i], toks[i+1], "")
		spread := float32(1)
		if len(sc.concepts) > 1 {
			spread = 1 / float32(math.Sqrt(float64(len(sc.concepts))))
		}
		for _, c := range sc.concepts {
			raw = append(raw, Feature{H: mix(seedConcept ^ c.ID), W: e.wConcept * c.Weight * spread})
		}
		e.cache.put(sc.key, raw[n0:])
	}
	return raw
}

// conceptsOf returns the concepts of a token: read in the detected
// language first; when that gives nothing, in the other languages, since
// a short request's language is often unknowable and tool names mix
// English into Spanish and Polish requests.
func (e *Embedder) conceptsOf(dst []lexicon.Concept, lang analysis.Lang, tok string) []lexicon.Concept {
	dst = e.lex.Concepts(dst, lang, tok)
	if len(dst) > 0 {
		return dst
	}
	for _, l := range analysis.Languages {
		if l != lang {
			dst = e.lex.Concepts(dst, l, tok)
		}
	}
	return dst
}

// ngrams appends the character n-grams of padded, a token with a space
// either side (byte-wise; folded text is mostly ASCII), to raw.
func (e *Embedder) ngrams(raw []Feature, padded []byte) []Feature {
	n := len(padded)
	for size := e.minN; size <= e.maxN; size++ {
		if size > n {
			break
		}
		for i := 0; i+size <= n; i++ {
			h := uint64(seedNgram) ^ uint64(size)
			for _, c := range padded[i : i+size] {
				h ^= uint64(c)
				h *= 0x100000001b3
			}
			raw = append(raw, Feature{H: mix(h)})
		}
	}
	return raw
}

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return true
		}
	}
	return false
}

func hashString(seed uint64, s string) uint64 {
	h := seed
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return mix(h)
}

// mix is the splitmix64 finalizer: it spreads FNV's weak low bits.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
