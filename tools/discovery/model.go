package discovery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/bits"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery/analysis"
	"github.com/toolgate/toolgate/tools/discovery/embedcache"
)

// This file is the model tier: a dense ranking by an embedding model the
// user runs (Ollama, llama-server --embeddings, any OpenAI-compatible
// /v1/embeddings), fused with the built-in ranking. Without
// [Options.Model] none of it runs.

// Defaults of [ModelOptions].
const (
	// DefaultModelWeight is the built-in ranking's weight in the fusion
	// with the model's ([ModelOptions.Weight]): the smallest weight at
	// which the only model measured (TinyLlama's mean-pooled states
	// through llama-server --embeddings, a chat model) did not lower
	// recall@5 on the 80 requests of testdata/queries/real-mcp-natural
	// (0.5: 0.750, 0.6: 0.769, 0.7: 0.781, 0.8 to 0.95: 0.794, against
	// 0.781 alone), so that a weak model cannot cost much. A good
	// embedding model may earn a lower one: calibrate it with `toolgate
	// eval --embed-weights` on a dev split.
	DefaultModelWeight = 0.8
	// DefaultModelTimeout bounds embedding one request.
	DefaultModelTimeout = 2 * time.Second
	// DefaultModelCatalogTimeout bounds embedding a snapshot's uncached cards.
	DefaultModelCatalogTimeout = 10 * time.Minute
	// DefaultModelBatch is how many cards one embedding request carries.
	DefaultModelBatch = 32
	// DefaultModelConcurrency is how many embedding requests run at once.
	DefaultModelConcurrency = 2
	// DefaultModelDepth is how many of the built-in ranking's best tools
	// the fusion considers beside the model's.
	DefaultModelDepth = 50
	// DefaultModelRetry is how long a failed catalog embedding waits
	// before the next query tries again.
	DefaultModelRetry = 30 * time.Second
	// maxModelText bounds the text embedded per card (at a UTF-8
	// boundary): small embedding models read 512 tokens.
	maxModelText = 2000
)

// ModelOutcome says what became of the model tier for one query.
type ModelOutcome string

// Model outcomes, the values of [Shortlist.Model] and of the outcome label
// of toolgate_discovery_model_queries_total.
const (
	// ModelFused: the model's ranking was fused with the built-in one.
	ModelFused ModelOutcome = "fused"
	// ModelTimeout: embedding the request took longer than
	// [ModelOptions.Timeout]; the built-in ranking answered alone.
	ModelTimeout ModelOutcome = "timeout"
	// ModelError: the embedder failed or returned a malformed vector; the
	// built-in ranking answered alone.
	ModelError ModelOutcome = "error"
	// ModelUnavailable: the catalog's cards could not be embedded, or are
	// still being embedded (a query waits at most [ModelOptions.Timeout] for
	// them), or a failure is waiting out [DefaultModelRetry]; the built-in
	// ranking answered alone.
	ModelUnavailable ModelOutcome = "unavailable"
)

// ModelOptions configures the model tier of a Discoverer
// ([Options.Model]): a dense ranking by an embedding model, fused with the
// built-in ranking (lexical BM25F plus the n-gram dense side) by
// Weight. Cards are embedded once per snapshot in batches, their vectors
// kept in Cache across restarts; each request is embedded within Timeout,
// and a request the model cannot serve in time is answered by the built-in
// ranking alone ([Shortlist.Model] says which, and
// toolgate_discovery_model_queries_total counts it). Only the tools of the
// caller's view are scored.
type ModelOptions struct {
	// Embedder embeds cards and requests, e.g. the llm/ollama or
	// llm/openai Backend with an embedding model. Required.
	Embedder Embedder
	// Cache keeps the cards' vectors on disk, keyed by the text embedded;
	// open it with the model's identity ([embedcache.Open]). Nil keeps
	// them in memory only.
	Cache *embedcache.Cache
	// Weight is the built-in ranking's weight in (0,1]; the model's is 1 -
	// Weight. Zero means [DefaultModelWeight].
	Weight float64
	// Timeout bounds embedding one request. Zero means [DefaultModelTimeout].
	Timeout time.Duration
	// CatalogTimeout bounds embedding the uncached cards of a snapshot,
	// which runs in the background from its first query (or
	// [Discoverer.EmbedCatalog]); queries meanwhile are answered by the
	// built-in ranking. Zero means [DefaultModelCatalogTimeout].
	CatalogTimeout time.Duration
	// Batch is the number of cards per embedding request, [ModelOptions.Concurrency] the
	// requests in flight at once. Zero means [DefaultModelBatch] and
	// [DefaultModelConcurrency].
	Batch, Concurrency int
	// Depth is how many of the built-in ranking's best tools are fused with
	// the model's ranking; the model scores every authorized tool when the
	// view has at most [Options.DenseExactLimit], else only those. Zero
	// means [DefaultModelDepth].
	Depth int
	// QueryPrefix and [ModelOptions.CardPrefix] are put before each request and card
	// text, for models trained with them (nomic-embed-text: "search_query: "
	// and "search_document: "; e5: "query: " and "passage: ").
	QueryPrefix, CardPrefix string
	// Logger receives a warning when the model tier falls back. Nil means
	// slog.Default(). A warning is repeated at most once a minute per
	// outcome; the metric counts every one.
	Logger *slog.Logger
}

