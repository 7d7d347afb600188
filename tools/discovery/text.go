package discovery

import (
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/toolgate/toolgate/tools/discovery/analysis"
	"github.com/toolgate/toolgate/tools/discovery/lexicon"
	"github.com/toolgate/toolgate/tools/discovery/ngram"
)

// detect guesses the language of a request.
func detect(text string) analysis.Lang { return analysis.Detect(text) }

var _ Embedder = (*ngram.Embedder)(nil)

// defaultEmbedder is the embedded n-gram embedder: no model, no network.
// A nil an means its own default analyzer.
func defaultEmbedder(lex *lexicon.Lexicon, an *analysis.Analyzer) Embedder {
	return ngram.New(&ngram.Options{Lexicon: lex, Analyzer: an})
}

// contentTokens returns the folded tokens of text that are not stop words
// of lang.
func contentTokens(a *analysis.Analyzer, text string, lang analysis.Lang) []string {
	toks := a.Tokens(nil, text)
	out := toks[:0]
	for _, t := range toks {
		if !analysis.IsStopWord(lang, t) {
			out = append(out, t)
		}
	}
	return out
}

// foreignLang returns the language, Spanish or Polish, that a request
// detected as English is written in, judged by its words; "" when it is
// English. Detection reads cue words and letters, and a short request
// without accents or function words ("zmien status rekordow") has none,
// so it falls back to English and its words go untranslated. Here a word
// counts for English when it is an English stop word, an English word of
// the lexicon or a term the cards use (read as English); for Spanish or
// Polish when it is neither, and a stop word or a word (or inflection) of
// that language's list. The language with more words than English and
// than the other wins. A request with one of detection's English cue
// words ("the", "my", "show") is English by evidence and returns at once,
// as do most others at the second test: none of their words is a Spanish
// or Polish word as written.
func foreignLang(a *analysis.Analyzer, lex *lexicon.Lexicon, x *Index, toks []string) analysis.Lang {
	isForeign := func(l analysis.Lang, t string) bool {
		return a.Detects(l) && (analysis.IsStopWord(l, t) || lex.Knows(l, t))
	}
	if slices.ContainsFunc(toks, analysis.IsEnglishCue) {
		return ""
	}
	if !slices.ContainsFunc(toks, func(t string) bool {
		return isForeign(analysis.Spanish, t) || isForeign(analysis.Polish, t)
	}) {
		return ""
	}
	// Counting, a word of the language's list may also be an inflection
	// that only its stem finds ("rekordow").
	reads := func(l analysis.Lang, t string) bool {
		return a.Detects(l) && (analysis.IsStopWord(l, t) || lex.Translate(l, t) != nil)
	}
	isEnglish := func(t string) bool {
		return analysis.IsStopWord(analysis.English, t) || lex.KnowsEnglish(t) || x.uses(analysis.Stem(analysis.English, t))
	}
	var en, es, pl int
	for _, t := range toks {
		if isDigits(t) {
			continue
		}
		if isEnglish(t) {
			en++
			continue
		}
		if reads(analysis.Spanish, t) {
			es++
		}
		if reads(analysis.Polish, t) {
			pl++
		}
	}
	switch {
	case pl > en && pl > es:
		return analysis.Polish
	case es > en && es > pl:
		return analysis.Spanish
	}
	// A request opened by a Spanish or Polish command or function word
	// that is no English word is in that language ("scal pull request",
	// "jakie kamienie milowe ma projekt Mobile Redesign"): the English
	// words are the borrowed ones, or names.
	if lead := toks[0]; !isEnglish(lead) {
		switch {
		case pl > es && (lex.IsEntry(analysis.Polish, lead) || analysis.IsStopWord(analysis.Polish, lead)):
			return analysis.Polish
		case es > pl && (lex.IsEntry(analysis.Spanish, lead) || analysis.IsStopWord(analysis.Spanish, lead)):
			return analysis.Spanish
		}
	}
	return ""
}

