package discovery

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery/analysis"
	"github.com/toolgate/toolgate/tools/discovery/lexicon"
)

// Embedder turns texts into vectors for the dense side of discovery.
//
// Embed returns one vector per text, in order, all of the same length. It
// may be called concurrently. The returned slices belong to the caller.
// Errors are wrapped into the discovery error that reports them. An
// Embedder that also has a method EmbedTo(dst []float32, text string)
// []float32, returning the vector Embed would (written into dst when its
// capacity suffices), is called that way for requests, so that a query
// does not allocate its vector; ngram.Embedder has one. One that also has
// Dim() int and EmbedNonZero(dims []int32, vals []float32, text string)
// ([]int32, []float32), appending the non-zero dimensions of that vector
// (ascending, each below Dim) and their values, embeds the cards that way
// when a catalog is indexed, as ngram.Embedder does.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Reformulator rewrites a request that discovery could not match with
// confidence (an LLM rewrite, or lexicon expansion offline). It may be
// called concurrently. An error or an empty result keeps the first search.
type Reformulator interface {
	Reformulate(ctx context.Context, query string) (string, error)
}

// Errors.
var (
	// ErrEmbedder is wrapped when an Embedder returns vectors of the wrong
	// number or size.
	ErrEmbedder = errors.New("discovery: embedder returned malformed vectors")
	// ErrOptions is wrapped by New for an invalid option.
	ErrOptions = errors.New("discovery: invalid options")
	// ErrNoView is returned by Shortlist for a nil view.
	ErrNoView = errors.New("discovery: no authorized view")
	// ErrQueryTooLong is wrapped by Shortlist for a [Request.Query] longer
	// than [Options.MaxQueryBytes]; the error names both lengths. It is the
	// caller's input error (an HTTP 400), not a failure of discovery.
	ErrQueryTooLong = errors.New("discovery: query too long")
)

// DefaultMaxQueryBytes is the default [Options.MaxQueryBytes]: above every
// request of the public datasets (the longest, in BFCL, is 10,759 bytes),
// small enough that a query's memory stays in the low megabytes.
const DefaultMaxQueryBytes = 16 << 10

// Method selects how Shortlist ranks. Only [MethodHybrid] is meant for
// production; the others exist for measurement.
type Method int

const (
	// MethodHybrid fuses lexical BM25F (with identifier awareness) and the
	// dense side. The default.
	MethodHybrid Method = iota
	// MethodLexical is BM25F with identifier awareness, without the dense side.
	MethodLexical
	// MethodDense is the dense side alone.
	MethodDense
	// MethodBM25 is the plain baseline: BM25 over name and description.
	MethodBM25
)

// Fusion selects how the lexical and dense rankings are combined.
type Fusion int

const (
	// FusionScore adds the two sides' scores, each normalised by its best
	// score for the query, with the lexical side weighted LexicalWeight.
	// The default: it beat reciprocal rank fusion on recall@5 on every dataset
	// (docs/benchmarks.md).
	FusionScore Fusion = iota
	// FusionRRF is reciprocal rank fusion, Σ 1/(60 + rank).
	FusionRRF
)