// modelTier is the model tier of one Discoverer.
type modelTier struct {
	o        ModelOptions
	clock    func() time.Time
	queries  *prometheus.CounterVec
	cards    *prometheus.CounterVec
	warnedAt sync.Map // ModelOutcome → [time.Time] of the last warning

	mu      sync.Mutex
	cat     *modelCatalog // for the latest index built
	pending *catalogBuild // the catalog being embedded, nil when none
	stale   bool          // the cache's vectors are another model's: not read
	retryAt time.Time
	// mem holds the normalised vectors of the last catalog by key, so
	// that a new snapshot embeds only its changed cards.
	mem map[embedcache.Key][]float32
}

// modelCatalog is the model's vectors of one index's cards.
type modelCatalog struct {
	x    *Index
	dim  int
	rows []float32 // len(x.docs)*dim, L2-normalised
}

func newModelTier(o ModelOptions, clock func() time.Time, reg prometheus.Registerer) (*modelTier, error) {
	switch {
	case o.Embedder == nil:
		return nil, fmt.Errorf("%w: Model.Embedder is nil", ErrOptions)
	case o.Weight < 0 || o.Weight > 1:
		return nil, fmt.Errorf("%w: Model.Weight %v is outside [0,1]", ErrOptions, o.Weight)
	case o.Timeout < 0 || o.CatalogTimeout < 0:
		return nil, fmt.Errorf("%w: Model.Timeout and Model.CatalogTimeout must not be negative", ErrOptions)
	case o.Batch < 0 || o.Concurrency < 0 || o.Depth < 0:
		return nil, fmt.Errorf("%w: Model.Batch, Model.Concurrency and Model.Depth must not be negative", ErrOptions)
	}
	o.Weight = cmp.Or(o.Weight, DefaultModelWeight)
	o.Timeout = cmp.Or(o.Timeout, DefaultModelTimeout)
	o.CatalogTimeout = cmp.Or(o.CatalogTimeout, DefaultModelCatalogTimeout)
	o.Batch = cmp.Or(o.Batch, DefaultModelBatch)
	o.Concurrency = cmp.Or(o.Concurrency, DefaultModelConcurrency)
	o.Depth = cmp.Or(o.Depth, DefaultModelDepth)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	t := &modelTier{o: o, clock: clock,
		queries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolgate_discovery_model_queries_total",
			Help: "Discovery queries by what became of the embedding model tier: fused, timeout, error, unavailable.",
		}, []string{"outcome"}),
		cards: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolgate_discovery_model_cards_total",
			Help: "Card vectors of the embedding model tier by source: cache (memory or disk) or embedded.",
		}, []string{"source"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{t.queries, t.cards} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("%w: Registerer: %v", ErrOptions, err)
			}
		}
	}
	return t, nil
}

// warn logs a fallback, at most once a minute per outcome.
func (t *modelTier) warn(outcome ModelOutcome, msg string, args ...any) {
	now := t.clock()
	if last, ok := t.warnedAt.Load(outcome); ok && now.Sub(last.(time.Time)) < time.Minute {
		return
	}
	t.warnedAt.Store(outcome, now)
	t.o.Logger.Warn(msg, append(args, "outcome", string(outcome))...)
}