// translate returns the English terms (analysed as English) of the words
// of a Spanish or Polish text that the lexicon can translate, and the
// actions of the verb-object sense ([lexicon.Sense]) that the text's
// word-for-word English reads as: each content word's first translation
// in the text's order, an untranslated word (often a borrowed English one)
// as it is. "zapisz tekst do pliku" is save … file, to write; "abre la
// página" is open page, to navigate. The verb counts only when written as
// the lexicon's own entry, an infinitive or an imperative: a participle
// that leads a request ("otwarte zgłoszenia", open issues) is no command.
// lead is the English of the request's first word when it is such an
// entry: the command, which the caller widens as it widens an English
// request's words. unknown holds the content words the lexicon does not
// translate, with their English terms (for cognateTerms). c keeps each
// word's analysis (nil: none kept).
func translate(a *analysis.Analyzer, lex *lexicon.Lexicon, c *transCache, text string, lang analysis.Lang) (terms, actions, lead []string, unknown []unknownWord) {
	toks := contentTokens(a, text, lang)
	var stems []string
	var from []int // the token each of stems comes from
	for i, t := range toks {
		tt := c.get(a, lex, lang, t)
		if len(tt.all) == 0 {
			unknown = append(unknown, unknownWord{t, tt.first})
		}
		terms = append(terms, tt.all...)
		stems = append(stems, tt.first...)
		for range tt.first {
			from = append(from, i)
		}
	}
	if sn, ok := lex.Sense(stems); ok && lex.IsEntry(lang, toks[from[sn.Verb]]) {
		actions = sn.Actions
	}
	if len(toks) > 0 && lex.IsEntry(lang, toks[0]) {
		n := 0 // the stems of the first token
		for n < len(from) && from[n] == 0 {
			n++
		}
		lead = stems[:n]
	}
	return terms, actions, lead, unknown
}

// unknownWord is a content word of a Spanish or Polish request that the
// lexicon does not translate, and its terms read as English.
type unknownWord struct {
	word    string
	english []string
}

// transTerms is what translate takes from one Spanish or Polish word: the
// English terms of all its translations, and those of its first (of the
// word itself when it has none), as Analyzer.Terms analyses them. Terms
// analyses each token on its own, so a text's terms are its words' in
// order.
type transTerms struct {
	all, first []string
}

// transCache keeps transTerms by language and word, at most
// transCacheMax of them, starting over when full. Safe for concurrent
// use; the slices it hands out are shared and never modified.
type transCache struct {
	mu sync.RWMutex
	m  map[string]*transTerms
}

const transCacheMax = 4096

// get returns word's transTerms in lang, through the cache when c is not
// nil.
func (c *transCache) get(a *analysis.Analyzer, lex *lexicon.Lexicon, lang analysis.Lang, word string) *transTerms {
	var buf [64]byte
	key := append(append(append(buf[:0], lang...), 0), word...)
	if c != nil {
		c.mu.RLock()
		tt, ok := c.m[string(key)]
		c.mu.RUnlock()
		if ok {
			return tt
		}
	}
	tt := &transTerms{}
	tr := lex.Translate(lang, word)
	for _, e := range tr {
		tt.all = a.Terms(tt.all, e, analysis.English)
	}
	first := word
	if len(tr) > 0 {
		first = tr[0]
	}
	tt.first = a.Terms(nil, first, analysis.English)
	if c != nil {
		c.mu.Lock()
		if c.m == nil || len(c.m) >= transCacheMax {
			c.m = make(map[string]*transTerms)
		}
		c.m[string(key)] = tt
		c.mu.Unlock()
	}
	return tt
}

// expansion returns the lexicon's expansion of text: translations for
// Spanish and Polish words and English synonyms, as words (not analysed).
func expansion(a *analysis.Analyzer, lex *lexicon.Lexicon, text string, lang analysis.Lang) []string {
	return lex.Expand(nil, contentTokens(a, text, lang), lang)
}

// Phrases: a request's run of two or three words that the lexicon knows
// as one phrase ("get rid of", "above sea level", "zrzut ekranu", "paso a
// paso") stands for the English words of its hand-written group (up to
// phraseTool of them) or its translation, added to the request's lexical
// terms at phraseWeight (English) or translationWeight (Spanish, Polish).
// Single words cannot carry these meanings: "rid" or "sea" alone names no
// action. Calibrated on the held-out dev split (docs/discovery.md).
var (
	phraseWeight = 0.7
	phraseTool   = 3
)