// Options configures a Discoverer. A nil *Options means all defaults.
type Options struct {
	// Embedder computes the dense vectors. Nil means the embedded default
	// (hashed character n-grams plus the shipped lexicon; no model, no
	// network).
	Embedder Embedder
	// NoDense turns the dense side off ([Options.Embedder] is ignored).
	NoDense bool
	// Reformulator rewrites low-confidence requests. Nil means lexicon
	// expansion (synonyms and Spanish/Polish → English).
	Reformulator Reformulator
	// ReformulateBelow is the confidence under which the [Options.Reformulator] is
	// used. Zero means 0.1 (offline lexicon expansion lowered recall when
	// used more often; an LLM rewrite may warrant more); a negative value
	// never reformulates.
	ReformulateBelow float64
	// FuseReformulation fuses a reformulated search with the first one (the
	// union of both candidate lists, each tool at its better score) instead
	// of keeping the more confident of the two. Meant for a model rewrite
	// (runtime.ModelReformulator), which names the action, object and
	// system in tool words but drops the request's identifiers; false
	// keeps the offline default's choice.
	FuseReformulation bool
	// K is the default shortlist size when a [Request] leaves K zero. Zero means 5.
	K int
	// Method selects the ranking. The zero value is [MethodHybrid].
	Method Method
	// Fusion selects how the hybrid method combines its sides. The zero
	// value is [FusionScore].
	Fusion Fusion
	// LexicalWeight is [FusionScore]'s weight of the lexical side in (0,1].
	// Zero means 0.8.
	LexicalWeight float64
	// DenseRerank is how many of the lexical side's best tools the dense
	// side re-scores. Zero means 150.
	DenseRerank int
	// DenseExactLimit bounds the fallback for a request the lexical side
	// (almost) cannot match, fewer than [Options.K] tools: with at most this many
	// authorized tools, the dense side then scores every authorized tool.
	// Zero means 5,000.
	DenseExactLimit int
	// MaxQueryBytes bounds the length of [Request.Query]: a longer query is
	// refused with an error wrapping [ErrQueryTooLong], and each of the
	// context turns used (the last two) is cut to this length at a UTF-8
	// boundary ([Shortlist.ContextTruncated] says so). The work and memory
	// of one query are linear in its length. Zero means
	// [DefaultMaxQueryBytes] (16 KiB).
	MaxQueryBytes int
	// Log records every query. Nil records nothing.
	Log Log
	// MaxSessions bounds the sessions whose current request's first
	// shortlist is kept, so that RecordOutcome can count a call of a tool
	// it lacked (toolgate_discovery_misses_total) as it happens; beyond
	// it, the session whose first request came earliest is forgotten. Zero means
	// [DefaultMaxSessions]; negative keeps none (no misses are counted).
	MaxSessions int
	// Registerer receives the discovery metrics. Nil registers none.
	Registerer prometheus.Registerer
	// Clock returns the current time for logs, metrics and build stats. Nil
	// means [time.Now].
	Clock func() time.Time
	// Analyzer analyses cards and requests. Nil means analysis.New(nil).
	Analyzer *analysis.Analyzer
	// Lexicon is the word knowledge used to translate Spanish and Polish
	// requests, to widen English ones and (for the default [Options.Embedder]) to
	// embed concepts. Nil means lexicon.Default(), the embedded data;
	// [lexicon.Open] adds optional files.
	Lexicon *lexicon.Lexicon
	// NoCompanions turns off companions: by default, when a tool leading
	// the ranking needs an input the request does not carry and that
	// another authorized tool produces (an authentication token from a
	// get-token tool, an entity's id from the tool that lists or finds
	// it), that producer is added to the shortlist, after every tool the
	// request ranked and in place of one that did not clearly match
	// ([Candidate.CompanionOf]). [MethodBM25], the plain baseline, never
	// adds companions.
	NoCompanions bool
	// NoBackgroundIDF turns off the background IDF: by default each
	// term's IDF is capped by its frequency in a large catalog of tool
	// descriptions (BFCL's 2,573 functions, embedded), so that in a small
	// catalog a word every tool description uses ("detailed",
	// "information") does not make the one short card that has it rank
	// first. It raised MetaTool's recall@5 0.651 -> 0.660 and the MRR of
	// every set but BFCL, which it is made of (docs/discovery.md).
	// [MethodBM25], the plain baseline, keeps its plain IDF.
	NoBackgroundIDF bool
	// Model adds a dense ranking by an embedding model the user runs,
	// fused with the ranking above (see [ModelOptions]). Nil means none,
	// and costs nothing.
	Model *ModelOptions
}

// Request is one discovery query.
type Request struct {
	// Query is the user's request in their words.
	Query string
	// Context holds recent turns of the conversation, newest last. They
	// help follow-ups ("and close it") and weigh less than [Request.Query]. Only the
	// last two are used, each cut to [Options.MaxQueryBytes].
	Context []string
	// K is the shortlist size. Zero means the [Discoverer]'s default.
	K int
	// Session and [Request.Source] go to the log only ([Entry.Session], [Entry.Source]),
	// so that a later call can be linked to this query. They never change
	// the ranking. A Session longer than [MaxSessionBytes] is logged as its
	// digest.
	Session, Source string
}

