package discovery

import (
	"context"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/analysis"
)

// bonusScale scales the identifier bonuses below.
var bonusScale = 1.0

// Identifier bonuses, in BM25 units, added to the lexical score of a tool
// with a parameter that can take an id found in the request.
const (
	bonusPattern = 4.0 // the parameter's pattern matches the id
	bonusFormat  = 2.5 // its format is the id's kind (uri, email)
	bonusName    = 1.5 // its name says it takes such ids (url, path, repo)
	// contextWeight scales terms from earlier turns of the conversation.
	contextWeight = 0.3
	// translationWeight scales English terms added for a Spanish or Polish request.
	translationWeight = 0.9
	// poolSize is how many of each side's best tools enter fusion.
	poolSize = 100
)

func trailingZeros(w uint64) int { return bits.TrailingZeros64(w) }

type weightedTerm struct {
	term string
	w    float64
}

// queryPlan is an analysed request.
type queryPlan struct {
	lang   analysis.Lang
	terms  []weightedTerm
	ids    []identifier
	dense  string // text to embed
	nTerms int    // distinct positive terms from the request itself
}

// plan analyses a request: its language, terms (with English translations
// for Spanish and Polish and lower-weighted context terms) and identifiers.
func (d *Discoverer) plan(query string, context []string, baseline bool) queryPlan {
	a := d.analyzer
	var p queryPlan
	p.lang = detect(query)
	weights := map[string]float64{}
	var order []string
	add := func(t string, w float64) {
		if old, ok := weights[t]; !ok {
			order = append(order, t)
			weights[t] = w
		} else if w > old {
			weights[t] = w
		}
	}
	if baseline {
		for _, t := range a.Terms(nil, query, analysis.English) {
			add(t, 1)
		}
	} else {
		p.ids = identifiers(query)
		text := query
		for _, id := range p.ids {
			if id.kind == idURL || id.kind == idEmail || id.kind == idPath {
				text = strings.ReplaceAll(text, id.value, " ")
			}
		}
		for _, t := range a.Terms(nil, text, p.lang) {
			add(t, 1)
		}
		var english []string
		if p.lang != analysis.English {
			// Tool names and borrowed words ("pull request") stay English.
			for _, t := range a.Terms(nil, text, analysis.English) {
				add(t, translationWeight)
			}
			english = translate(a, text, p.lang)
			for _, t := range english {
				add(t, translationWeight)
			}
		}
		p.nTerms = len(order)
		for i := len(context) - 1; i >= 0 && i >= len(context)-2; i-- {
			for _, t := range a.Terms(nil, context[i], "") {
				add(t, contextWeight)
			}
		}
		p.dense = text
		if len(english) > 0 {
			p.dense += " " + strings.Join(english, " ")
		}
	}
	p.terms = make([]weightedTerm, len(order))
	for i, t := range order {
		p.terms[i] = weightedTerm{t, weights[t]}
	}
	return p
}

// scratch is per-query working memory, pooled.
type scratch struct {
	acc     []float32
	ident   []bool
	touched []uint32
	cand    []scored
	nz      []int32
}

var scratchPool = sync.Pool{New: func() any { return &scratch{} }}

func getScratch(n int) *scratch {
	s := scratchPool.Get().(*scratch)
	if cap(s.acc) < n {
		s.acc = make([]float32, n)
		s.ident = make([]bool, n)
	}
	s.acc = s.acc[:n]
	s.ident = s.ident[:n]
	s.touched = s.touched[:0]
	return s
}

func putScratch(s *scratch) {
	for _, i := range s.touched {
		s.acc[i] = 0
		s.ident[i] = false
	}
	s.touched = s.touched[:0]
	scratchPool.Put(s)
}

type scored struct {
	doc   uint32
	score float64
}

type searchResult struct {
	candidates []Candidate
	confidence float64
	lang       analysis.Lang
}

func allowed(b []uint64, i uint32) bool { return b[i/64]&(1<<(i%64)) != 0 }

