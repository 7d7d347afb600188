package discovery

import (
	"cmp"
	"context"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery/analysis"
	"github.com/toolgate/toolgate/tools/discovery/lexicon"
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
	// cognateWeight scales, on top of translationWeight, the catalog's
	// terms that an untranslated Spanish or Polish word spells
	// (cognate.go).
	cognateWeight = 1.0
	// listWeight is the weight of listTerm in a request that asks which
	// things of a kind there are (listQuestion).
	listWeight = 0.75
	// poolSize is how many of each side's best tools enter fusion.
	poolSize = 100
)

// listTerm is the index's term for "list".
var listTerm = analysis.Stem(analysis.English, "list")

// placeTerms are the index's terms for "search" and "find", which a
// question where something is asks for (placeQuestion), at listWeight.
var placeTerms = []string{analysis.Stem(analysis.English, "search"), analysis.Stem(analysis.English, "find")}

func trailingZeros(w uint64) int { return bits.TrailingZeros64(w) }

// queryTerm is one distinct term of a request that the index knows, by
// its id in the index's dictionary, with the request's weight for it.
type queryTerm struct {
	id uint32
	w  float64
}

// queryPlan is an analysed request.
type queryPlan struct {
	lang  analysis.Lang
	ids   []identifier
	dense string // text to embed
}