// Candidate is one shortlisted tool.
type Candidate struct {
	// Tool is the authorized tool; its full schema is Tool.InputSchema.
	Tool *tools.Tool
	// Score is the fused relevance in [0,1]; higher is better.
	Score float64
	// Lexical and [Candidate.Dense] are the two sides' normalised scores in [0,1].
	Lexical, Dense float64
	// Identifier reports that a parameter of the tool can take an exact id
	// found in the request.
	Identifier bool
	// Model is the embedding model's normalised score in [0,1] when
	// [Shortlist.Model] is [ModelFused], else 0.
	Model float64
	// CompanionOf is, for a companion, the ID of the shortlisted tool
	// whose input (a token, a session, an entity's id) this tool
	// produces though the request never asked for it (see
	// [Options.NoCompanions]); empty for a tool the request ranked. A
	// companion's Score is that of the place it took, its Lexical, Dense
	// and Model are 0.
	CompanionOf string
}

// Shortlist is the result of one discovery query.
type Shortlist struct {
	// Query is the request as given.
	Query string
	// Candidates are the best authorized tools, best first, at most K,
	// and only tools the request gave evidence for: a word, an identifier
	// or a translation matched in the card, or a positive cosine of the
	// vectors (of the embedded default's, only for a request whose words
	// matched some card: it hashes letters, so random letters have a
	// positive cosine with about half the cards). A request that matches
	// fewer than K tools gets fewer; one that matches none (only emoji,
	// control bytes, stop words or unknown words) gets
	// none, with [Shortlist.Confidence] 0, rather than K tools in ID
	// order. With [Options.Model], the model's ranking is evidence too.
	Candidates []Candidate
	// Confidence estimates, in [0,1], the probability that the first
	// candidate is a right tool (calibrated on the public datasets).
	Confidence float64
	// Reformulated reports that the [Reformulator]'s rewrite produced this result.
	Reformulated bool
	// ReformulatedQuery is the rewrite, when [Shortlist.Reformulated].
	ReformulatedQuery string
	// Authorized is the number of tools the principal may use.
	Authorized int
	// ShortlistTokens counts the o200k tokens of the candidates' schemas
	// (name, description, input schema, as a model is shown them).
	ShortlistTokens int
	// CatalogTokens counts the same for every authorized tool.
	CatalogTokens int
	// Lang is the language the request was analysed in.
	Lang string
	// ContextTruncated reports that a context turn used was longer than
	// [Options.MaxQueryBytes] and only its beginning was analysed.
	ContextTruncated bool
	// Model says what became of the embedding model tier ([Options.Model])
	// for this query: [ModelFused], or why the built-in ranking answered
	// alone. Empty without a model tier or for an empty query.
	Model ModelOutcome
}

// Discoverer finds the few authorized tools a request needs. It is safe
// for concurrent use. It keeps one index, for the latest snapshot it was
// asked about, and rebuilds it (reusing unchanged cards) when a request
// comes with a view of another snapshot.
type Discoverer struct {
	analyzer     *analysis.Analyzer
	lex          *lexicon.Lexicon
	embedder     Embedder
	reformulator Reformulator
	threshold    float64
	fuseRewrite  bool
	companions   bool          // add producers of the leading tools' handles
	background   *backgroundDF // nil when [Options.NoBackgroundIDF]
	k            int
	method       Method
	fusion       Fusion
	lexWeight    float64
	exactLimit   int
	rerank       int
	maxQuery     int
	log          Log
	metrics      *metrics
	firsts       *firstShortlists // nil when [Options.MaxSessions] is negative
	model        *modelTier       // nil without [Options.Model]
	now          func() time.Time
	// tokenEmbedder is embedder when it can embed a request's tokens
	// from the lexical side's analysis (ngram.Embedder can), else nil.
	tokenEmbedder embedderTokens
	// cosineEvidence: a positive cosine alone puts a tool in a shortlist
	// of any request. True for a caller's [Options.Embedder] and for
	// [MethodDense]; the embedded default's cosine counts only for a
	// request whose words found some tool (see withEvidence).
	cosineEvidence bool
	// translations keeps what translate makes of each Spanish or Polish
	// word: a request of known words is look-ups.
	translations transCache

	mu    sync.Mutex // serialises index builds
	idx   *Index
	terms *termTable // numbers the cards' terms (terms.go)
	fp    struct {   // fingerprint (persist.go), computed once
		once sync.Once
		s    string
		dim  int // the probe's vector dimension; -1 when unknown
	}
}