// cardText is the text the model embeds for the card at i of x: its name
// as words, summary, description, aliases, tags, parameters and examples,
// without the identifiers that name another namespace's tool (as the
// index's fields), cut at maxModelText bytes.
func cardText(x *Index, i int) string {
	t := x.snap.Tool(i)
	scrubbed := x.docs[i].scrubbed
	sc := func(s string) string { return scrub(s, scrubbed) }
	var sb strings.Builder
	var a [64]byte
	sb.Write(analysis.AppendIdentifier(a[:0], t.Name(), " "))
	sb.WriteString(" (")
	sb.WriteString(t.Namespace())
	sb.WriteString("): ")
	sb.WriteString(sc(t.Card.Summary))
	if t.Description != "" && t.Description != t.Card.Summary {
		sb.WriteString(" ")
		sb.WriteString(sc(t.Description))
	}
	for _, part := range [][]string{t.Card.Aliases, t.Card.Tags, t.Card.Examples} {
		if len(part) > 0 {
			sb.WriteString(". ")
			sb.WriteString(sc(strings.Join(part, "; ")))
		}
	}
	if params, _, err := schemaParams(t.InputSchema); err == nil && len(params) > 0 {
		sb.WriteString(". Parameters:")
		for _, p := range params {
			sb.WriteString(" ")
			sb.WriteString(sc(p.name))
			if p.text != "" {
				sb.WriteString(" (")
				sb.WriteString(sc(p.text))
				sb.WriteString(")")
			}
		}
	}
	return cutUTF8(sb.String(), maxModelText)
}