// plan analyses a request: its language, terms (with English translations
// for Spanish and Polish and lower-weighted context terms) and identifiers.
// The terms the index knows go to s.terms, in order of first appearance,
// each once with its largest weight; the others can match nothing.
func (d *Discoverer) plan(x *Index, s *scratch, query string, context []string, baseline bool) queryPlan {
	a := d.analyzer
	var p queryPlan
	s.embeddedFor = ""
	s.growTerms(len(x.postings))
	s.terms = s.terms[:0]
	addID := func(id uint32, w float64) {
		if at := s.termAt[id]; at == 0 {
			s.terms = append(s.terms, queryTerm{id, w})
			s.termAt[id] = int32(len(s.terms))
		} else if w > s.terms[at-1].w {
			s.terms[at-1].w = w
		}
	}
	// addTerm adds the term t at w if the index knows it, and reports
	// whether some card uses it.
	addTerm := func(t string, w float64) bool {
		id, ok := x.terms[t]
		if !ok {
			return false
		}
		if isDigits(t) && !baseline {
			addID(id, w*digitWeight) // a value, seldom a card's word
		} else {
			addID(id, w)
		}
		return len(x.postings[id]) > 0
	}
	add := func(ts []string, w float64) {
		for _, t := range ts {
			addTerm(t, w)
		}
	}
	// addWords is add(s.words[from:], 1) noting in s.used, beside each
	// word, whether cards use it: buildWiden keys x.widen by stems no card
	// uses and x.unnamed by stems cards use, so widen and widenUnnamed
	// look a word up only where it can be, not in both maps and x.terms
	// again.
	addWords := func(from int) {
		s.used = s.used[:from]
		for _, t := range s.words[from:] {
			s.used = append(s.used, addTerm(t, 1))
		}
	}
	// capWords lowers to w the weight of the English words ws among the
	// request's terms.
	capWords := func(ws []string, w float64) {
		for _, v := range ws {
			if id, ok := x.terms[a.Stem(analysis.English, v)]; ok {
				if at := s.termAt[id]; at != 0 {
					s.terms[at-1].w = min(s.terms[at-1].w, w)
				}
			}
		}
	}
	// widen adds, at w, the catalog's words for the synonyms of each of
	// ts that no card uses (buildWiden), and the catalog's words that
	// differ from it by a nominal suffix (derivedTerm). used is nil or,
	// beside each of ts, whether cards use it (addWords).
	widen := func(ts []string, used []bool, w float64) {
		for i, t := range ts {
			if slices.Contains(s.names, t) {
				continue
			}
			if used != nil && used[i] {
				continue // neither in x.widen nor derived
			}
			for _, id := range x.widen[t] {
				addID(id, w)
			}
			if len(t) < minDerivedBase || used == nil && x.uses(t) {
				continue
			}
			plus := x.suffixed[t]
			for k := range nominalSuffixes {
				if id, ok := x.derivedTerm(t, k, plus[k]); ok {
					addID(id, w)
				}
			}
		}
	}
	// widenUnnamed adds, at w, the catalog's words for the synonyms of a
	// word of an English request that cards use but no tool's name: widen
	// covers a word no card uses. A catalog names its tools' actions with
	// one synonym each, so a command no tool is named by is said in the
	// catalog in another word, and the cards that use it use it in
	// passing ("text" in a card about templates, where "text +1415…"
	// asks for the tool that sends a message). The request's command (the
	// stem of its first word, when that is a content word) is widened at
	// widenWeight, its other words (passing) at passingWeight unless a
	// tool's summary has them.
	widenUnnamed := func(t string, used bool, w float64, passing bool) {
		if !used {
			return // not in x.unnamed
		}
		u := x.unnamed[t]
		if lightVerbs[t] != "" || slices.Contains(s.names, t) || (passing && u.summarised) {
			return
		}
		for _, id := range u.ids {
			addID(id, w)
		}
	}
	if baseline {
		p.lang = detect(query)
		s.words = a.Terms(s.words[:0], query, analysis.English)
		add(s.words, 1)
	} else {
		p.ids = identifiers(query, lookFor{sql: len(x.kinds[idSQL]) > 0, channel: len(x.kinds[idChannel]) > 0})
		text, cut := cutStandIns(query, p.ids)
		asksList, asksPlace := false, false
		// The request's phrases (the English words they stand for) are
		// looked up in its folded tokens, stop words included.
		s.phrase, s.light, s.idiom, s.prep, s.lemmas = s.phrase[:0], s.light[:0], s.idiom[:0], s.prep[:0], s.lemmas[:0]
		s.command = s.command[:0]
		if cut {
			p.lang = detect(query)
			a.TokensFunc(s.toks[:0], text, func(toks []string) {
				if p.lang == analysis.English {
					if f := foreignLang(a, d.lex, x, toks); f != "" {
						p.lang = f
					}
				}
				asksList, asksPlace = s.readTokens(a, d.lex, toks, p.lang)
				clear(toks)
				s.toks = toks[:0]
			})
			s.words = a.Terms(s.words[:0], text, p.lang)
		} else {
			// One pass detects the language and analyses the words. An
			// English request embeds what it embeds (text itself) from
			// the same tokens: whatever languages the embedder's analyzer
			// detects among, English wins there too.
			foreign := analysis.Lang("")
			s.words, p.lang = a.TermsDetectFunc(s.words[:0], text, func(toks []string, lang analysis.Lang) {
				if lang == analysis.English {
					if foreign = foreignLang(a, d.lex, x, toks); foreign != "" {
						lang = foreign
					}
				}
				asksList, asksPlace = s.readTokens(a, d.lex, toks, lang)
				if lang == analysis.English && d.tokenEmbedder != nil && x.dim > 0 && text != "" {
					s.nzDim, s.nzVal = d.tokenEmbedder.EmbedTokensNonZero(s.nzDim[:0], s.nzVal[:0], toks, lang)
					s.embeddedFor = text
				}
			})
			if foreign != "" {
				// Words detection could not place: read as the language
				// they are words of (foreignLang).
				p.lang = foreign
				s.words = a.Terms(s.words[:0], text, p.lang)
			}
		}
		addWords(0)
		if p.lang == analysis.English {
			s.names = nameWords(s.names[:0], a, text)
			for _, w := range s.idiom {
				s.names = append(s.names, a.Stem(analysis.English, w))
			}
			if len(s.lemmas) > 0 {
				// "paid" is the word "pay": its terms weigh as the word's.
				n := len(s.words)
				for _, l := range s.lemmas {
					s.words = a.Terms(s.words, l, analysis.English)
				}
				addWords(n)
			}
			widen(s.words, s.used, widenWeight)
			for k, t := range s.words {
				if k == 0 && string(s.command) == t {
					widenUnnamed(t, s.used[k], widenWeight, false)
				} else if passingWeight > 0 && len(s.words) <= passingMaxTerms {
					widenUnnamed(t, s.used[k], passingWeight, true)
				}
			}
			capWords(s.light, lightVerbWeight)
			capWords(s.idiom, 0) // dropped below
			capWords(s.prep, prepositionWeight)
		}
		if asksList {
			if id, ok := x.terms[listTerm]; ok {
				addID(id, listWeight)
			}
		}
		if asksPlace {
			for _, t := range placeTerms {
				if id, ok := x.terms[t]; ok {
					addID(id, listWeight)
				}
			}
		}
		if p.lang == analysis.English && !namesObject(p.ids) {
			if sn, ok := d.lex.Sense(s.words); ok && d.verbUse(text, s.words, sn) {
				// The verb means the pair's action here: its own word
				// ("open", also a state or a browser's verb) is kept only
				// as a hint.
				if id, ok := x.terms[s.words[sn.Verb]]; ok {
					if at := s.termAt[id]; at != 0 {
						s.terms[at-1].w = min(s.terms[at-1].w, senseVerbWeight)
					}
				}
				for _, a := range sn.Actions {
					if id, ok := x.terms[a]; ok {
						addID(id, 1)
					}
				}
			}
		}
		var english []string
		if len(s.phrase) > 0 {
			s.pterms = s.pterms[:0]
			for _, w := range s.phrase {
				s.pterms = a.Terms(s.pterms, w, analysis.English)
			}
			if p.lang == analysis.English {
				add(s.pterms, phraseWeight)
			} else {
				add(s.pterms, translationWeight)
				english = append(english, s.pterms...)
			}
			clear(s.pterms)
			clear(s.phrase)
		}
		if p.lang != analysis.English {
			// Tool names and borrowed words ("pull request") stay English.
			s.words = a.TermsBorrowed(s.words[:0], text, p.lang)
			add(s.words, translationWeight)
			tr, acts, lead, unknown := translate(a, d.lex, &d.translations, text, p.lang)
			add(tr, translationWeight)
			s.cognates = x.cognateTerms(s.cognates[:0], unknown)
			for _, id := range s.cognates {
				addID(id, translationWeight*cognateWeight)
			}
			add(acts, translationWeight)
			english = append(append(english, tr...), acts...)
			// The command's English is widened as an English word no
			// card uses is ("zapomnij": forget, which a catalog says
			// as delete); widening every translated word cost the
			// held-out dev split (docs/discovery.md).
			widen(lead, nil, widenWeight*translationWeight)
		}
		for i := len(context) - 1; i >= 0 && i >= len(context)-2; i-- {
			s.words = a.Terms(s.words[:0], context[i], "")
			add(s.words, contextWeight)
		}
		p.dense = text
		if len(english) > 0 {
			p.dense += " " + strings.Join(english, " ")
		}
	}
	clear(s.words)
	for _, t := range s.terms {
		s.termAt[t.id] = 0
	}
	s.terms = slices.DeleteFunc(s.terms, func(t queryTerm) bool { return t.w == 0 })
	return p
}