// phraseWords appends to dst the English words of the lexicon's phrases
// found among a request's folded tokens, read in lang: by the words, and
// by their stems (through a's cache) where the words match no phrase. It
// appends to light the light verbs that open an English phrase found
// (lightVerbs), and returns both.
func phraseWords(dst, light []string, a *analysis.Analyzer, lex *lexicon.Lexicon, toks []string, lang analysis.Lang) ([]string, []string) {
	for i := 0; i+1 < len(toks); i++ {
		w1, w2, w3 := toks[i], toks[i+1], ""
		if i+2 < len(toks) {
			w3 = toks[i+2]
		}
		if !lex.MayStartPhraseIn(lang, w1, w2, w3) {
			continue
		}
		n := len(dst)
		if w3 != "" {
			dst = lex.PhraseWords(dst, lang, w1, w2, w3, phraseTool)
		}
		dst = lex.PhraseWords(dst, lang, w1, w2, "", phraseTool)
		if len(dst) == n {
			s1, s2 := a.Stem(lang, w1), a.Stem(lang, w2)
			if w3 != "" {
				dst = lex.PhraseWords(dst, lang, s1, s2, a.Stem(lang, w3), phraseTool)
			}
			dst = lex.PhraseWords(dst, lang, s1, s2, "", phraseTool)
		}
		if len(dst) > n && lang == analysis.English {
			if v, ok := lightVerbs[w1]; ok {
				light = append(light, v)
			}
		}
	}
	return dst, light
}

// framingVerbs appends to light the verbs of English toks that frame a
// request rather than name its action: "show me", "tell me", "help us",
// "give me". What is asked for is in the rest of the request.
func framingVerbs(light, toks []string) []string {
	for i := 0; i+1 < len(toks); i++ {
		if toks[i+1] != "me" && toks[i+1] != "us" {
			continue
		}
		if v, ok := framingVerb[toks[i]]; ok {
			light = append(light, v)
		}
	}
	return light
}

// idiomWords appends to dst the words of English toks that stand in an
// adverbial idiom ("right now", "for good", "as well", "at all"): they
// name no tool's object there.
func idiomWords(dst, toks []string) []string {
	for i := 0; i+1 < len(toks); i++ {
		if w, ok := idioms[[2]string{toks[i], toks[i+1]}]; ok {
			dst = append(dst, w)
		}
	}
	return dst
}

// prepositionWords appends to dst the particles of English toks (on, in,
// up, down, out, off, over) that stand as a preposition before what
// follows ("a pull request on github", "the queries running on the
// database") rather than in a phrasal verb ("turn on", "spin up a
// server", "log in to"): a particle is read as a verb's when it ends the
// request, precedes a function word other than a determiner, follows a
// light verb or the request's first content word (its imperative), or
// stands in a phrase the lexicon knows.
func prepositionWords(dst []string, lex *lexicon.Lexicon, toks []string) []string {
	first := -1
	for i, w := range toks {
		p, ok := particles[w]
		if first < 0 && !ok && !analysis.IsStopWord(analysis.English, w) {
			first = i
		}
		if !ok || i+1 == len(toks) || i == first {
			continue
		}
		next, next2 := toks[i+1], ""
		if i+2 < len(toks) {
			next2 = toks[i+2]
		}
		if analysis.IsStopWord(analysis.English, next) && !determiners[next] {
			continue
		}
		if i > 0 {
			prev := toks[i-1]
			if _, ok := lightVerbs[prev]; ok || i-1 == first || knownPhrase(lex, prev, w, next) {
				continue
			}
		}
		if knownPhrase(lex, w, next, next2) {
			continue
		}
		dst = append(dst, p)
	}
	return dst
}