// New returns a Discoverer configured by opts (nil means defaults). It
// fails only for invalid options, with an error wrapping [ErrOptions] that
// names the field.
func New(opts *Options) (*Discoverer, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.K < 0:
		return nil, fmt.Errorf("%w: K %d is negative", ErrOptions, o.K)
	case o.LexicalWeight < 0 || o.LexicalWeight > 1:
		return nil, fmt.Errorf("%w: LexicalWeight %v is outside [0,1]", ErrOptions, o.LexicalWeight)
	case o.ReformulateBelow > 1:
		return nil, fmt.Errorf("%w: ReformulateBelow %v is above 1", ErrOptions, o.ReformulateBelow)
	case o.MaxQueryBytes < 0:
		return nil, fmt.Errorf("%w: MaxQueryBytes %d is negative", ErrOptions, o.MaxQueryBytes)
	case o.DenseExactLimit < 0 || o.DenseRerank < 0:
		return nil, fmt.Errorf("%w: DenseExactLimit and DenseRerank must not be negative", ErrOptions)
	case o.Method < MethodHybrid || o.Method > MethodBM25:
		return nil, fmt.Errorf("%w: unknown Method %d", ErrOptions, o.Method)
	case o.Fusion < FusionScore || o.Fusion > FusionRRF:
		return nil, fmt.Errorf("%w: unknown Fusion %d", ErrOptions, o.Fusion)
	}
	d := &Discoverer{
		analyzer: o.Analyzer, embedder: o.Embedder, reformulator: o.Reformulator,
		threshold: o.ReformulateBelow, fuseRewrite: o.FuseReformulation, k: o.K, method: o.Method, fusion: o.Fusion,
		lexWeight: o.LexicalWeight, exactLimit: o.DenseExactLimit, rerank: o.DenseRerank,
		log: o.Log, now: o.Clock, maxQuery: o.MaxQueryBytes, terms: newTermTable(), companions: !o.NoCompanions && o.Method != MethodBM25,
	}
	if d.maxQuery == 0 {
		d.maxQuery = DefaultMaxQueryBytes
	}
	// The default embedder shares a default analyzer (and so its stem
	// cache); a caller's analyzer is not lent to it, since it may restrict
	// the languages the embedder detects.
	var shared *analysis.Analyzer
	if d.analyzer == nil {
		d.analyzer = analysis.New(nil)
		shared = d.analyzer
	}
	d.lex = o.Lexicon
	if d.lex == nil {
		d.lex = lexicon.Default()
	}
	// The words a request is looked up by in the lexicon are the ones its
	// terms were stemmed from: their stems come from the analyzer's cache.
	d.lex = d.lex.WithStemmer(d.analyzer)
	d.cosineEvidence = d.embedder != nil || o.Method == MethodDense
	if d.embedder == nil {
		d.embedder = defaultEmbedder(d.lex, shared)
	}
	if o.NoDense || o.Method == MethodLexical || o.Method == MethodBM25 {
		d.embedder = nil
	}
	d.tokenEmbedder, _ = d.embedder.(embedderTokens)
	if d.reformulator == nil {
		d.reformulator = &LexiconReformulator{analyzer: d.analyzer, lex: d.lex}
	}
	if d.threshold == 0 {
		d.threshold = 0.1
	}
	if d.k == 0 {
		d.k = 5
	}
	if d.lexWeight == 0 {
		d.lexWeight = 0.8
	}
	if d.exactLimit == 0 {
		d.exactLimit = 5000
	}
	if d.rerank == 0 {
		d.rerank = 150
	}
	if d.now == nil {
		d.now = time.Now
	}
	if !o.NoBackgroundIDF {
		b, err := loadBackground()
		if err != nil {
			return nil, err
		}
		d.background = b
	}
	m, err := newMetrics(o.Registerer)
	if err != nil {
		return nil, err
	}
	d.metrics = m
	if o.Model != nil {
		if d.model, err = newModelTier(*o.Model, d.now, o.Registerer); err != nil {
			return nil, err
		}
	}
	switch {
	case o.MaxSessions == 0:
		d.firsts = newFirstShortlists(DefaultMaxSessions)
	case o.MaxSessions > 0:
		d.firsts = newFirstShortlists(o.MaxSessions)
	}
	return d, nil
}