// scratch is per-query working memory, pooled. Between queries every
// per-tool and per-term array is all zero; a query resets what it touched.
type scratch struct {
	acc     []float32 // lexical score per tool
	ident   []bool    // identifier bonus given, per tool
	touched []uint32  // tools with acc or ident set
	cand    []scored
	keys    []lexKey // the touched tools' positive scores, as keys
	words   []string
	used    []bool   // beside each of words in plan: whether cards use it
	toks    []string // a request's folded tokens, while looking for phrases
	phrase  []string // the English words of its phrases
	pterms  []string // and their terms
	light   []string // its light and framing verbs (lightVerbs, framingVerb)
	names   []string // the terms of its joined names (nameWords) and idioms
	idiom   []string // the words of its adverbial idioms (idiomWords)
	lemmas  []string // the lemmas of its irregular English forms (lemmaWords)
	prep    []string // its particles that stand as prepositions (prepositionWords)
	terms   []queryTerm
	termAt  []int32 // per term id: 1 + its index in terms, during plan
	qvec    []float32
	nzDim   []int32   // the query vector's non-zero dimensions
	nzVal   []float32 // and their values
	// embeddedFor is the text whose vector plan has put in nzDim and
	// nzVal (not yet unit), from the tokens it analysed; "" when none.
	// embedQuery uses it only for that very text.
	embeddedFor string
	fLex        []float64 // normalised lexical score per tool in the fusion
	fDense      []float64 // normalised dense score per tool in the fusion
	fIn         []uint8   // per tool: 1 in the lexical pool, 2 in the dense pool
	fDocs       []uint32  // the tools with fIn set
	fused       []fusedScore
	pool        []scored
	fill        []scored // fillDense's tools
	cognates    []uint32 // a Spanish or Polish request's cognate terms

	// command is the English stem of a request's first token (readTokens),
	// copied: the tokens are cut from a buffer the next request reuses.
	command []byte
}

// readTokens reads a request's folded tokens in lang for what its words
// alone do not say: the English words of its phrases (s.phrase), its light
// and framing verbs (s.light), idioms (s.idiom) and particles standing as
// prepositions (s.prep), and whether it asks which things there are (or
// to be shown them) or where something is.
func (s *scratch) readTokens(a *analysis.Analyzer, lex *lexicon.Lexicon, toks []string, lang analysis.Lang) (asksList, asksPlace bool) {
	if phraseWeight > 0 {
		s.phrase, s.light = phraseWords(s.phrase, s.light, a, lex, toks, lang)
	}
	if lang == analysis.English {
		s.light = framingVerbs(s.light, toks)
		s.idiom = idiomWords(s.idiom, toks)
		s.prep = prepositionWords(s.prep, lex, toks)
		s.lemmas = lemmaWords(s.lemmas, lex, toks)
		if len(toks) > 0 {
			s.command = append(s.command[:0], a.Stem(analysis.English, toks[0])...)
		}
	}
	return listQuestion(toks, lang) || showList(toks, lang), placeQuestion(toks, lang)
}

var scratchPool = sync.Pool{New: func() any { return &scratch{} }}

func getScratch(n int) *scratch {
	s := scratchPool.Get().(*scratch)
	if cap(s.acc) < n {
		s.acc = make([]float32, n)
		s.ident = make([]bool, n)
		s.fLex = make([]float64, n)
		s.fDense = make([]float64, n)
		s.fIn = make([]uint8, n)
	}
	s.acc = s.acc[:n]
	s.ident = s.ident[:n]
	s.fLex, s.fDense, s.fIn = s.fLex[:n], s.fDense[:n], s.fIn[:n]
	s.touched = s.touched[:0]
	return s
}

func (s *scratch) growTerms(n int) {
	if cap(s.termAt) < n {
		s.termAt = make([]int32, n)
	}
	s.termAt = s.termAt[:n]
}

func putScratch(s *scratch) {
	if len(s.touched) > len(s.acc)/16 {
		clear(s.acc) // a common term touched much of a big catalog
		clear(s.ident)
	} else {
		for _, i := range s.touched {
			s.acc[i] = 0
			s.ident[i] = false
		}
	}
	s.touched = s.touched[:0]
	for _, i := range s.fDocs {
		s.fLex[i], s.fDense[i], s.fIn[i] = 0, 0, 0
	}
	s.fDocs = s.fDocs[:0]
	scratchPool.Put(s)
}

type scored struct {
	doc   uint32
	score float64
}

// searchResult is one search's ranking. top is the caller's buffer.
type searchResult struct {
	top        []fusedScore
	confidence float64
	lang       analysis.Lang
}

func allowed(b []uint64, i uint32) bool { return b[i/64]&(1<<(i%64)) != 0 }