// search ranks the view's tools for one query.
func (d *Discoverer) search(ctx context.Context, x *Index, view *tools.View, query string, context []string, k int) (searchResult, error) {
	if view.Snapshot() != x.snap {
		return searchResult{}, ErrNoView
	}
	n := len(x.docs)
	b := view.Bits()
	p := d.plan(query, context, d.method == MethodBM25)
	res := searchResult{lang: p.lang}
	s := getScratch(n)
	defer putScratch(s)

	var lex, best []scored
	if d.method != MethodDense {
		postings := x.postings
		lookup := func(t string) []posting {
			if id, ok := x.terms[t]; ok {
				return postings[id]
			}
			return nil
		}
		if d.method == MethodBM25 {
			lookup = func(t string) []posting { return x.base[t] }
		}
		touch := func(i uint32, v float32) {
			if s.acc[i] == 0 && !s.ident[i] {
				s.touched = append(s.touched, i)
			}
			s.acc[i] += v
		}
		for _, qt := range p.terms {
			w := float32(qt.w)
			for _, ps := range lookup(qt.term) {
				if allowed(b, ps.doc) {
					touch(ps.doc, w*ps.impact)
				}
			}
		}
		d.identifierBonus(x, b, p.ids, s, touch)
		if d.method != MethodBM25 {
			for _, qt := range p.terms {
				for _, ps := range x.negative[qt.term] {
					if allowed(b, ps.doc) && s.acc[ps.doc] > 0 {
						s.acc[ps.doc] -= float32(notForPenalty * qt.w * float64(ps.impact))
					}
				}
			}
		}
		s.cand = s.cand[:0]
		for _, i := range s.touched {
			if v := s.acc[i]; v > 0 {
				s.cand = append(s.cand, scored{i, float64(v)})
			}
		}
		depth := poolSize
		if d.embedder != nil && d.method == MethodHybrid {
			depth = max(poolSize, d.rerank)
		}
		best = topN(s.cand, depth)
		lex = best[:min(poolSize, len(best))]
	}
	var dense []scored
	var qvec []float32
	if d.embedder != nil && d.method != MethodLexical && d.method != MethodBM25 && x.dim > 0 && p.dense != "" {
		vs, err := d.embedder.Embed(ctx, []string{p.dense})
		if err != nil {
			return res, err
		}
		if len(vs) != 1 || len(vs[0]) != x.dim {
			return res, ErrEmbedder
		}
		qvec = normalize(vs[0])
		nz := s.nz[:0]
		for dim, f := range qvec {
			if f != 0 {
				nz = append(nz, int32(dim))
			}
		}
		s.nz = nz
		s.cand = s.cand[:0]
		// Re-scoring the lexical side's best tools measured as well as
		// scoring every tool (docs/benchmarks.md) at a fraction of the cost;
		// only a request sharing (almost) no word with any card falls back to
		// the exact scan, in catalogs small enough for it.
		if len(lex) < k && view.Len() <= d.exactLimit {
			for w, word := range b {
				for word != 0 {
					i := uint32(w*64 + bits.TrailingZeros64(word))
					word &= word - 1
					s.cand = append(s.cand, scored{i, x.cosine(qvec, nz, i)})
				}
			}
		} else {
			for _, c := range best[:min(d.rerank, len(best))] {
				s.cand = append(s.cand, scored{c.doc, x.cosine(qvec, nz, c.doc)})
			}
		}
		dense = topN(s.cand, poolSize)
	}
	fused := d.fuse(lex, dense)
	res.confidence = confidence(fused, lex, dense, p)
	if len(fused) > k {
		fused = fused[:k]
	}
	res.candidates = make([]Candidate, len(fused))
	for i, f := range fused {
		res.candidates[i] = Candidate{Tool: x.snap.Tool(int(f.doc)), Score: f.score, Lexical: f.lex, Dense: f.dense, Identifier: s.ident[f.doc]}
	}
	return res, nil
}

// identifierBonus adds the bonus of tools whose parameters can take an id
// of the request.
func (d *Discoverer) identifierBonus(x *Index, b []uint64, ids []identifier, s *scratch, touch func(uint32, float32)) {
	if len(ids) == 0 {
		return
	}
	var kinds [numKinds]bool
	for _, id := range ids {
		kinds[id.kind] = true
	}
	// Strongest evidence first; a tool gets one bonus, its best.
	bonus := func(doc uint32, v float64) {
		if allowed(b, doc) && !s.ident[doc] {
			touch(doc, float32(bonusScale*v))
			s.ident[doc] = true
		}
	}
	for _, cp := range x.patterns {
		for _, id := range ids {
			if ok, err := cp.re.MatchString(id.value); err == nil && ok {
				for _, doc := range cp.docs {
					bonus(doc, bonusPattern)
				}
				break
			}
		}
	}
	for _, strong := range []bool{true, false} {
		v := bonusName
		if strong {
			v = bonusFormat
		}
		for k, on := range kinds {
			if !on {
				continue
			}
			for _, r := range x.kinds[k] {
				if r.strong == strong {
					bonus(r.doc, v)
				}
			}
		}
	}
}