// MaxQueryBytes is the longest [Request.Query] d takes
// ([Options.MaxQueryBytes]): a caller that queries by a text it does not
// bound, such as a user's message, cuts it to this length first.
func (d *Discoverer) MaxQueryBytes() int { return d.maxQuery }

// Index returns the index for snap, building it (and replacing the one
// kept) when the kept index is for another snapshot. Building reuses the
// analysis, vectors and token counts of tools that did not change.
func (d *Discoverer) Index(ctx context.Context, snap *tools.Snapshot) (*Index, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.idx != nil && d.idx.snap == snap {
		return d.idx, nil
	}
	x, err := d.build(ctx, snap, d.idx)
	if err != nil {
		return nil, err
	}
	d.idx = x
	return x, nil
}

// Shortlist ranks the tools of view for req and returns the best K, or
// fewer: only tools the request gave evidence for, none when it matches
// nothing ([Shortlist.Candidates]). Only tools the view authorizes are
// ever scored, so nothing unauthorized can be returned. It builds the index on first use of a snapshot; the error is
// the build's (an embedder failure) or the context's.
func (d *Discoverer) Shortlist(ctx context.Context, view *tools.View, req Request) (*Shortlist, error) {
	sl := new(Shortlist)
	if err := d.ShortlistTo(ctx, view, req, sl); err != nil {
		return nil, err
	}
	return sl, nil
}