// search ranks the view's tools for one query and appends the best k to
// top (its capacity reused).
func (d *Discoverer) search(ctx context.Context, x *Index, view *tools.View, query string, context []string, k int, top []fusedScore) (searchResult, error) {
	if view.Snapshot() != x.snap {
		return searchResult{}, ErrNoView
	}
	n := len(x.docs)
	b := view.Bits()
	s := getScratch(n)
	defer putScratch(s)
	p := d.plan(x, s, query, context, d.method == MethodBM25)
	res := searchResult{lang: p.lang, top: top[:0]}

	var lex, rerank []scored
	if d.method != MethodDense {
		lists := x.postings
		if d.method == MethodBM25 {
			lists = x.basePostings()
		}
		acc, touched := s.acc, s.touched
		every := view.Len() == n // no tool to skip: no bit to test
		for _, qt := range s.terms {
			touched = addPostings(acc, touched, lists[qt.id], float32(qt.w), b, every)
		}
		s.touched = touched
		d.identifierBonus(x, b, p.ids, s)
		if d.method != MethodBM25 {
			for _, qt := range s.terms {
				for _, ps := range x.negative[qt.id] {
					if allowed(b, ps.doc) && acc[ps.doc] > 0 {
						acc[ps.doc] -= float32(notForPenalty * qt.w * float64(ps.impact))
					}
				}
			}
		}
		depth := poolSize
		if d.embedder != nil && d.method == MethodHybrid {
			depth = max(poolSize, d.rerank)
		}
		// Only sets are needed (the best depth tools, the best poolSize and
		// the best d.rerank of them) and each side's best: selection, not
		// sorting. The first, over every tool touched, compares keys.
		keys := s.keys[:0]
		for _, i := range s.touched {
			if v := acc[i]; v > 0 {
				keys = append(keys, newLexKey(i, v))
			}
		}
		s.keys = keys
		s.cand = s.cand[:0]
		for _, key := range keys[:selectKeys(keys, depth)] {
			s.cand = append(s.cand, key.scored())
		}
		sel := s.cand
		s.pool = append(s.pool[:0], sel[:selectBest(sel, poolSize)]...)
		lex = s.pool
		rerank = sel[:selectBest(sel, d.rerank)]
		if d.fusion == FusionRRF {
			sortScored(lex)
		}
	}
	var dense []scored
	denseOn, scanned := false, false
	if denseOn = d.embedder != nil && d.method != MethodLexical && d.method != MethodBM25 && x.dim > 0 && p.dense != ""; denseOn {
		if err := d.embedQuery(ctx, x, s, p.dense); err != nil {
			return res, err
		}
		// Re-scoring the lexical side's best tools measured as well as
		// scoring every tool (docs/benchmarks.md) at a fraction of the cost;
		// only a request sharing (almost) no word with any card falls back to
		// the exact scan, in catalogs small enough for it. "Almost" is the
		// Discoverer's default k, not the request's: the ranking must not
		// depend on how much of it is asked for (fillDense).
		if scanned = len(lex) < d.k && view.Len() <= d.exactLimit; scanned {
			s.cand = s.cand[:0]
			for w, word := range b {
				for word != 0 {
					i := uint32(w*64 + bits.TrailingZeros64(word))
					word &= word - 1
					s.cand = append(s.cand, scored{doc: i})
				}
			}
			x.cosines(s.nzDim, s.nzVal, s.cand)
			dense = s.cand
		} else {
			// rerank is s.cand's head: score it in place.
			x.cosines(s.nzDim, s.nzVal, rerank)
			dense = rerank
		}
		dense = dense[:selectBest(dense, poolSize)]
		if d.fusion == FusionRRF {
			sortScored(dense)
		}
	}
	var agree bool
	res.top, agree = d.fuse(s, lex, dense, res.top, max(k, 2))
	res.confidence = confidence(res.top, agree, len(lex) == 0)
	// The embedded default's cosine is evidence only beside a word: its
	// hashed letters give any string, random letters too, a positive
	// cosine with about half the cards.
	cosine := d.cosineEvidence || len(lex) > 0
	if res.top = s.withEvidence(res.top, cosine); len(res.top) == 0 {
		res.confidence = 0
	}
	if len(res.top) > k {
		res.top = res.top[:k]
	}
	if denseOn && cosine && !scanned && len(res.top) < k && view.Len() <= d.exactLimit {
		res.top = x.fillDense(s, b, res.top, k)
	}
	for i := range res.top {
		res.top[i].ident = s.ident[res.top[i].doc]
	}
	return res, nil
}

// addPostings adds w times the impact of each of ps to its tool's score
// in acc, appends to touched the tools it scores first, and returns
// touched. No identifier bonus is given yet: a zero score is an untouched
// tool. Unless every, it skips the tools b does not allow. A function of
// its own, so that the loop's few variables stay in registers (in search
// they were kept on the stack).
//
//go:noinline
func addPostings(acc []float32, touched []uint32, ps []posting, w float32, b []uint64, every bool) []uint32 {
	for _, p := range ps {
		if every || allowed(b, p.doc) {
			a := &acc[p.doc]
			if *a == 0 {
				touched = append(touched, p.doc)
			}
			*a += w * p.impact
		}
	}
	return touched
}