// knownPhrase reports whether an English phrase of the lexicon starts
// with w1 w2 (and w3).
func knownPhrase(lex *lexicon.Lexicon, w1, w2, w3 string) bool {
	if !lex.MayStartPhraseIn(analysis.English, w1, w2, w3) {
		return false
	}
	var buf [8]string
	return len(lex.PhraseWords(buf[:0], analysis.English, w1, w2, w3, phraseTool)) > 0 ||
		len(lex.PhraseWords(buf[:0], analysis.English, w1, w2, "", phraseTool)) > 0
}

// particles are the English particles kept out of the stop words for
// their phrasal verbs.
var particles = wordSet("on", "in", "up", "down", "out", "off", "over")

// idioms maps the two-word adverbial idioms of English to their word that
// is no stop word ("right" of "right now"), a constant string.
var idioms = map[[2]string]string{
	{"right", "now"}: "right", {"right", "away"}: "right", {"for", "good"}: "good",
	{"so", "far"}: "far", {"as", "well"}: "well", {"at", "all"}: "all",
	{"in", "general"}: "general", {"of", "course"}: "course", {"at", "once"}: "once",
	{"the", "moment"}: "moment",
}

// lightVerbs are English's light verbs, whose meaning in a phrasal verb
// comes from the rest of it ("get rid of", "look up", "turn off", "set
// up"): inside a phrase the lexicon knows, such a verb names no action of
// its own. framingVerb holds the verbs that, before "me" or "us", frame a
// request. Each maps a word to itself, so that what is kept of a request's
// transient token is a constant string.
var (
	lightVerbs  = wordSet("get", "go", "make", "take", "do", "give", "have", "put", "set", "turn", "look", "come", "keep", "let", "bring")
	framingVerb = wordSet("help", "provide", "assist", "give", "show", "tell", "guide")
)

func wordSet(words ...string) map[string]string {
	m := make(map[string]string, len(words))
	for _, w := range words {
		m[w] = w
	}
	return m
}

// Query widening: a request word that no card of the index uses (its stem
// has no posting) stands for the words the cards may use instead: the
// lexicon's synonyms of it, up to widenTool hand-written and widenWordNet
// WordNet ones, are added to the request's lexical terms at widenWeight (0
// turns widening off). A word the catalog uses is taken at its word: its
// synonyms would only add the noise of other senses. docs/benchmarks.md
// ("Widening the words no card uses") has the measurements behind the
// defaults.
var (
	widenWeight  = 0.5
	widenTool    = 3
	widenWordNet = 0
)

// passingWeight is the weight of the synonyms of a request word that
// cards use in passing, in no tool's name or summary, when the word is
// not the request's command (widenUnnamed widens that one at widenWeight,
// a summary's word included). A catalog names each action and object
// with one word; a card that uses another one uses it in passing, in a
// long description's list of what it touches ("meeting recording" and
// "chat" in a download tool's). The word is kept at its weight; its
// synonyms reach the tools named by them. Only a request of at most
// passingMaxTerms terms has its words widened so.
var passingWeight = 0.25

// passingMaxTerms is the most terms a request may have for its words in
// passing to be widened. A longer one describes a situation (a dialogue's
// names, dates and places): most of its words are details, and their
// synonyms drew tools about those details.
var passingMaxTerms = 12

// lightVerbWeight is what is left of the weight of a light verb inside a
// phrasal verb the lexicon knows, and of a verb framing the request
// (lightVerbs, framingVerb).
var lightVerbWeight = 0.25

// prepositionWeight is what is left of the weight of a particle that
// stands as a preposition (prepositionWords).
var prepositionWeight = 0.0

// digitWeight is the weight of a request's digit run as a lexical term
// ("ip-10-0-1-12", "PN123", "claude-3-5"): it is a value, an id or a count,
// and matches a card that holds the same digits mostly by chance
// ("base64" and "oauth2" are the exceptions it keeps as a hint). The
// identifier kinds are what give an exact value its tool.
var digitWeight = 0.25

// senseVerbWeight is what is left of the weight of a verb whose object
// gives it another action's meaning ([lexicon.Sense]: to "open" a pull
// request is to create one); the action's words get the verb's weight.
var senseVerbWeight = 0.25