// ShortlistTo is Shortlist writing its result into sl, reusing the
// capacity of sl.Candidates; everything else in sl is overwritten. A
// caller that keeps one Shortlist per worker makes a query allocate
// nothing in the steady state (with the default embedder, no Log, and a
// request in English without identifiers; a Spanish or Polish request
// allocates its translation, an identifier its match).
func (d *Discoverer) ShortlistTo(ctx context.Context, view *tools.View, req Request, sl *Shortlist) error {
	if view == nil {
		return ErrNoView
	}
	if len(req.Query) > d.maxQuery {
		return fmt.Errorf("%w: the query has %d bytes, the limit is %d", ErrQueryTooLong, len(req.Query), d.maxQuery)
	}
	turns, truncated := d.boundContext(req.Context)
	start := d.now()
	x, err := d.Index(ctx, view.Snapshot())
	if err != nil {
		return err
	}
	k := req.K
	if k <= 0 {
		k = d.k
	}
	// The ranking an exact example is looked for in is the first
	// max(k, d.k), so that k only cuts it (exactExample); the built-in
	// ranking is deeper for the model tier.
	ranked := max(k, d.k)
	depth := ranked
	if d.model != nil {
		depth = max(ranked, d.model.o.Depth)
	}
	bufs := topPool.Get().(*[2][]fusedScore)
	defer topPool.Put(bufs)
	res, err := d.search(ctx, x, view, req.Query, turns, depth, bufs[0])
	if err != nil {
		return err
	}
	bufs[0] = res.top
	cands := sl.Candidates[:0]
	if cands == nil {
		cands = make([]Candidate, 0, k)
	}
	*sl = Shortlist{Query: req.Query, Authorized: view.Len(), Lang: string(res.lang), Candidates: cands}
	if res.confidence < d.threshold && d.method == MethodHybrid && req.Query != "" {
		if q2, err := d.reformulator.Reformulate(ctx, req.Query); err == nil && q2 != "" && q2 != req.Query {
			res2, err := d.search(ctx, x, view, q2, turns, depth, bufs[1])
			if err != nil {
				return err
			}
			bufs[1] = res2.top
			switch {
			case d.fuseRewrite:
				res = fuseSearches(res, res2, depth)
				sl.Reformulated = true
				sl.ReformulatedQuery = q2
			case res2.confidence > res.confidence:
				res = res2
				sl.Reformulated = true
				sl.ReformulatedQuery = q2
			}
		}
	}
	var modelScores []float64 // the model tier's, per res.top
	if d.model != nil {
		res.top, modelScores, sl.Model = d.model.rerank(ctx, d, x, view, req.Query, res.top, ranked)
	}
	if i := exactExample(req.Query, res.top, func(f fusedScore) *tools.Tool { return x.snap.Tool(int(f.doc)) }); i > 0 {
		// The moved tool takes the first one's score, so scores stay
		// non-increasing.
		res.top[i].score = max(res.top[i].score, res.top[0].score)
		moveFirst(res.top, i)
		if modelScores != nil {
			moveFirst(modelScores, i)
		}
	}
	res.top = res.top[:min(k, len(res.top))]
	if modelScores != nil {
		modelScores = modelScores[:len(res.top)]
	}
	var marks companionMarks
	res.top, marks = x.companions.completeCompanions(view.Bits(), req.Query, res.top, k)
	sl.Confidence = res.confidence
	sl.ContextTruncated = truncated
	for i, f := range res.top {
		sl.Candidates = append(sl.Candidates, Candidate{Tool: x.snap.Tool(int(f.doc)), Score: f.score, Lexical: f.lex, Dense: f.dense, Identifier: f.ident})
		if of, ok := marks.companionOf(i); ok {
			sl.Candidates[i].CompanionOf = x.snap.Tool(int(of)).ID
		} else if modelScores != nil {
			sl.Candidates[i].Model = modelScores[i]
		}
		sl.ShortlistTokens += int(x.tokens[f.doc])
	}
	sl.CatalogTokens = x.catalogTokens(view)
	d.observe(ctx, view, req, sl, d.now().Sub(start))
	return nil
}

// boundContext returns the context turns a search uses (the last two),
// each cut to d.maxQuery bytes at a UTF-8 boundary, and whether one was
// cut. It does not allocate when none is.
func (d *Discoverer) boundContext(turns []string) ([]string, bool) {
	turns = turns[max(0, len(turns)-2):]
	long := false
	for _, t := range turns {
		long = long || len(t) > d.maxQuery
	}
	if !long {
		return turns, false
	}
	out := make([]string, len(turns))
	for i, t := range turns {
		if len(t) > d.maxQuery {
			n := d.maxQuery
			for n > 0 && !utf8.RuneStart(t[n]) {
				n--
			}
			t = t[:n]
		}
		out[i] = t
	}
	return out, true
}

// topPool holds the buffers of a query's two searches (the request and
// its reformulation).
var topPool = sync.Pool{New: func() any { return new([2][]fusedScore) }}

func (x *Index) catalogTokens(view *tools.View) int {
	if view.Len() == len(x.tokens) {
		return x.total
	}
	// A view is immutable: the last one's sum is kept, since a principal's
	// queries come with the same view.
	if last := x.lastView.Load(); last != nil && last.view == view {
		return last.tokens
	}
	n := 0
	for w, bits := range view.Bits() {
		for bits != 0 {
			b := trailingZeros(bits)
			bits &= bits - 1
			n += int(x.tokens[w*64+b])
		}
	}
	x.lastView.Store(&viewTokens{view, n})
	return n
}

// viewTokens is the token count of one view's catalog.
type viewTokens struct {
	view   *tools.View
	tokens int
}