// topN returns the n best of c, best first, ties broken by tool order. It
// reorders c.
func topN(c []scored, n int) []scored {
	if len(c) > 2*n {
		// Partial selection: a min-heap keeps the n best seen so far.
		h := make([]scored, 0, n)
		for _, v := range c {
			if len(h) < n {
				h = append(h, v)
				up(h, len(h)-1)
			} else if better(v, h[0]) {
				h[0] = v
				down(h, 0)
			}
		}
		c = h
	}
	slices.SortFunc(c, func(a, b scored) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	out := make([]scored, min(n, len(c)))
	copy(out, c)
	return out
}

func better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.doc < b.doc
}

// The heap keeps the worst of the kept items at the root.
func up(h []scored, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !better(h[p], h[i]) {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func down(h []scored, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && better(h[l], h[r]) {
			m = r
		}
		if !better(h[i], h[m]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// fusedScore is one tool in the fused ranking.
type fusedScore struct {
	doc        uint32
	score      float64
	lex, dense float64
}

// fuse combines the two rankings. Both sides are normalised to [0,1]: the
// lexical score by the query's best, the dense cosine min-max over its pool.
func (d *Discoverer) fuse(lex, dense []scored) []fusedScore {
	type pair struct {
		lex, dense float64
		lr, dr     int
	}
	m := make(map[uint32]*pair, len(lex)+len(dense))
	get := func(doc uint32) *pair {
		p := m[doc]
		if p == nil {
			p = &pair{lr: -1, dr: -1}
			m[doc] = p
		}
		return p
	}
	if len(lex) > 0 {
		top := lex[0].score
		for r, c := range lex {
			p := get(c.doc)
			p.lex, p.lr = c.score/top, r
		}
	}
	if len(dense) > 0 {
		hi, lo := dense[0].score, dense[len(dense)-1].score
		if len(dense) == 1 || hi <= lo {
			lo = 0
		}
		for r, c := range dense {
			p := get(c.doc)
			if hi > lo {
				p.dense = math.Max(0, (c.score-lo)/(hi-lo))
			}
			p.dr = r
		}
	}
	out := make([]fusedScore, 0, len(m))
	w := d.lexWeight
	if len(dense) == 0 {
		w = 1
	} else if len(lex) == 0 {
		w = 0
	}
	for doc, p := range m {
		var sc float64
		switch d.fusion {
		case FusionRRF:
			const c = 60
			if p.lr >= 0 {
				sc += 1 / float64(c+p.lr+1)
			}
			if p.dr >= 0 {
				sc += 1 / float64(c+p.dr+1)
			}
			sc /= 2.0 / (c + 1)
		default:
			sc = w*p.lex + (1-w)*p.dense
		}
		out = append(out, fusedScore{doc: doc, score: sc, lex: p.lex, dense: p.dense})
	}
	slices.SortFunc(out, func(a, b fusedScore) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return int(a.doc) - int(b.doc)
	})
	return out
}

// confidence estimates the probability that the first fused candidate is
// right, from how far it leads and whether the two sides agree. The
// coefficients are a Platt scaling fitted on the public datasets (TestCalibrate)
// (docs/benchmarks.md has the calibration table).
func confidence(fused []fusedScore, lex, dense []scored, p queryPlan) float64 {
	if len(fused) == 0 {
		return 0
	}
	gap := fused[0].score
	if len(fused) > 1 {
		gap -= fused[1].score
	}
	agree := 0.0
	if len(lex) > 0 && len(dense) > 0 && lex[0].doc == dense[0].doc {
		agree = 1
	}
	z := confBias + confGap*gap + confAgree*agree
	if len(lex) == 0 {
		z += confNoLex
	}
	return 1 / (1 + math.Exp(-z))
}

// Confidence model coefficients (see confidence).
var (
	confBias  = -1.59
	confGap   = 4.13
	confAgree = 1.03
	confNoLex = -1.03
)

// cosine is the dot product of the normalised query vector (non-zero at
// dimensions nz) with card i's quantised vector.
func (x *Index) cosine(q []float32, nz []int32, i uint32) float64 {
	row := x.rows[int(i)*x.dim : int(i+1)*x.dim]
	var sum float32
	for _, d := range nz {
		sum += q[d] * float32(row[d])
	}
	return float64(sum * x.scales[i])
}