// namesObject reports whether a request names an existing object by an
// exact id (a number or a key): "open issue 42" is to view it, so no
// verb-object sense applies.
func namesObject(ids []identifier) bool {
	for _, id := range ids {
		if id.kind == idNumber || id.kind == idKey {
			return true
		}
	}
	return false
}

// determiners are the words that, between a verb and its object, show the
// verb is one: "open a pull request", "kill the jobs", "spin up two
// instances"; after a particle, that it stands as a preposition
// (prepositionWords).
var determiners = map[string]bool{"a": true, "an": true, "the": true, "new": true, "my": true, "our": true,
	"your": true, "this": true, "that": true, "these": true, "those": true, "another": true, "some": true,
	"one": true, "two": true, "three": true, "few": true}

// verbUse reports whether the request's words read sn's verb as a verb:
// a determiner stands between it and its object, or the object's last word
// is not a plural. "open issues in the repo" is the issues that are open;
// "open an issue" and "open issue" are to create one. It tokenizes text
// again, which only a request that matched a sense pays for.
func (d *Discoverer) verbUse(text string, stems []string, sn lexicon.Sense) bool {
	toks := d.analyzer.Tokens(nil, text)
	i := 0
	for i < len(toks) && d.analyzer.Stem(analysis.English, toks[i]) != stems[sn.Verb] {
		i++
	}
	last := stems[sn.End-1]
	for i++; i < len(toks); i++ {
		t := toks[i]
		if determiners[t] || isDigits(t) {
			return true
		}
		if d.analyzer.Stem(analysis.English, t) == last {
			// A plural ends in s and stems to less than itself.
			return !strings.HasSuffix(t, "s") || len(last) >= len(t)
		}
	}
	return true
}

func isDigits(t string) bool {
	for i := range len(t) {
		if !isDigit(t[i]) {
			return false
		}
	}
	return t != ""
}