// observe logs the query and updates the metrics.
func (d *Discoverer) observe(ctx context.Context, view *tools.View, req Request, sl *Shortlist, took time.Duration) {
	d.metrics.observe(sl, took, d.threshold)
	p := view.Principal()
	session := boundSession(req.Session)
	if d.firsts != nil && session != "" {
		d.firsts.query(sessionKey{p.Tenant, p.ID, session}, req.Source, req.Query, sl)
	}
	if d.log == nil {
		return
	}
	e := Entry{
		Time: d.now().UTC(), Principal: p.ID, Tenant: p.Tenant, Session: session, Source: req.Source,
		Query: req.Query, Context: req.Context,
		Confidence: sl.Confidence, Reformulated: sl.Reformulated, ReformulatedQuery: sl.ReformulatedQuery,
		Authorized: sl.Authorized, Lang: sl.Lang,
	}
	for _, c := range sl.Candidates {
		e.Candidates = append(e.Candidates, LoggedCandidate{ID: c.Tool.ID, Score: c.Score})
	}
	if err := d.log.Record(context.WithoutCancel(ctx), e); err != nil {
		d.metrics.logErrors.Inc()
	}
}

// Outcome is what became of a shortlist, for the log: the tools the model
// loaded by name or called.
type Outcome struct {
	// Session is the conversation, as in [Request.Session].
	Session string
	// Source is [SourceSelect] or [SourceCall].
	Source string
	// Query is the find_tools text, for [SourceSelect].
	Query string
	// Tools are the tool IDs loaded ([SourceSelect]) or the one called
	// ([SourceCall]).
	Tools []string
}

// RecordOutcome writes o to the log, so that `toolgate log misses` can tell
// which first shortlists lacked the tool finally called, and counts a call
// linked to the first shortlist of its session's current request
// (toolgate_discovery_linked_calls_total), and a miss when that shortlist
// lacked the tool (toolgate_discovery_misses_total). Tools the view does
// not authorize are left out (and an outcome left with none is neither
// written nor counted): the log, and what is learned from it, only ever
// names tools the principal may use. Without a Log it writes nothing; a
// log failure is counted in the metrics. It is safe for concurrent use.
func (d *Discoverer) RecordOutcome(ctx context.Context, view *tools.View, o Outcome) {
	if view == nil || (o.Source != SourceSelect && o.Source != SourceCall) {
		return
	}
	p := view.Principal()
	e := Entry{Time: d.now().UTC(), Principal: p.ID, Tenant: p.Tenant, Session: boundSession(o.Session), Source: o.Source,
		Query: o.Query, Authorized: view.Len()}
	for _, id := range o.Tools {
		if _, ok := view.Get(id); !ok {
			continue
		}
		if o.Source == SourceCall {
			e.Called = id
			break
		}
		e.Candidates = append(e.Candidates, LoggedCandidate{ID: id})
	}
	if e.Called == "" && len(e.Candidates) == 0 {
		return
	}
	if e.Called != "" && d.firsts != nil {
		if linked, hit := d.firsts.call(sessionKey{p.Tenant, p.ID, e.Session}, e.Called); linked {
			d.metrics.linkedCalls.Inc()
			if !hit {
				d.metrics.misses.Inc()
			}
		}
	}
	if d.log == nil {
		return
	}
	if err := d.log.Record(context.WithoutCancel(ctx), e); err != nil {
		d.metrics.logErrors.Inc()
	}
}

// fuseSearches merges two searches of one request: every tool either
// returned, at the better of its two scores, best first, at most k; the
// confidence is the better one. The result owns a new slice (both inputs'
// slices are pooled buffers).
func fuseSearches(a, b searchResult, k int) searchResult {
	out := searchResult{lang: a.lang, confidence: max(a.confidence, b.confidence)}
	both := append(append(make([]fusedScore, 0, len(a.top)+len(b.top)), a.top...), b.top...)
	top := make([]fusedScore, 0, len(both))
	at := map[uint32]int{}
	for _, f := range both {
		if i, ok := at[f.doc]; ok {
			if f.score > top[i].score {
				top[i] = f
			}
			continue
		}
		at[f.doc] = len(top)
		top = append(top, f)
	}
	sort.SliceStable(top, func(i, j int) bool { return top[i].better(top[j]) })
	if len(top) > k {
		top = top[:k]
	}
	out.top = top
	return out
}