// cutUTF8 returns s cut to at most n bytes at a rune boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// catalog returns the model's vectors of x's cards, embedding those not
// cached. The embedding runs in the background, bounded by
// CatalogTimeout and not by ctx, so that a query that gives up waiting
// (after wait; negative: until ctx ends) leaves it to finish for the next
// ones. One catalog is embedded at a time; after a failure none is tried
// for [DefaultModelRetry].
func (t *modelTier) catalog(ctx context.Context, x *Index, wait time.Duration) (*modelCatalog, error) {
	t.mu.Lock()
	if c := t.cat; c != nil && c.x == x {
		t.mu.Unlock()
		return c, nil
	}
	b := t.pending
	switch {
	case b != nil && b.x != x:
		t.mu.Unlock()
		return nil, errors.New("another snapshot's catalog is being embedded")
	case b == nil && t.clock().Before(t.retryAt):
		t.mu.Unlock()
		return nil, fmt.Errorf("embedding the catalog failed; the next try is after %s", t.retryAt.UTC().Format(time.TimeOnly))
	case b == nil:
		b = &catalogBuild{x: x, done: make(chan struct{})}
		t.pending = b
		go t.build(context.WithoutCancel(ctx), b, t.mem, t.stale)
	}
	t.mu.Unlock()
	var timeout <-chan time.Time
	if wait >= 0 {
		tm := time.NewTimer(wait)
		defer tm.Stop()
		timeout = tm.C
	}
	select {
	case <-b.done:
		return b.cat, b.err
	case <-timeout:
		return nil, fmt.Errorf("the catalog is still being embedded (%s waited)", wait)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// catalogBuild is one catalog being embedded; done closes when cat or
// err is set.
type catalogBuild struct {
	x    *Index
	done chan struct{}
	cat  *modelCatalog
	err  error
}

// build embeds b's catalog within CatalogTimeout and publishes it.
func (t *modelTier) build(ctx context.Context, b *catalogBuild, mem map[embedcache.Key][]float32, stale bool) {
	ctx, cancel := context.WithTimeout(ctx, t.o.CatalogTimeout)
	defer cancel()
	c, next, err := t.embedCatalog(ctx, b.x, mem, stale)
	t.mu.Lock()
	t.pending = nil
	if err != nil {
		t.retryAt = t.clock().Add(DefaultModelRetry)
	} else {
		t.cat, t.mem, t.stale = c, next, false
	}
	b.cat, b.err = c, err
	t.mu.Unlock()
	close(b.done)
}

// embedCatalog embeds x's cards not in mem or (unless stale) the cache
// and returns the catalog with the key → vector map of its cards.
func (t *modelTier) embedCatalog(ctx context.Context, x *Index, mem map[embedcache.Key][]float32, stale bool) (*modelCatalog, map[embedcache.Key][]float32, error) {
	n := len(x.docs)
	keys := make([]embedcache.Key, n)
	texts := make([]string, n)
	vecs := make([][]float32, n)
	var miss []int
	cached := 0
	for i := range n {
		texts[i] = t.o.CardPrefix + cardText(x, i)
		keys[i] = embedcache.KeyOf(texts[i])
		if v, ok := mem[keys[i]]; ok {
			vecs[i] = v
		} else if v, ok := t.lookupCache(keys[i]); ok && !stale {
			vecs[i] = v
		} else {
			miss = append(miss, i)
			continue
		}
		cached++
	}
	t.cards.WithLabelValues("cache").Add(float64(cached))
	raw, err := t.embedBatches(ctx, texts, keys, miss)
	if cache := t.o.Cache; cache != nil && len(miss) > 0 {
		// What was embedded is saved even when a later batch failed.
		if err := cache.Save(); err != nil {
			t.o.Logger.Warn("discovery: the embedding cache could not be saved", "path", cache.Path(), "err", err)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	for j, i := range miss {
		vecs[i] = normalize(raw[j])
	}
	t.cards.WithLabelValues("embedded").Add(float64(len(miss)))
	c := &modelCatalog{x: x}
	for i, v := range vecs {
		if c.dim == 0 {
			c.dim = len(v)
			c.rows = make([]float32, n*c.dim)
		}
		if len(v) != c.dim {
			// Cached vectors of another model behind the same identity:
			// none of the cache is trusted until it is rebuilt.
			return nil, nil, fmt.Errorf("%w: card %s has %d dimensions, another %d (a model changed behind the same name? remove the cache)",
				ErrEmbedder, x.snap.Tool(i).ID, len(v), c.dim)
		}
		copy(c.rows[i*c.dim:], v)
	}
	next := make(map[embedcache.Key][]float32, n)
	for i, k := range keys {
		next[k] = vecs[i]
	}
	return c, next, nil
}

// lookupCache returns the normalised cached vector of k.
func (t *modelTier) lookupCache(k embedcache.Key) ([]float32, bool) {
	if t.o.Cache == nil {
		return nil, false
	}
	v, ok := t.o.Cache.Lookup(k)
	if !ok {
		return nil, false
	}
	return normalize(v), true // normalize copies
}

// embedBatches embeds texts[i] for i in idx, Batch at a time with at most
// Concurrency requests in flight, adds each batch to the cache under
// keys[i], and returns the vectors in idx's order.
func (t *modelTier) embedBatches(ctx context.Context, texts []string, keys []embedcache.Key, idx []int) ([][]float32, error) {
	out := make([][]float32, len(idx))
	nb := (len(idx) + t.o.Batch - 1) / t.o.Batch
	workers := min(t.o.Concurrency, nb)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return out, striped(workers, nb, func(b int) error {
		lo, hi := b*t.o.Batch, min((b+1)*t.o.Batch, len(idx))
		batch := make([]string, hi-lo)
		for j := range batch {
			batch[j] = texts[idx[lo+j]]
		}
		vs, err := t.o.Embedder.Embed(ctx, batch)
		if err == nil {
			err = checkVectors(vs, len(batch))
		}
		if err != nil {
			cancel()
			return fmt.Errorf("discovery: embed cards %d to %d of %d: %w", lo+1, hi, len(idx), err)
		}
		copy(out[lo:hi], vs)
		if t.o.Cache != nil {
			bk := make([]embedcache.Key, len(vs))
			for j := range bk {
				bk[j] = keys[idx[lo+j]]
			}
			if err := t.o.Cache.Add(bk, vs); err != nil {
				t.o.Logger.Warn("discovery: the embedding cache refused the vectors", "err", err)
			}
		}
		return nil
	})
}

// checkVectors reports what is wrong with n vectors from an embedder.
func checkVectors(vs [][]float32, n int) error {
	if len(vs) != n {
		return fmt.Errorf("%w: %d vectors for %d texts", ErrEmbedder, len(vs), n)
	}
	for i, v := range vs {
		if len(v) == 0 || len(v) > embedcache.MaxDim || len(v) != len(vs[0]) {
			return fmt.Errorf("%w: vector %d has %d dimensions", ErrEmbedder, i, len(v))
		}
		var sum float64
		for _, f := range v {
			sum += float64(f) * float64(f)
		}
		if math.IsNaN(sum) || math.IsInf(sum, 0) || sum == 0 {
			return fmt.Errorf("%w: vector %d is zero or not finite", ErrEmbedder, i)
		}
	}
	return nil
}

// rerank fuses the model's ranking of query with top, the built-in
// ranking's best (best first), and returns the best k in top's buffer
// with the model's score of each. On any failure it returns top cut to k,
// no scores, and the outcome saying why.
func (t *modelTier) rerank(ctx context.Context, d *Discoverer, x *Index, view *tools.View, query string, top []fusedScore, k int) ([]fusedScore, []float64, ModelOutcome) {
	fallback := func(outcome ModelOutcome, err error) ([]fusedScore, []float64, ModelOutcome) {
		t.queries.WithLabelValues(string(outcome)).Inc()
		t.warn(outcome, "discovery: the embedding model is not used for this query; the built-in ranking answers alone", "err", err)
		return top[:min(k, len(top))], nil, outcome
	}
	if strings.TrimSpace(query) == "" {
		return top[:min(k, len(top))], nil, ""
	}
	c, err := t.catalog(ctx, x, t.o.Timeout)
	if err != nil {
		return fallback(ModelUnavailable, err)
	}
	qctx, cancel := context.WithTimeout(ctx, t.o.Timeout)
	vs, err := t.o.Embedder.Embed(qctx, []string{t.o.QueryPrefix + cutUTF8(query, d.maxQuery)})
	timedOut := qctx.Err() == context.DeadlineExceeded && ctx.Err() == nil
	cancel()
	if err == nil {
		err = checkVectors(vs, 1)
	}
	switch {
	case timedOut:
		return fallback(ModelTimeout, fmt.Errorf("embedding the request took more than %s", t.o.Timeout))
	case err != nil:
		return fallback(ModelError, err)
	case len(vs[0]) != c.dim:
		// The model behind the identity changed: the cards are embedded
		// again, not read from the cache.
		t.mu.Lock()
		t.cat, t.mem, t.stale = nil, nil, true
		t.mu.Unlock()
		return fallback(ModelError, fmt.Errorf("%w: the request's vector has %d dimensions, the cards' %d", ErrEmbedder, len(vs[0]), c.dim))
	}
	q := normalize(vs[0])
	t.queries.WithLabelValues(string(ModelFused)).Inc()
	fused, scores := fuseModel(c, view, q, top, k, t.o.Weight, view.Len() <= d.exactLimit)
	return fused, scores, ModelFused
}

// fuseModel scores the model's cosine of q for every tool of view (all,
// or only those in top), normalises the cosines min-max and the built-in
// scores by the best, and returns the best k of w*built-in + (1-w)*model
// in top's buffer, best first, with the model's normalised score of each.
// Only tools view authorizes are scored.
func fuseModel(c *modelCatalog, view *tools.View, q []float32, top []fusedScore, k int, w float64, all bool) ([]fusedScore, []float64) {
	type cand struct {
		f     fusedScore
		model float64
	}
	var cands []cand
	pos := make(map[uint32]int, len(top))
	builtinBest := 0.0
	if len(top) > 0 {
		builtinBest = top[0].score
	}
	for _, f := range top {
		pos[f.doc] = len(cands)
		cands = append(cands, cand{f: f})
	}
	b := view.Bits()
	if all {
		for w, word := range b {
			for word != 0 {
				i := uint32(w*64 + bits.TrailingZeros64(word))
				word &= word - 1
				if _, ok := pos[i]; !ok {
					pos[i] = len(cands)
					cands = append(cands, cand{f: fusedScore{doc: i}})
				}
			}
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for j := range cands {
		doc := cands[j].f.doc
		if !allowed(b, doc) { // top comes from this view; never score another
			cands[j].model = math.NaN()
			continue
		}
		row := c.rows[int(doc)*c.dim : (int(doc)+1)*c.dim]
		var dot float32
		for d, v := range q {
			dot += v * row[d]
		}
		cands[j].model = float64(dot)
		lo, hi = min(lo, cands[j].model), max(hi, cands[j].model)
	}
	out := top[:0]
	var scoredCands []fusedScore
	model := make(map[uint32]float64, len(cands))
	for _, cd := range cands {
		if math.IsNaN(cd.model) {
			continue
		}
		m := 0.0
		if hi > lo {
			m = (cd.model - lo) / (hi - lo)
		}
		h := 0.0
		if builtinBest > 0 {
			h = cd.f.score / builtinBest
		}
		f := cd.f
		f.score = w*h + (1-w)*m
		model[f.doc] = m
		scoredCands = append(scoredCands, f)
	}
	out = topFused(out, scoredCands, k)
	scores := make([]float64, len(out))
	for i, f := range out {
		scores[i] = model[f.doc]
	}
	return out, scores
}

// EmbedCatalog embeds, with the model tier ([Options.Model]), the cards of
// snap not yet cached, and waits for them (or for ctx), so that queries
// find them ready; a server calls it at start, a one-shot command before
// its query. Without a model tier it does nothing. The
// error is the index build's or the embedding's (also logged as the
// fallback of a query would be); the next query tries again after
// [DefaultModelRetry].
func (d *Discoverer) EmbedCatalog(ctx context.Context, snap *tools.Snapshot) error {
	if d.model == nil {
		return nil
	}
	x, err := d.Index(ctx, snap)
	if err != nil {
		return err
	}
	if _, err = d.model.catalog(ctx, x, -1); err != nil {
		d.model.warn(ModelUnavailable, "discovery: the catalog could not be embedded; queries are answered by the built-in ranking until it is", "err", err)
	}
	return err
}