// buildWiden fills x.widen: for each English stem the lexicon knows and
// no card of x uses, the terms of x its synonyms analyse to; and
// x.unnamed the same for each stem that cards use but no tool's name has
// (unnamedWord). English requests look each of their words up there
// (plan): one map look-up a word.
func (d *Discoverer) buildWiden(x *Index) {
	if widenWeight <= 0 {
		return
	}
	x.widen, x.unnamed = map[string][]uint32{}, map[string]unnamedWord{}
	summarised := make([]bool, len(x.postings)) // by the index's term number
	for _, dc := range x.docs {
		for _, t := range dc.field(fieldSummary) {
			if id, ok := x.terms[x.termStrings[t]]; ok {
				summarised[id] = true
			}
		}
	}
	var words, terms []string
	for stem := range d.lex.EnglishStems() {
		used := x.uses(stem)
		if used && x.names(stem) {
			continue
		}
		words = d.lex.StemSynonyms(words[:0], stem, widenTool, widenWordNet)
		if len(words) == 0 {
			continue
		}
		terms = d.analyzer.Terms(terms[:0], strings.Join(words, " "), analysis.English)
		var ids []uint32
		for _, t := range terms {
			if id, ok := x.terms[t]; ok && len(x.postings[id]) > 0 && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		switch {
		case len(ids) == 0:
		case used:
			x.unnamed[stem] = unnamedWord{ids: ids, summarised: summarised[x.terms[stem]]}
		default:
			x.widen[stem] = ids
		}
	}
}

// unnamedWord is what buildWiden keeps of a stem that cards use but no
// tool's name has: the terms of its synonyms, and whether some tool's
// summary has it (then a request's word in passing is not widened: the
// summary says what a tool is for).
type unnamedWord struct {
	ids        []uint32
	summarised bool
}

// nominalSuffixes are the English suffixes that make a noun of a verb
// ("pay" → "payment", "send" → "sender", "edit" → "editor", "rent" →
// "rental", "act" → "action"): a word no card uses reaches the card word
// it derives or is derived from (widen). The stemmer strips them only from
// longer words, so "payment" stays a term of its own and "paid", once
// "pay", matched nothing. Those it never leaves on a stem ("-age", "-ance",
// "-ence", "-ure": "storag", "allow", "failur") are not looked up; with
// them every set ranked the same.
var nominalSuffixes = [...]string{"ment", "er", "or", "al", "ion"}

// minDerivedBase is the shortest word that is looked up with a nominal
// suffix, and the shortest base left when one is cut.
const minDerivedBase = 3

// derivedTerm returns the term of x that is t with the k-th of
// nominalSuffixes added, or t without it, if some card uses it. plus is
// x.suffixed[t][k]: the number plus one of the term with the suffix added,
// 0 when no card uses it, so that a word looks its derived terms up once
// rather than once per suffix.
func (x *Index) derivedTerm(t string, k int, plus uint32) (uint32, bool) {
	if plus != 0 {
		return plus - 1, true
	}
	if base, ok := strings.CutSuffix(t, nominalSuffixes[k]); ok && len(base) >= minDerivedBase {
		if id, ok := x.terms[base]; ok && len(x.postings[id]) > 0 {
			return id, true
		}
	}
	return 0, false
}

// buildSuffixed fills x.suffixed: for each term some card uses that ends
// in one of nominalSuffixes after at least minDerivedBase bytes, its
// number plus one under the rest, at the suffix's place.
func (x *Index) buildSuffixed() {
	x.suffixed = map[string][len(nominalSuffixes)]uint32{}
	for t, id := range x.terms {
		if len(x.postings[id]) == 0 {
			continue
		}
		for k, suf := range nominalSuffixes {
			if base, ok := strings.CutSuffix(t, suf); ok && len(base) >= minDerivedBase {
				plus := x.suffixed[base]
				plus[k] = id + 1
				x.suffixed[base] = plus
			}
		}
	}
}

// lemmaWords appends to dst the lemmas of the irregular English forms among
// a request's folded tokens ("paid" → "pay", "sent" → "send", "children" →
// "child"; WordNet's exception lists): the stemmer leaves such a form as
// it is, and the cards say the lemma. A light verb's lemma ("got" → "get")
// is left out: its meaning is in the rest of the request (lightVerbs).
func lemmaWords(dst []string, lex *lexicon.Lexicon, toks []string) []string {
	for _, t := range toks {
		if l, ok := lex.Lemma(t); ok && lightVerbs[l] == "" {
			dst = append(dst, l)
		}
	}
	return dst
}

// uses reports whether some card of x has the term in a field.
func (x *Index) uses(term string) bool {
	id, ok := x.terms[term]
	return ok && len(x.postings[id]) > 0
}

// names reports whether some tool of x has the term in its name.
func (x *Index) names(term string) bool {
	id, ok := x.terms[term]
	return ok && x.named[id/64]&(1<<(id%64)) != 0
}

// listQuestion reports whether a request's folded tokens ask which things
// of a kind there are: an interrogative opening the request before a
// plural ("which pods are running", "what tables are in the database",
// "¿qué tablas hay?"), or one that is itself plural in Polish ("jakie
// kolekcje są", "które firmy"). Such a question asks for a list.
func listQuestion(toks []string, lang analysis.Lang) bool {
	if len(toks) < 2 {
		return false
	}
	switch lang {
	case analysis.Polish:
		return pluralWhich[toks[0]]
	case analysis.English, analysis.Spanish:
		if !openWhich[toks[0]] {
			return false
		}
	default:
		return false
	}
	return pluralNext(toks[1:])
}

// pluralNext reports whether an English or Spanish plural stands in the
// first two words of toks, past a determiner.
func pluralNext(toks []string) bool {
	for i, n := 0, 0; i < len(toks) && n < 2; i++ {
		t := toks[i]
		if listDeterminers[t] {
			continue
		}
		if nonPlurals[t] {
			return false
		}
		if len(t) > 3 && t[len(t)-1] == 's' && !strings.HasSuffix(t, "ss") && !strings.HasSuffix(t, "us") && !strings.HasSuffix(t, "is") {
			return true
		}
		n++
	}
	return false
}

// showList reports whether English or Spanish toks ask to be shown
// things of a kind: a verb of showing opening the request ("show me my
// boards", "muéstrame los tableros"), before a plural (pluralNext).
func showList(toks []string, lang analysis.Lang) bool {
	if len(toks) < 2 || (lang != analysis.English && lang != analysis.Spanish) || !showVerbs[toks[0]] {
		return false
	}
	rest := toks[1:]
	if rest[0] == "me" || rest[0] == "us" {
		rest = rest[1:]
	}
	return pluralNext(rest)
}

// showVerbs open a request to be shown something, in English and Spanish
// (folded, with the enclitic "me" written on).
var showVerbs = map[string]bool{"show": true, "display": true, "muestrame": true, "muestra": true,
	"muestranos": true, "ensename": true, "ensenanos": true}

// placeQuestion reports whether toks, read in lang, ask where something is
// ("where is config.yaml", "¿dónde está el informe?", "gdzie jest
// raport") or what the assistant knows of it ("what do you remember about
// Apollo", "¿qué sabes de María?", "co wiesz o Marku"): a question to
// search for it.
func placeQuestion(toks []string, lang analysis.Lang) bool {
	if len(toks) < 2 {
		return false
	}
	switch lang {
	case analysis.English:
		return toks[0] == "where" || toks[0] == "wheres" ||
			len(toks) > 3 && toks[0] == "what" && toks[1] == "do" && toks[2] == "you" && knowVerbs[toks[3]]
	case analysis.Spanish:
		return toks[0] == "donde" || toks[0] == "que" && knowVerbs[toks[1]]
	case analysis.Polish:
		return toks[0] == "gdzie" || toks[0] == "co" && knowVerbs[toks[1]]
	}
	return false
}

// knowVerbs ask what the assistant knows or remembers, after "what do
// you", "qué", "co": such a question searches what is stored.
var knowVerbs = map[string]bool{"know": true, "remember": true, "recall": true,
	"sabes": true, "recuerdas": true, "wiesz": true, "pamietasz": true}

// openWhich are the English and Spanish interrogatives that open a
// question for a list before its plural; pluralWhich, Polish's plural
// ones, ask for one alone.
var (
	openWhich   = map[string]bool{"what": true, "which": true, "que": true, "cuales": true}
	pluralWhich = map[string]bool{"jakie": true, "jakich": true, "ktore": true, "ktorych": true}
	// listDeterminers may stand between the interrogative and its plural.
	listDeterminers = map[string]bool{"the": true, "my": true, "our": true, "all": true, "your": true,
		"los": true, "las": true, "mis": true, "tus": true, "sus": true, "nuestros": true, "nuestras": true}
	// nonPlurals end in s and are not plurals: a question about one thing
	// ("what does", "what is", "what's"), or the verbs of a question put
	// to "tú" ("¿qué sabes de María?").
	nonPlurals = map[string]bool{"does": true, "was": true, "has": true, "whats": true, "its": true, "this": true,
		"thus": true, "es": true, "mas": true, "pues": true, "tres": true, "eres": true, "estas": true,
		"sabes": true, "tienes": true, "puedes": true, "quieres": true, "necesitas": true, "recuerdas": true,
		"piensas": true, "opinas": true, "haces": true, "dices": true, "crees": true, "ves": true}
)

// nameWords appends to dst the English terms of the words joined into
// names in text ("shop-prod", "temp_import", "queue-worker"): a name's
// words are matched as they are, never widened to their synonyms ("shop"
// is no place of business there).
func nameWords(dst []string, a *analysis.Analyzer, text string) []string {
	// Only the fields around a joiner are read: most of a request has none.
	for end := 0; end < len(text); {
		j := strings.IndexAny(text[end:], "-_")
		if j < 0 {
			break
		}
		j += end
		start := strings.LastIndexFunc(text[:j], unicode.IsSpace) + 1
		end = j + 1
		if k := strings.IndexFunc(text[end:], unicode.IsSpace); k >= 0 {
			end += k
		} else {
			end = len(text)
		}
		f := strings.TrimFunc(text[start:end], func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if strings.ContainsAny(f, "-_") {
			dst = a.Terms(dst, f, analysis.English)
		}
	}
	return dst
}