// embedQuery puts the normalised vector of text and its non-zero
// dimensions in s. An Embedder with an EmbedTo method (the default n-gram
// embedder) writes into s's buffer; any other is called through Embed.
func (d *Discoverer) embedQuery(ctx context.Context, x *Index, s *scratch, text string) error {
	var v []float32
	if e, ok := d.embedder.(embedderNonZero); ok {
		if err := ctx.Err(); err != nil {
			return err
		}
		if text == "" || s.embeddedFor != text { // plan has not embedded text's tokens
			s.nzDim, s.nzVal = e.EmbedNonZero(s.nzDim[:0], s.nzVal[:0], text)
		}
		s.embeddedFor = ""
		if e.Dim() != x.dim {
			return ErrEmbedder
		}
		s.nzDim, s.nzVal = unit(s.nzDim, s.nzVal)
		return nil
	}
	if e, ok := d.embedder.(embedderTo); ok {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.qvec = e.EmbedTo(s.qvec, text)
		v = s.qvec
	} else {
		vs, err := d.embedder.Embed(ctx, []string{text})
		if err != nil {
			return err
		}
		if len(vs) != 1 {
			return ErrEmbedder
		}
		v = vs[0]
	}
	if len(v) != x.dim {
		return ErrEmbedder
	}
	s.nzDim, s.nzVal = s.nzDim[:0], s.nzVal[:0]
	for dim, f := range v {
		if f != 0 {
			s.nzDim = append(s.nzDim, int32(dim))
			s.nzVal = append(s.nzVal, f)
		}
	}
	s.nzDim, s.nzVal = unit(s.nzDim, s.nzVal)
	return nil
}

// unit normalises the sparse vector (dims, vals) in place to unit length
// and drops the values that become zero.
func unit(dims []int32, vals []float32) ([]int32, []float32) {
	var sq float64
	for _, f := range vals {
		sq += float64(f) * float64(f)
	}
	if sq == 0 {
		return dims[:0], vals[:0]
	}
	inv := float32(1 / math.Sqrt(sq))
	n := 0
	for i, f := range vals {
		if q := f * inv; q != 0 {
			dims[n], vals[n] = dims[i], q
			n++
		}
	}
	return dims[:n], vals[:n]
}

// embedderNonZero is an Embedder that can append the non-zero dimensions
// of one text's vector (the one Embed returns), ascending, and their
// values: ngram.Embedder is one. A short request then costs its features,
// not the dimension.
type embedderNonZero interface {
	Dim() int
	EmbedNonZero(dims []int32, vals []float32, text string) ([]int32, []float32)
}

// embedderTokens is an Embedder that can give EmbedNonZero's result for
// a text from its folded tokens and language: ngram.Embedder is one.
type embedderTokens interface {
	EmbedTokensNonZero(dims []int32, vals []float32, toks []string, lang analysis.Lang) ([]int32, []float32)
}

// embedderTo is an Embedder that can write one text's vector (the one
// Embed returns) into a caller's buffer, reused when its capacity is the
// dimension: ngram.Embedder is one.
type embedderTo interface {
	EmbedTo(dst []float32, text string) []float32
}

// identifierBonus adds the bonus of tools whose parameters can take an id
// of the request.
func (d *Discoverer) identifierBonus(x *Index, b []uint64, ids []identifier, s *scratch) {
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
			if s.acc[doc] == 0 {
				s.touched = append(s.touched, doc)
			}
			s.acc[doc] += float32(bonusScale * v)
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

// lexKey is a tool's positive lexical score and number as one integer
// whose order is better's: the score's float32 bits (which order positive
// floats as their values) above the number's complement (a lower number
// is better at an equal score).
type lexKey uint64

func newLexKey(doc uint32, score float32) lexKey {
	return lexKey(math.Float32bits(score))<<32 | lexKey(^doc)
}

func (k lexKey) scored() scored {
	return scored{doc: ^uint32(k), score: float64(math.Float32frombits(uint32(k >> 32)))}
}

// selectKeys moves the n largest of keys to its front, in no particular
// order, and returns min(n, len(keys)). Keys are distinct (each holds its
// tool), so the set is the same whatever the method: a quickselect with
// Hoare's partition around a median of three, which measured two to three
// times faster than a heap of the n largest over a long query's thousands
// of touched tools; a range that keeps splitting badly is sorted, so the
// cost is O(len(keys)) expected and O(len(keys)·log len(keys)) at worst.
func selectKeys(keys []lexKey, n int) int {
	if n >= len(keys) {
		return len(keys)
	}
	if n <= 0 {
		return 0
	}
	// Every key left of lo is larger than any in keys[lo:hi+1], every key
	// right of hi smaller: the n-th largest belongs at n-1 in between.
	lo, hi := 0, len(keys)-1
	for budget := 2 * bits.Len(uint(len(keys))); lo < hi; budget-- {
		if budget == 0 {
			slices.SortFunc(keys[lo:hi+1], func(a, b lexKey) int { return cmp.Compare(b, a) })
			return n
		}
		a, b, c := keys[lo], keys[lo+(hi-lo)/2], keys[hi]
		pivot := max(min(a, b), min(max(a, b), c))
		i, j := lo, hi
		for i <= j {
			for keys[i] > pivot {
				i++
			}
			for keys[j] < pivot {
				j--
			}
			if i <= j {
				keys[i], keys[j] = keys[j], keys[i]
				i++
				j--
			}
		}
		// Now keys[lo:j+1] ≥ pivot ≥ keys[i:hi+1], and what stands
		// between (if anything) is the pivot itself.
		switch {
		case n-1 <= j:
			hi = j
		case n-1 >= i:
			lo = i
		default:
			return n
		}
	}
	return n
}

// selectBest moves the n best of c (by better) to its front, in no
// particular order, and returns min(n, len(c)). Quickselect with a
// median-of-three pivot; a sort finishes a range that keeps splitting
// badly, so the cost is O(len(c)) expected and O(len(c)·log len(c)) at
// worst.
func selectBest(c []scored, n int) int {
	if n >= len(c) {
		return len(c)
	}
	if n <= 0 {
		return 0
	}
	if len(c) > 8*n {
		// Far more items than wanted (a common term in a big catalog): a
		// heap of the n best seen, whose root most items fail to beat.
		h := c[:n]
		for i := n/2 - 1; i >= 0; i-- {
			down(h, i)
		}
		for _, v := range c[n:] {
			if better(v, h[0]) {
				h[0] = v
				down(h, 0)
			}
		}
		return n
	}
	lo, hi := 0, len(c) // the boundary n lies in c[lo:hi]
	for budget := 2 * bits.Len(uint(len(c))); hi-lo > 16; budget-- {
		if budget == 0 {
			sortScored(c[lo:hi])
			return n
		}
		// The median of three to c[lo] as the pivot.
		i0, i1, i2 := lo, lo+(hi-lo)/2, hi-1
		if better(c[i1], c[i0]) {
			i0, i1 = i1, i0
		}
		if better(c[i2], c[i1]) {
			i1, i2 = i2, i1
		}
		if better(c[i1], c[i0]) {
			i0, i1 = i1, i0
		}
		c[lo], c[i1] = c[i1], c[lo]
		pv := c[lo]
		i := lo + 1
		for j := lo + 1; j < hi; j++ {
			if better(c[j], pv) {
				c[i], c[j] = c[j], c[i]
				i++
			}
		}
		// c[lo+1:i] are better than the pivot; put the pivot at i-1.
		c[lo], c[i-1] = c[i-1], c[lo]
		switch p := i - 1; {
		case p == n || p+1 == n:
			return n
		case p > n:
			hi = p
		default:
			lo = p + 1
		}
	}
	sortScored(c[lo:hi])
	return n
}

// down restores the heap order of h below i; the root is the worst kept.
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

// sortScored sorts c best first.
func sortScored(c []scored) {
	slices.SortFunc(c, func(a, b scored) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
}

func better(a, b scored) bool { return ahead(a.score, a.doc, b.score, b.doc) }

// ahead reports whether a tool scored sa, numbered da, ranks before one
// scored sb, numbered db: a higher score first, a lower number at equal
// scores.
func ahead(sa float64, da uint32, sb float64, db uint32) bool {
	if sa != sb {
		return sa > sb
	}
	return da < db
}

// best returns the best of c, which is not empty.
func best(c []scored) scored {
	b := c[0]
	for _, v := range c[1:] {
		if better(v, b) {
			b = v
		}
	}
	return b
}

// fillDense is for a request that matched at least the Discoverer's
// default k tools by their words (so the dense side scanned no others)
// but fewer than the k it asks for. top is its whole fused ranking;
// fillDense appends the authorized tools it does not hold, best dense
// cosine first, up to k: what the exact scan would have offered, after
// every ranked tool, so that the ranked ones keep their order whatever k
// is. A filled tool's score is its cosine scaled by the best filled
// one's, times the last ranked score: no higher than any ranked tool's.
func (x *Index) fillDense(s *scratch, b []uint64, top []fusedScore, k int) []fusedScore {
	s.fill = s.fill[:0]
	for w, word := range b {
		for word != 0 {
			i := uint32(w*64 + bits.TrailingZeros64(word))
			word &= word - 1
			if s.fIn[i] == 0 {
				s.fill = append(s.fill, scored{doc: i})
			}
		}
	}
	if len(s.fill) == 0 || len(top) == 0 {
		return top
	}
	x.cosines(s.nzDim, s.nzVal, s.fill)
	fill := s.fill[:selectBest(s.fill, k-len(top))]
	sortScored(fill)
	last, hi := top[len(top)-1].score, fill[0].score
	for _, c := range fill {
		if c.score <= 0 {
			break // no evidence: it does not pad the shortlist
		}
		f := fusedScore{doc: c.doc, dense: c.score / hi}
		f.score = last * f.dense
		top = append(top, f)
	}
	return top
}

// withEvidence drops from top, in place, the tools the request gave no
// evidence for: no lexical score (no word, identifier or translation of
// the request matched the card) and, when cosine is set, no positive
// cosine, or a fused score of 0 (the lowest cosine of the dense pool, no
// word matched: nothing in its favour beside the others); when cosine is
// not set a cosine is no evidence at all. Fusion ranks every tool of its
// pools, so such a tool can still rank (an exact scan of a request whose
// vector is zero, RRF's rank share): it would pad the shortlist with
// tools in ID order. A tool with evidence keeps its place. With poolSize
// cosines in the pool, the lowest one ranks in a shortlist only in a view
// of a few tools.
func (s *scratch) withEvidence(top []fusedScore, cosine bool) []fusedScore {
	kept := top[:0]
	for _, f := range top {
		if s.acc[f.doc] > 0 || (cosine && s.fIn[f.doc]&denseEvidence != 0 && f.score > 0) {
			kept = append(kept, f)
		}
	}
	return kept
}

// fusedScore is one tool in the fused ranking.
type fusedScore struct {
	doc        uint32
	score      float64
	lex, dense float64
	ident      bool
}

func (a fusedScore) better(b fusedScore) bool { return ahead(a.score, a.doc, b.score, b.doc) }

// The bits of scratch.fIn: the tool is in the lexical pool, in the dense
// pool, and its cosine is positive (evidence, see withEvidence).
const inLex, inDense, denseEvidence = 1, 2, 4

// fuse combines the two pools and appends the n best of the combined
// ranking to dst, best first (topFused's order); it also reports whether
// both pools have the same best tool. Both sides are normalised to
// [0,1]: the lexical score by the query's best, the dense cosine min-max
// over its pool. RRF needs both pools sorted.
func (d *Discoverer) fuse(s *scratch, lex, dense []scored, dst []fusedScore, n int) ([]fusedScore, bool) {
	mark := func(doc uint32, bit uint8) {
		if s.fIn[doc] == 0 {
			s.fDocs = append(s.fDocs, doc)
		}
		s.fIn[doc] |= bit
	}
	rank := func(doc uint32, pool []scored) int {
		for r, c := range pool {
			if c.doc == doc {
				return r
			}
		}
		return -1
	}
	var bestLex, bestDense scored
	if len(lex) > 0 {
		bestLex = best(lex)
		top := bestLex.score
		for _, c := range lex {
			mark(c.doc, inLex)
			s.fLex[c.doc] = c.score / top
		}
	}
	if len(dense) > 0 {
		bestDense = dense[0]
		lo := dense[0].score
		for _, c := range dense[1:] {
			if better(c, bestDense) {
				bestDense = c
			}
			lo = min(lo, c.score)
		}
		hi := bestDense.score
		if len(dense) == 1 || hi <= lo {
			lo = 0
		}
		for _, c := range dense {
			mark(c.doc, inDense)
			if c.score > 0 {
				s.fIn[c.doc] |= denseEvidence
			}
			if hi > lo {
				// The built-in max is [math.Max] here (no NaN, and +0 over
				// -0 alike), inlined.
				s.fDense[c.doc] = max(0, (c.score-lo)/(hi-lo))
			}
		}
	}
	agree := len(lex) > 0 && len(dense) > 0 && bestLex.doc == bestDense.doc
	w := d.lexWeight
	if len(dense) == 0 {
		w = 1
	} else if len(lex) == 0 {
		w = 0
	}
	// A shortlist's few best are kept as they come (topFused's
	// insertion), without writing out the whole fused pool.
	keep := n <= topFusedInsert
	if keep && d.fusion != FusionRRF {
		// The weighted sum, the default, in a loop of its own: a tool
		// that does not beat the kept best is not made a fusedScore.
		fLex, fDense := s.fLex, s.fDense
		for _, doc := range s.fDocs {
			sc := w*fLex[doc] + (1-w)*fDense[doc]
			if len(dst) < n || ahead(sc, doc, dst[n-1].score, dst[n-1].doc) {
				dst = insertFused(dst, fusedScore{doc: doc, score: sc, lex: fLex[doc], dense: fDense[doc]}, n)
			}
		}
		return dst, agree
	}
	out := s.fused[:0]
	for _, doc := range s.fDocs {
		var sc float64
		switch d.fusion {
		case FusionRRF:
			const c = 60
			if s.fIn[doc]&inLex != 0 {
				sc += 1 / float64(c+rank(doc, lex)+1)
			}
			if s.fIn[doc]&inDense != 0 {
				sc += 1 / float64(c+rank(doc, dense)+1)
			}
			sc /= 2.0 / (c + 1)
		default:
			sc = w*s.fLex[doc] + (1-w)*s.fDense[doc]
		}
		f := fusedScore{doc: doc, score: sc}
		if keep {
			if len(dst) < n || f.better(dst[n-1]) {
				f.lex, f.dense = s.fLex[doc], s.fDense[doc]
				dst = insertFused(dst, f, n)
			}
			continue
		}
		f.lex, f.dense = s.fLex[doc], s.fDense[doc]
		out = append(out, f)
	}
	s.fused = out
	if keep {
		return dst, agree
	}
	return topFused(dst, out, n), agree
}

// topFusedInsert is the largest n for which topFused keeps the best by
// insertion; a larger one sorts.
const topFusedInsert = 32

// topFused appends the n best of fused to dst, best first: an insertion
// into the kept best for a shortlist's small n, a sort beyond.
func topFused(dst, fused []fusedScore, n int) []fusedScore {
	if n > topFusedInsert {
		slices.SortFunc(fused, func(a, b fusedScore) int {
			switch {
			case a.better(b):
				return -1
			case b.better(a):
				return 1
			}
			return 0
		})
		return append(dst, fused[:min(n, len(fused))]...)
	}
	for _, f := range fused {
		if len(dst) < n || f.better(dst[n-1]) {
			dst = insertFused(dst, f, n)
		}
	}
	return dst
}

// insertFused puts f in its place among dst, the best so far (at most n,
// best first), dropping the worst when n are there and f beats it.
func insertFused(dst []fusedScore, f fusedScore, n int) []fusedScore {
	if len(dst) < n {
		dst = append(dst, f)
	} else {
		dst[n-1] = f
	}
	for i := len(dst) - 1; i > 0 && dst[i].better(dst[i-1]); i-- {
		dst[i], dst[i-1] = dst[i-1], dst[i]
	}
	return dst
}

// confidence estimates the probability that the first fused candidate is
// right, from how far it leads and whether the two sides agree (their
// best tools are one). The coefficients are a Platt scaling fitted on
// the public datasets (TestCalibrate) (docs/benchmarks.md has the
// calibration table).
func confidence(fused []fusedScore, agree, noLex bool) float64 {
	if len(fused) == 0 {
		return 0
	}
	gap := fused[0].score
	if len(fused) > 1 {
		gap -= fused[1].score
	}
	z := confBias + confGap*gap
	if agree {
		z += confAgree
	}
	if noLex {
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

// cosines sets the score of each of c to the dot product of the
// normalised query vector (its non-zero dimensions dims with values vals)
// with that card's quantised vector. Four cards share one pass over dims:
// each card's sum still adds the dimensions in order (the same float32
// result as one card at a time), but the four chains of additions overlap
// instead of waiting on each other. Vectors of the default embedder's
// dimension go through cosinesFast, the same loop without bounds checks;
// this one serves any other dimension (an Embedder of the caller's, a
// model's 768 or 1,536).
//
// Each product is converted to float32 before it is added: the explicit
// conversion rounds it, so no compiler fuses the multiply and the add
// (GOAMD64=v3 does, into VFMADD), and the rows, the columns and the AVX2
// loop (dense_cols.go) add the same rounded products: the same bits.
func (x *Index) cosines(dims []int32, vals []float32, c []scored) {
	vals = vals[:len(dims)]
	if x.cols != nil && 8*len(c) >= x.colStride {
		// Scoring every card column by column costs less than these.
		x.cosinesAll(dims, vals, c)
		return
	}
	j := 0
	if x.dim == fastDim {
		j = x.cosinesFast(dims, vals, c)
	}
	for ; j+4 <= len(c); j += 4 {
		r0, r1, r2, r3 := x.row(c[j].doc), x.row(c[j+1].doc), x.row(c[j+2].doc), x.row(c[j+3].doc)
		var s0, s1, s2, s3 float32
		for k, d := range dims {
			v := vals[k]
			s0 += float32(v * float32(r0[d]))
			s1 += float32(v * float32(r1[d]))
			s2 += float32(v * float32(r2[d]))
			s3 += float32(v * float32(r3[d]))
		}
		c[j].score = float64(s0 * x.scales[c[j].doc])
		c[j+1].score = float64(s1 * x.scales[c[j+1].doc])
		c[j+2].score = float64(s2 * x.scales[c[j+2].doc])
		c[j+3].score = float64(s3 * x.scales[c[j+3].doc])
	}
	for ; j < len(c); j++ {
		r := x.row(c[j].doc)
		var sum float32
		for k, d := range dims {
			sum += float32(vals[k] * float32(r[d]))
		}
		c[j].score = float64(sum * x.scales[c[j].doc])
	}
}

// fastDim is the dimension cosinesFast serves: the default embedder's.
const fastDim = 512

// cosinesFast is cosines' loop for vectors of fastDim dimensions, eight
// cards a pass (rowDots), and returns how many of c it scored: all, or
// all but the last when len(c)%8 is 1. A last pass of two to seven cards
// repeats its last card's row in the lanes it lacks: each lane's sum is
// its own, so the padding changes none, and one pass of rowDots costs
// less than scoring two cards in Go (BFCL's 150 candidates leave six).
func (x *Index) cosinesFast(dims []int32, vals []float32, c []scored) int {
	row := func(i uint32) *[fastDim]int8 { return (*[fastDim]int8)(x.rows[int(i)*fastDim:]) }
	vals = vals[:len(dims)]
	var rows [8]*[fastDim]int8
	var sums [8]float32
	j := 0
	for ; j+8 <= len(c); j += 8 {
		for i := range rows {
			rows[i] = row(c[j+i].doc)
		}
		rowDots(&rows, dims, vals, &sums)
		for i, s := range sums {
			c[j+i].score = float64(s * x.scales[c[j+i].doc])
		}
	}
	if tail := c[j:]; len(tail) >= 2 {
		for i := range rows {
			rows[i] = row(tail[min(i, len(tail)-1)].doc)
		}
		rowDots(&rows, dims, vals, &sums)
		for i := range tail {
			tail[i].score = float64(sums[i] * x.scales[tail[i].doc])
		}
		j = len(c)
	}
	return j
}

// rowDotsGo is rowDots in Go: sums[i] is the sum, over k in order, of
// vals[k]·rows[i][dims[k]], each product rounded to float32. Rows as
// arrays and dimensions masked to fastDim (a no-op: every dimension is
// below it) let the compiler drop the bounds checks per dimension; eight
// chains of additions keep more of them in flight than four, and each
// quantised value is read as a float32 from int8Floats rather than
// converted (a conversion is two instructions and waits on the load).
func rowDotsGo(rows *[8]*[fastDim]int8, dims []int32, vals []float32, sums *[8]float32) {
	f := &int8Floats
	vals = vals[:len(dims)]
	r0, r1, r2, r3, r4, r5, r6, r7 := rows[0], rows[1], rows[2], rows[3], rows[4], rows[5], rows[6], rows[7]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for k, d := range dims {
		v := vals[k]
		d &= fastDim - 1
		s0 += float32(v * f[uint8(r0[d])])
		s1 += float32(v * f[uint8(r1[d])])
		s2 += float32(v * f[uint8(r2[d])])
		s3 += float32(v * f[uint8(r3[d])])
		s4 += float32(v * f[uint8(r4[d])])
		s5 += float32(v * f[uint8(r5[d])])
		s6 += float32(v * f[uint8(r6[d])])
		s7 += float32(v * f[uint8(r7[d])])
	}
	*sums = [8]float32{s0, s1, s2, s3, s4, s5, s6, s7}
}

// int8Floats is float32(q) for every int8 q, indexed by uint8(q): the
// exact value a conversion gives, so the products are the same bits.
var int8Floats = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(int8(uint8(i)))
	}
	return t
}()

// row is card i's quantised vector.
func (x *Index) row(i uint32) []int8 { return x.rows[int(i)*x.dim : int(i+1)*x.dim] }
