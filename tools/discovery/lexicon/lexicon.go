package lexicon

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/tools/discovery/analysis"
)

//go:embed data/*.txt
var dataFS embed.FS

// The embedded data files.
const (
	fileTools   = "data/tools_en.txt"   // hand-written tool-vocabulary groups
	fileWordNet = "data/wordnet_en.txt" // generated from WordNet 3.0
	fileIrreg   = "data/irregular_en.txt"
	fileSpanish = "data/es_en.txt"
	filePolish  = "data/pl_en.txt"
	fileSenses  = "data/senses_en.txt" // hand-written verb-object pairs
	// Inflected forms of the Spanish and Polish keys, from Hunspell.
	fileFormsEs = "data/forms_es.txt"
	fileFormsPl = "data/forms_pl.txt"
)

func fold(s string) string { return analysis.Fold(s) }

// Weights of the two kinds of English concept: a hand-written tool-vocabulary
// group is strong evidence that two words mean the same in a tool request; a
// WordNet synset of a common sense is weaker (the sense may not be the one
// meant).
const (
	WeightTool    = 1.0
	WeightWordNet = 0.5
)

// Concept is one meaning a word can have: a hand-written group or a WordNet
// synset. ID is a stable 64-bit hash of the concept's name, the same in
// every build, so embedders can hash it into a vector.
type Concept struct {
	ID     uint64
	Weight float32
}

type concept struct {
	name   string // "tool:delete", "wn:00123456-v"
	id     uint64
	weight float32
	words  []string // English words and phrases, folded
}

// translation is what a Spanish or Polish word maps to.
type translation struct {
	english  []string
	concepts []int32 // union of the English words' concepts, deduplicated
}

// Lexicon is a parsed lexicon. It is immutable after construction and safe
// for concurrent use; slices it returns are shared and must not be modified.
type Lexicon struct {
	concepts []concept
	english  map[string][]int32  // folded word or phrase → concepts
	enStem   map[string][]int32  // English stem of a single word → concepts
	irreg    map[string]string   // irregular inflection → lemma ("sent" → "send")
	derived  map[string][]string // derived noun → verbs ("deletion" → "delete")
	trans    [2]map[string]*translation
	forms    [2]int // of trans' keys, the inflected forms addForms added
	isForm   [2]map[string]bool
	digest   string // Digest: what the lexicon was built from
	transStm [2]map[string]*translation
	// Phrases of two or three words, keyed by their words and by their
	// words' stems: English phrases → concepts; Spanish and Polish phrases
	// → translations.
	enPhrase    map[phraseKey][]int32
	transPhrase [2]map[phraseKey]*translation
	// phrase2 and phrase3 hold, per language (en, es, pl), the first three
	// bytes of each word of every two- and three-word phrase, by its words
	// and by their stems in every combination: a window whose prefixes are
	// not there starts no phrase, and PhraseConcepts skips the stemming.
	// (A stem is a prefix of its word, but for a changed final letter.)
	phrase2 [3]map[[2]string]struct{}
	phrase3 [3]map[[3]string]struct{}
	// firstBits holds, per language (en, es, pl), a bit for the hash of the
	// first three bytes of every phrase's first word and first stem:
	// MayStartPhraseIn's first test, without a map look-up.
	firstBits [3]*[firstBitWords]uint64
	// pairBits and tripleBits are the same for the first two and three
	// words' prefixes (every word/stem combination).
	pairBits, tripleBits [3]*[firstBitWords]uint64
	// anyBits is the union of the three languages' firstBits, pairBits and
	// tripleBits, in that order (nil while no phrase is known):
	// MayStartPhrase's tests, one bit each rather than one a language.
	anyBits [3]*[firstBitWords]uint64
	// transBits holds, per language (es, pl), a bit for the hash of the
	// first three bytes of every key of trans and transStm, and
	// transOpen the first bytes of the stems shorter than three: a word
	// whose prefix has neither has no translation (noteTranslations), so
	// that an English word, read as Spanish and Polish too, is not
	// stemmed twice for nothing.
	transBits [2]*[firstBitWords]uint64
	transOpen [2]*[256]bool
	// irregBits holds a bit for the wordHash of every key of irreg: a
	// request's every word is asked for its lemma (Lemma), and few are
	// irregular forms.
	irregBits *[firstBitWords]uint64
	// anyPhrase2 and anyPhrase3 are phrase2 and phrase3 in all three
	// languages together, for MayStartPhrase.
	anyPhrase2 map[[2]string]struct{}
	anyPhrase3 map[[3]string]struct{}
	// senses maps a verb's English stem to the objects that give it
	// another action's meaning (Sense).
	senses map[string][]sense
	// stemmer stems the words the lexicon is asked about; nil means
	// [analysis.Stem] (WithStemmer).
	stemmer Stemmer
}

// Stemmer stems folded words, as [analysis.Stem] does, and is safe for
// concurrent use. An [*analysis.Analyzer] is a Stemmer that keeps the
// stems it has made.
type Stemmer interface {
	// Stem returns the stem of word in lang.
	Stem(lang analysis.Lang, word string) string
	// CachedStem returns the stem of word in lang when it is known
	// without stemming, storing nothing, and whether it is.
	CachedStem(lang analysis.Lang, word string) (string, bool)
}

// WithStemmer returns a Lexicon with l's data that stems the words it is
// asked about (by [Lexicon.Concepts], [Lexicon.PhraseConcepts],
// [Lexicon.StemSynonyms] and the rest) through s, so that a caller whose
// [analysis.Analyzer] has stemmed a request's words for its terms finds
// their stems in its cache. English words are stemmed with s.Stem;
// Spanish and Polish ones are looked up with s.CachedStem and otherwise
// stemmed by [analysis.Stem], not stored: an English word is also read as
// Spanish and Polish, once (an embedder keeps its features), and storing
// those stems cost more than it saved. The two Lexicons share their data,
// which neither modifies; l is unchanged, and the answers are the same.
func (l *Lexicon) WithStemmer(s Stemmer) *Lexicon {
	c := *l
	c.stemmer = s
	return &c
}

// stem returns the stem of the folded word w in lang, through l.stemmer.
func (l *Lexicon) stem(lang analysis.Lang, w string) string {
	if l.stemmer != nil {
		if lang == analysis.English {
			return l.stemmer.Stem(lang, w)
		}
		if st, ok := l.stemmer.CachedStem(lang, w); ok {
			return st
		}
	}
	return analysis.Stem(lang, w)
}

// sense is one line of the senses data: with its particle, if any ("spin
// up"), and object (stems, in order), a verb means actions (stems).
type sense struct {
	particle string
	object   []string
	actions  []string
}

// particles are the words that make a phrasal verb of the verb before
// them in a senses key ("spin up", "tear down", "kick off").
var particles = map[string]bool{"up": true, "down": true, "off": true, "out": true, "over": true, "back": true, "in": true, "on": true}

func prefix3(w string) string { return w[:min(3, len(w))] }

// phraseKey holds the words of a two- or three-word phrase; the third is
// "" for two words.
type phraseKey [3]string

// phraseKeys returns the key of a phrase by its words and by their stems in
// lang; ok is false unless the phrase has two or three words.
func phraseKeys(lang analysis.Lang, phrase string) (words, stems phraseKey, ok bool) {
	f := strings.Fields(phrase)
	if len(f) < 2 || len(f) > 3 {
		return words, stems, false
	}
	for i, w := range f {
		words[i] = w
		stems[i] = analysis.Stem(lang, w)
	}
	return words, stems, true
}

var (
	defaultOnce sync.Once
	defaultLex  *Lexicon
	defaultErr  error
)

// Default returns the lexicon built from the embedded data, parsed on first
// use. Its data is verified by this package's tests; should it ever fail to
// parse, Default returns an empty lexicon and [DefaultErr] reports why.
func Default() *Lexicon {
	defaultOnce.Do(func() {
		defaultLex, defaultErr = load()
		if defaultErr != nil {
			defaultLex = empty()
		}
	})
	return defaultLex
}

// DefaultErr reports the error, if any, that made Default return an empty
// lexicon.
func DefaultErr() error {
	Default()
	return defaultErr
}

func empty() *Lexicon {
	l := &Lexicon{english: map[string][]int32{}, enStem: map[string][]int32{}, irreg: map[string]string{}, derived: map[string][]string{}}
	l.enPhrase = map[phraseKey][]int32{}
	l.senses = map[string][]sense{}
	for i := range l.phrase2 {
		l.phrase2[i] = map[[2]string]struct{}{}
		l.phrase3[i] = map[[3]string]struct{}{}
	}
	l.anyPhrase2 = map[[2]string]struct{}{}
	l.anyPhrase3 = map[[3]string]struct{}{}
	for i := range l.trans {
		l.trans[i] = map[string]*translation{}
		l.isForm[i] = map[string]bool{}
		l.transStm[i] = map[string]*translation{}
		l.transPhrase[i] = map[phraseKey]*translation{}
	}
	return l
}

// Source holds the parsed data a Lexicon is built from.
type Source struct {
	// Tools are hand-written groups: key = concept name, values = words.
	Tools []Entry
	// WordNet are synsets: key = synset id, values = lemmas.
	WordNet []Entry
	// Irregular maps an inflected form (key) to its lemma (one value).
	Irregular []Entry
	// Derived maps an English word (key) to the words it derives from in
	// another part of speech (values): "deletion: delete". The key shares
	// its values' concepts. Not embedded (it did not raise recall on the
	// labeled sets, docs/benchmarks.md): an optional file of [KindDerived].
	Derived []Entry
	// Synonyms are groups from an optional file a user points to (see
	// Open): key and values share one concept, weighted as WordNet's.
	Synonyms []Entry
	// Spanish and Polish map a word (key) to English words (values).
	Spanish, Polish []Entry
	// SpanishForms and PolishForms map a key of Spanish or Polish (a
	// lemma) to its inflected forms (values) that the stemmer does not
	// bring to it ("mostrar: muestrame", "pokazac: pokaz"): a request's
	// form reaches its lemma's translation before any stemming. Generated
	// from the Hunspell dictionaries (data/README.md).
	SpanishForms, PolishForms []Entry
	// Senses pair a verb with an object that makes it mean other actions:
	// key "VERB OBJECT" (stop words dropped, the first word the verb),
	// values the actions' words ("open pull request: create").
	Senses []Entry
}

func load() (*Lexicon, error) {
	src, err := DefaultSource()
	if err != nil {
		return nil, err
	}
	return Build(src)
}

// DefaultSource parses the embedded data. The result is the caller's: it
// may drop or add entries and Build another lexicon (the discovery tests
// measure each source that way).
func DefaultSource() (*Source, error) {
	var src Source
	for _, f := range []struct {
		name string
		dst  *[]Entry
	}{
		{fileTools, &src.Tools}, {fileWordNet, &src.WordNet}, {fileIrreg, &src.Irregular},
		{fileSpanish, &src.Spanish}, {filePolish, &src.Polish}, {fileSenses, &src.Senses},
		{fileFormsEs, &src.SpanishForms}, {fileFormsPl, &src.PolishForms},
	} {
		data, err := dataFS.ReadFile(f.name)
		if err != nil {
			return nil, fmt.Errorf("lexicon: %w", err)
		}
		if *f.dst, err = Parse(f.name, data); err != nil {
			return nil, err
		}
	}
	return &src, nil
}

// ErrInvalid is wrapped by Build's errors for data that parses but is not
// a valid lexicon.
var ErrInvalid = errors.New("lexicon: invalid data")

// Build makes a Lexicon from parsed data. It reports an irregular form with
// more than one lemma as an error wrapping [ErrInvalid].
func Build(src *Source) (*Lexicon, error) {
	l := empty()
	addConcept := func(name string, weight float32, words []string) {
		idx := int32(len(l.concepts))
		h := fnv.New64a()
		h.Write([]byte(name))
		c := concept{name: name, id: h.Sum64(), weight: weight, words: dedup(words)}
		l.concepts = append(l.concepts, c)
		for _, w := range c.words {
			l.english[w] = appendUnique(l.english[w], idx)
			if words, stems, ok := phraseKeys(analysis.English, w); ok {
				l.enPhrase[words] = appendUnique(l.enPhrase[words], idx)
				l.enPhrase[stems] = appendUnique(l.enPhrase[stems], idx)
				l.notePhrase(0, words, stems)
			}
			if !strings.Contains(w, " ") {
				// Indexed by stem even when the stem is the word itself, so
				// that an inflection ("payments") finds its lemma ("payment").
				s := analysis.Stem(analysis.English, w)
				l.enStem[s] = appendUnique(l.enStem[s], idx)
			}
		}
	}
	// Tool groups may span several lines with the same key: merge them.
	groups := map[string][]string{}
	var order []string
	for _, e := range src.Tools {
		if _, ok := groups[e.Key]; !ok {
			order = append(order, e.Key)
			groups[e.Key] = []string{e.Key}
		}
		groups[e.Key] = append(groups[e.Key], e.Values...)
	}
	for _, k := range order {
		addConcept("tool:"+k, WeightTool, groups[k])
	}
	for _, e := range src.WordNet {
		addConcept("wn:"+e.Key, WeightWordNet, e.Values)
	}
	for _, e := range src.Synonyms {
		addConcept("user:"+e.Key, WeightWordNet, append([]string{e.Key}, e.Values...))
	}
	for _, e := range src.Irregular {
		if len(e.Values) != 1 {
			return nil, fmt.Errorf("%w: irregular form %q (line %d) has %d lemmas, want 1", ErrInvalid, e.Key, e.Line, len(e.Values))
		}
		l.irreg[e.Key] = e.Values[0]
	}
	l.irregBits = new([firstBitWords]uint64)
	for k := range l.irreg {
		h := wordHash(k)
		l.irregBits[h/64] |= 1 << (h % 64)
	}
	l.addDerived(src.Derived)
	if err := l.addSenses(src.Senses); err != nil {
		return nil, err
	}
	for i, entries := range [2][]Entry{src.Spanish, src.Polish} {
		lang := [2]analysis.Lang{analysis.Spanish, analysis.Polish}[i]
		for _, e := range entries {
			t := l.trans[i][e.Key]
			if t == nil {
				t = &translation{}
				l.trans[i][e.Key] = t
			}
			t.english = dedup(append(t.english, e.Values...))
		}
		// In key order: a stem two keys share merges their translations
		// in the order met, and the first phrase key of a stem takes it,
		// so the map's order would make translations vary run to run.
		for _, key := range slices.Sorted(maps.Keys(l.trans[i])) {
			t := l.trans[i][key]
			for _, en := range t.english {
				for _, c := range l.englishConcepts(en) {
					t.concepts = appendUnique(t.concepts, c)
				}
			}
			if words, stems, ok := phraseKeys(lang, key); ok {
				l.notePhrase(i+1, words, stems)
				l.transPhrase[i][words] = t
				if _, taken := l.transPhrase[i][stems]; !taken {
					l.transPhrase[i][stems] = t
				}
			}
			if !strings.Contains(key, " ") {
				s := analysis.Stem(lang, key)
				if prev, ok := l.transStm[i][s]; ok && prev != t {
					l.transStm[i][s] = merge(prev, t)
				} else {
					l.transStm[i][s] = t
				}
			}
		}
		l.addForms(i, [2][]Entry{src.SpanishForms, src.PolishForms}[i])
		l.noteTranslations(i)
	}
	l.digest = src.digest()
	return l, nil
}

// Digest names the data l was built from: the hex SHA-256 of every entry
// of its [Source], kind by kind. Two lexicons with one digest give every
// text the same words; a saved index that depends on a lexicon keeps it
// (tools/discovery's index file), so that a changed lexicon is never
// mistaken for the one the file was built with.
func (l *Lexicon) Digest() string { return l.digest }

// digest is Lexicon.Digest's value for the lexicon Build makes of src.
func (src *Source) digest() string {
	// Each string ends in a NUL (no entry holds one), each entry in a
	// newline and each kind in a form feed, so no two sources hash alike.
	h := sha256.New()
	var buf []byte
	for _, kind := range [][]Entry{src.Tools, src.WordNet, src.Irregular, src.Derived, src.Synonyms,
		src.Spanish, src.Polish, src.SpanishForms, src.PolishForms, src.Senses} {
		for _, e := range kind {
			buf = append(append(buf[:0], e.Key...), 0)
			for _, v := range e.Values {
				buf = append(append(buf, v...), 0)
			}
			h.Write(append(buf, '\n'))
		}
		h.Write([]byte{'\f'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// addForms lets each inflected form of a key reach the key's translation
// by the exact word, ahead of the stemmer. A form that is a key itself
// keeps its own entry; a lemma the list does not translate adds nothing.
func (l *Lexicon) addForms(i int, entries []Entry) {
	for _, e := range entries {
		t := l.trans[i][e.Key]
		if t == nil {
			continue
		}
		for _, f := range e.Values {
			if _, ok := l.trans[i][f]; !ok && !strings.Contains(f, " ") {
				l.trans[i][f] = t
				l.isForm[i][f] = true
				l.forms[i]++
			}
		}
	}
}

// addDerived gives each derived word the concepts of the words it derives
// from, computed before any is added, so that derivations do not chain. A
// word in a hand-written group keeps its meaning: its derivation may be of
// another sense ("folder", one who folds).
func (l *Lexicon) addDerived(entries []Entry) {
	add := make(map[string][]int32, len(entries))
	for _, e := range entries {
		if l.hasToolConcept(e.Key) {
			continue
		}
		l.derived[e.Key] = dedup(append(l.derived[e.Key], e.Values...))
		for _, v := range e.Values {
			for _, c := range l.englishConcepts(v) {
				add[e.Key] = appendUnique(add[e.Key], c)
			}
		}
	}
	for w, cs := range add {
		own := l.english[w]
		for _, c := range cs {
			own = appendUnique(own, c)
		}
		l.english[w] = own
		if !strings.Contains(w, " ") {
			s := analysis.Stem(analysis.English, w)
			for _, c := range cs {
				l.enStem[s] = appendUnique(l.enStem[s], c)
			}
		}
	}
}

func (l *Lexicon) hasToolConcept(w string) bool {
	for _, c := range l.english[w] {
		if l.concepts[c].weight >= WeightTool {
			return true
		}
	}
	return false
}

func merge(a, b *translation) *translation {
	t := &translation{english: dedup(append(append([]string(nil), a.english...), b.english...))}
	t.concepts = append([]int32(nil), a.concepts...)
	for _, c := range b.concepts {
		t.concepts = appendUnique(t.concepts, c)
	}
	return t
}

func appendUnique[T comparable](s []T, v T) []T {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

func dedup(words []string) []string {
	out := words[:0:0]
	for _, w := range words {
		out = appendUnique(out, w)
	}
	return out
}

// englishConcepts returns the concepts of a folded English word or phrase:
// by the word itself, else its lemma if it is an irregular form, else its
// stem.
func (l *Lexicon) englishConcepts(w string) []int32 {
	if c, ok := l.english[w]; ok {
		return c
	}
	if lemma, ok := l.lemma(w); ok {
		if c, ok := l.english[lemma]; ok {
			return c
		}
	}
	return l.enStem[l.stem(analysis.English, w)]
}

func transIndex(lang analysis.Lang) int {
	switch lang {
	case analysis.Spanish:
		return 0
	case analysis.Polish:
		return 1
	}
	return -1
}

func (l *Lexicon) translation(i int, w string) *translation {
	if !l.mayTranslate(i, w) {
		return nil
	}
	if t := l.translationOf(i, w); t != nil {
		return t
	}
	if i == 0 {
		if base, ok := l.encliticBase(w); ok {
			return l.trans[i][base]
		}
	}
	return nil
}

// translationOf is w's translation by the word itself, else by its stem.
func (l *Lexicon) translationOf(i int, w string) *translation {
	if t, ok := l.trans[i][w]; ok {
		return t
	}
	return l.transStm[i][l.stem([2]analysis.Lang{analysis.Spanish, analysis.Polish}[i], w)]
}

// noteTranslations sets the bits of language i's keys and stems that
// mayTranslate reads.
//
// A word reaches a translation by itself (a key), by a key it ends in
// after an enclitic (encliticBase: three bytes or more) or by its stem;
// the Spanish and Polish stemmers only cut a word's end, and rewrite no
// byte before the fourth (the Spanish replacements stand in R2), so a
// stem of three bytes or more starts with the word's first three, and a
// shorter one is the word's first bytes.
func (l *Lexicon) noteTranslations(i int) {
	bits, open := new([firstBitWords]uint64), new([256]bool)
	for k := range l.trans[i] {
		h := prefixHash(k)
		bits[h/64] |= 1 << (h % 64)
	}
	for s := range l.transStm[i] {
		if len(s) < 3 {
			if s != "" {
				open[s[0]] = true
			}
			continue
		}
		h := prefixHash(s)
		bits[h/64] |= 1 << (h % 64)
	}
	l.transBits[i], l.transOpen[i] = bits, open
}

// mayTranslate reports whether the folded word w may have a translation
// in language i (es, pl): when it is false, translation(i, w) is nil.
func (l *Lexicon) mayTranslate(i int, w string) bool {
	if l.transBits[i] == nil || w == "" {
		return true
	}
	return hasBit(l.transBits[i], prefixHash(w)) || l.transOpen[i][w[0]]
}

// enclitics are the object pronouns Spanish writes onto an imperative,
// infinitive or gerund ("ábreme", "enséñamelos", "avísanos"), folded,
// longest first.
var enclitics = []string{"melos", "melas", "selos", "selas", "noslo", "nosla", "telos", "telas",
	"melo", "mela", "selo", "sela", "telo", "tela", "nos", "les", "los", "las", "me", "te", "se", "le", "lo", "la", "os"}

// encliticBase returns the Spanish key that a folded word is with object
// pronouns written onto it ("abreme": "abre", "avisanos": "avisa"), and
// whether there is one. The rest must end in a vowel or an r, as a verb
// form that takes them does, and be a key as written: stripping a word's
// own ending ("tabla", "modelo") seldom leaves one.
func (l *Lexicon) encliticBase(w string) (string, bool) {
	for _, e := range enclitics {
		if len(w) < len(e)+3 || !strings.HasSuffix(w, e) {
			continue
		}
		base := w[:len(w)-len(e)]
		switch base[len(base)-1] {
		case 'a', 'e', 'i', 'o', 'u', 'r':
		default:
			continue
		}
		if _, ok := l.trans[0][base]; ok {
			return base, true
		}
	}
	return "", false
}

// Synonyms returns the English words and phrases that share a concept with
// the folded English term (a word or its inflection), strongest first
// (hand-written groups before WordNet synsets), without the term itself.
// It returns nil for an unknown term. The caller owns the returned slice.
func (l *Lexicon) Synonyms(term string) []string {
	term = fold(term)
	var out []string
	for _, c := range l.englishConcepts(term) {
		for _, w := range l.concepts[c].words {
			if w != term {
				out = appendUnique(out, w)
			}
		}
	}
	return out
}

// Translate returns the English words and phrases for a folded Spanish or
// Polish word (or an inflection of one), or nil when the lexicon has no
// entry or lang is neither "es" nor "pl". The returned slice is shared and
// must not be modified.
func (l *Lexicon) Translate(lang analysis.Lang, term string) []string {
	i := transIndex(lang)
	if i < 0 {
		return nil
	}
	if t := l.translation(i, fold(term)); t != nil {
		return t.english
	}
	return nil
}

// IsEntry reports whether a folded Spanish or Polish word is itself a key
// of the lexicon's list for lang, as written there: for a verb its
// infinitive or an imperative a request uses ("zapisz", "guarda"), not
// one of the inflected forms (participles among them: "otwarte") or stems
// that reach a key.
func (l *Lexicon) IsEntry(lang analysis.Lang, word string) bool {
	i := transIndex(lang)
	if i < 0 {
		return false
	}
	w := fold(word)
	_, ok := l.trans[i][w]
	return ok && !l.isForm[i][w]
}

// Knows reports whether the folded word is, exactly as written, a key of
// the lexicon's list for lang ("es" or "pl") or an inflected form of one:
// a look-up without stemming, which tells a Spanish or Polish word from
// an English one cheaply.
func (l *Lexicon) Knows(lang analysis.Lang, word string) bool {
	i := transIndex(lang)
	if i < 0 {
		return false
	}
	_, ok := l.trans[i][word]
	return ok
}

// KnowsEnglish reports whether the folded word, or its lemma when it is an
// irregular form, is an English word of the lexicon, exactly as written.
func (l *Lexicon) KnowsEnglish(word string) bool {
	if _, ok := l.english[word]; ok {
		return true
	}
	lemma, ok := l.lemma(word)
	if ok {
		_, ok = l.english[lemma]
	}
	return ok
}

// Concepts appends to dst the concepts of one folded token and returns the
// extended slice. For lang "en" the token is read as English; for "es" or
// "pl" it is translated first and the concepts of its English words are
// returned; for lang "" all three readings are tried, because a short
// request's language is often unknowable. Concepts does not allocate when
// dst has room.
func (l *Lexicon) Concepts(dst []Concept, lang analysis.Lang, token string) []Concept {
	add := func(idx []int32) {
		for _, i := range idx {
			c := Concept{ID: l.concepts[i].id, Weight: l.concepts[i].weight}
			dup := false
			for _, d := range dst {
				if d.ID == c.ID {
					dup = true
					break
				}
			}
			if !dup {
				dst = append(dst, c)
			}
		}
	}
	if lang == "" || lang == analysis.English {
		add(l.englishConcepts(token))
	}
	for i, tl := range [2]analysis.Lang{analysis.Spanish, analysis.Polish} {
		if lang == "" || lang == tl {
			if t := l.translation(i, token); t != nil {
				add(t.concepts)
			}
		}
	}
	return dst
}

// Limits on Expand's synonyms per English term.
const (
	maxToolSynonyms    = 6
	maxWordNetSynonyms = 2
)

// PhraseConcepts appends to dst the concepts of the phrase made of two or
// three consecutive folded tokens (w3 "" for two), such as "pull request",
// "look up", "turn off", "correo electronico" or "kurs walut", and returns
// the extended slice. The phrase is matched by its words and, failing that,
// by their stems; lang selects the reading as in Concepts ("" tries all).
// It does not allocate when dst has room.
func (l *Lexicon) PhraseConcepts(dst []Concept, lang analysis.Lang, w1, w2, w3 string) []Concept {
	add := func(idx []int32) {
		for _, i := range idx {
			c := Concept{ID: l.concepts[i].id, Weight: l.concepts[i].weight}
			if !slices.Contains(dst, c) {
				dst = append(dst, c)
			}
		}
	}
	words := phraseKey{w1, w2, w3}
	may := func(i int) bool { return l.mayStart(i, w1, w2, w3) }
	if may(0) && (lang == "" || lang == analysis.English) {
		idx, ok := l.enPhrase[words]
		if !ok {
			idx = l.enPhrase[l.stemKey(analysis.English, words)]
		}
		add(idx)
	}
	for i, tl := range [2]analysis.Lang{analysis.Spanish, analysis.Polish} {
		if may(i+1) && (lang == "" || lang == tl) {
			t, ok := l.transPhrase[i][words]
			if !ok {
				t = l.transPhrase[i][l.stemKey(tl, words)]
			}
			if t != nil {
				add(t.concepts)
			}
		}
	}
	return dst
}

// PhraseWords appends to dst the English words the phrase made of two or
// three consecutive folded tokens (w3 "" for two) stands for, and returns
// the extended slice. Unlike PhraseConcepts it does not stem: pass the
// tokens, or their stems in lang (a phrase is known by both), so that a
// caller with a stem cache pays for stems only where the words failed.
// The words are: for lang
// "en", the closest words of the phrase's hand-written groups (up to
// maxTool, the phrase itself and synonyms of several words left out:
// "get rid of" → "delete", "remove");
// for "es" or "pl", the phrase's English ("zrzut ekranu" → "screenshot").
// Words already in dst are not added again (and count toward maxTool).
func (l *Lexicon) PhraseWords(dst []string, lang analysis.Lang, w1, w2, w3 string, maxTool int) []string {
	words := phraseKey{w1, w2, w3}
	if i := transIndex(lang); i >= 0 {
		if !l.mayStart(i+1, w1, w2, w3) {
			return dst
		}
		if t := l.transPhrase[i][words]; t != nil {
			for _, w := range t.english {
				if !slices.Contains(dst, w) {
					dst = append(dst, w)
				}
			}
		}
		return dst
	}
	if lang != analysis.English || !l.mayStart(0, w1, w2, w3) {
		return dst
	}
	idx := l.enPhrase[words]
	for _, c := range idx {
		con := &l.concepts[c]
		if con.weight < WeightTool {
			continue
		}
		n := 0
		for _, w := range con.words {
			if n >= maxTool {
				break
			}
			// A synonym of several words is skipped: its words go on
			// to be searched one by one, and one of them alone
			// means something else ("pull request" → "merge
			// request" would search "merge").
			if isPhrase(w, words) || strings.Contains(w, " ") {
				continue
			}
			if !slices.Contains(dst, w) {
				dst = append(dst, w)
			}
			n++
		}
	}
	return dst
}

// isPhrase reports whether w is the phrase k's words or stems spell.
func isPhrase(w string, k phraseKey) bool {
	for _, part := range k {
		if part == "" {
			break
		}
		rest, ok := strings.CutPrefix(w, part)
		if !ok {
			return false
		}
		w = strings.TrimPrefix(rest, " ")
	}
	return w == ""
}

// firstBitWords is the size of a firstBits set: 2^16 bits.
const firstBitWords = 1 << 10

// prefixHash hashes the first three bytes of each word into [0, 2^16).
func prefixHash(words ...string) uint32 {
	var h uint32 = 2166136261
	for _, w := range words {
		for i := range min(3, len(w)) {
			h = (h ^ uint32(w[i])) * 16777619
		}
		h = (h ^ ' ') * 16777619
	}
	return (h ^ h>>16) & (firstBitWords*64 - 1)
}

func hasBit(b *[firstBitWords]uint64, h uint32) bool { return b[h/64]&(1<<(h%64)) != 0 }

// MayStartPhraseIn is MayStartPhrase for the phrases of one language
// ("en", "es" or "pl"; any other lang tries all): cheaper, since a
// language's phrases start with fewer words than all three languages'.
func (l *Lexicon) MayStartPhraseIn(lang analysis.Lang, w1, w2, w3 string) bool {
	i := 0
	switch lang {
	case analysis.English:
	case analysis.Spanish:
		i = 1
	case analysis.Polish:
		i = 2
	default:
		return l.MayStartPhrase(w1, w2, w3)
	}
	if l.firstBits[i] == nil || !hasBit(l.firstBits[i], prefixHash(w1)) {
		return false
	}
	if hasBit(l.pairBits[i], prefixHash(w1, w2)) && l.mayStart(i, w1, w2, "") {
		return true
	}
	return w3 != "" && hasBit(l.tripleBits[i], prefixHash(w1, w2, w3)) && l.mayStart(i, w1, w2, w3)
}

// MayStartPhrase reports whether a phrase the lexicon knows, in any
// language, may be the folded tokens w1 w2, or w1 w2 w3 (w3 "" for none).
// When it is false, PhraseConcepts of w1 w2 w3 and of w1 w2 return dst
// unchanged, so a caller can skip the window, and any cache of it, for a
// few map look-ups.
func (l *Lexicon) MayStartPhrase(w1, w2, w3 string) bool {
	// Most words start no phrase, and most windows whose first word may
	// start one are none: bit tests say so before any map (each map key
	// has its bit set, in the language of its phrase).
	first, pair, triple := l.anyBits[0], l.anyBits[1], l.anyBits[2]
	if first == nil || !hasBit(first, prefixHash(w1)) {
		return false
	}
	p1, p2 := prefix3(w1), prefix3(w2)
	if hasBit(pair, prefixHash(w1, w2)) {
		if _, ok := l.anyPhrase2[[2]string{p1, p2}]; ok {
			return true
		}
	}
	if w3 == "" || !hasBit(triple, prefixHash(w1, w2, w3)) {
		return false
	}
	_, ok := l.anyPhrase3[[3]string{p1, p2, prefix3(w3)}]
	return ok
}

// mayStart is PhraseConcepts' filter: whether a phrase of language i (en,
// es, pl) may be the words w1 w2 (w3 "") or w1 w2 w3, by their prefixes.
func (l *Lexicon) mayStart(i int, w1, w2, w3 string) bool {
	if w3 == "" {
		_, ok := l.phrase2[i][[2]string{prefix3(w1), prefix3(w2)}]
		return ok
	}
	_, ok := l.phrase3[i][[3]string{prefix3(w1), prefix3(w2), prefix3(w3)}]
	return ok
}

// notePhrase adds a phrase of language i, by its words and its stems, to
// the filter mayStart reads.
func (l *Lexicon) notePhrase(i int, words, stems phraseKey) {
	if l.firstBits[i] == nil {
		l.firstBits[i] = new([firstBitWords]uint64)
		l.pairBits[i] = new([firstBitWords]uint64)
		l.tripleBits[i] = new([firstBitWords]uint64)
	}
	if l.anyBits[0] == nil {
		for j := range l.anyBits {
			l.anyBits[j] = new([firstBitWords]uint64)
		}
	}
	set := func(b *[firstBitWords]uint64, h uint32) { b[h/64] |= 1 << (h % 64) }
	for m := range 8 {
		w := func(j int) string {
			if m&(1<<j) != 0 {
				return stems[j]
			}
			return words[j]
		}
		h := prefixHash(w(0))
		set(l.firstBits[i], h)
		set(l.anyBits[0], h)
		if words[2] == "" {
			h = prefixHash(w(0), w(1))
			set(l.pairBits[i], h)
			set(l.anyBits[1], h)
		} else {
			h = prefixHash(w(0), w(1), w(2))
			set(l.tripleBits[i], h)
			set(l.anyBits[2], h)
		}
	}
	pick := func(mask, j int) string {
		if mask&(1<<j) != 0 {
			return prefix3(stems[j])
		}
		return prefix3(words[j])
	}
	if words[2] == "" {
		for m := range 4 {
			k := [2]string{pick(m, 0), pick(m, 1)}
			l.phrase2[i][k] = struct{}{}
			l.anyPhrase2[k] = struct{}{}
		}
		return
	}
	for m := range 8 {
		k := [3]string{pick(m, 0), pick(m, 1), pick(m, 2)}
		l.phrase3[i][k] = struct{}{}
		l.anyPhrase3[k] = struct{}{}
	}
}

func (l *Lexicon) stemKey(lang analysis.Lang, k phraseKey) phraseKey {
	for i, w := range k {
		if w != "" {
			k[i] = l.stem(lang, w)
		}
	}
	return k
}

// Expand appends to dst English words and phrases that widen a query made
// of the folded tokens terms: translations of Spanish and Polish words
// (lang "es"/"pl", or all when lang is ""), and for English words their
// first six hand-written synonyms (the data lists the closest first) plus at
// most two WordNet synonyms. Words already in
// terms or dst are not repeated. It is the offline reformulator's
// expansion; the caller analyzes the result as English.
func (l *Lexicon) Expand(dst []string, terms []string, lang analysis.Lang) []string {
	return l.ExpandN(dst, terms, lang, maxToolSynonyms, maxWordNetSynonyms)
}

// ExpandN is Expand with other limits: at most maxTool hand-written and
// maxWordNet WordNet synonyms per English term (0 for none of that kind).
func (l *Lexicon) ExpandN(dst []string, terms []string, lang analysis.Lang, maxTool, maxWordNet int) []string {
	seen := func(w string) bool {
		for _, t := range terms {
			if t == w {
				return true
			}
		}
		for _, d := range dst {
			if d == w {
				return true
			}
		}
		return false
	}
	for _, term := range terms {
		term = fold(term)
		if lang == "" || lang == analysis.English {
			tool, wn := 0, 0
			for _, c := range l.englishConcepts(term) {
				con := &l.concepts[c]
				strong := con.weight >= WeightTool
				for _, w := range con.words {
					if (strong && tool >= maxTool) || (!strong && wn >= maxWordNet) {
						break
					}
					if w != term && !seen(w) {
						dst = append(dst, w)
						if strong {
							tool++
						} else {
							wn++
						}
					}
				}
			}
		}
		for i, tl := range [2]analysis.Lang{analysis.Spanish, analysis.Polish} {
			if lang == "" || lang == tl {
				if t := l.translation(i, term); t != nil {
					for _, w := range t.english {
						if !seen(w) {
							dst = append(dst, w)
						}
					}
				}
			}
		}
	}
	return dst
}

// StemSynonyms appends to dst the English words and phrases the lexicon
// groups with the words whose English stem is stem (as [analysis.Stem] and
// an Analyzer's Terms give it): for each of their concepts in turn, the
// data's closest first, up to maxTool hand-written and maxWordNet WordNet
// synonyms in all, leaving out words with that stem and words already in
// dst. Derived nouns (an optional "derived" file) have the concepts of
// their verbs, so their synonyms include those verbs. It is how discovery
// gives a request word that no card uses the words the cards may use
// instead ("folder" → "directory").
func (l *Lexicon) StemSynonyms(dst []string, stem string, maxTool, maxWordNet int) []string {
	tool, wn := 0, 0
	for _, c := range l.enStem[stem] {
		con := &l.concepts[c]
		strong := con.weight >= WeightTool
		for _, w := range con.words {
			if (strong && tool >= maxTool) || (!strong && wn >= maxWordNet) {
				break
			}
			if slices.Contains(dst, w) || (!strings.Contains(w, " ") && l.stem(analysis.English, w) == stem) {
				continue
			}
			dst = append(dst, w)
			if strong {
				tool++
			} else {
				wn++
			}
		}
	}
	return dst
}

// EnglishStems returns the English stems StemSynonyms knows, in no
// particular order.
func (l *Lexicon) EnglishStems() iter.Seq[string] { return maps.Keys(l.enStem) }

// senseAnalyzer reads the senses data's keys and values as requests are
// read: folded, English stop words dropped, stemmed.
var senseAnalyzer = analysis.New(nil)

// addSenses indexes the verb-object pairs by the verb's stem. A key without
// an object or an entry without an action is an error wrapping [ErrInvalid].
func (l *Lexicon) addSenses(entries []Entry) error {
	for _, e := range entries {
		key := senseAnalyzer.Terms(nil, e.Key, analysis.English)
		actions := senseAnalyzer.Terms(nil, strings.Join(e.Values, " "), analysis.English)
		if len(key) < 2 || len(actions) == 0 {
			return fmt.Errorf("%w: sense %q (line %d): want \"VERB OBJECT: ACTION\" with words that are not stop words", ErrInvalid, e.Key, e.Line)
		}
		sn := sense{object: key[1:], actions: actions}
		if particles[key[1]] && len(key) > 2 {
			sn.particle, sn.object = key[1], key[2:]
		}
		l.senses[key[0]] = append(l.senses[key[0]], sn)
	}
	return nil
}

// senseFillers are the stems of words a request may put before its verb
// ("please", "I need to", "can you") that Sense skips.
var senseFillers = map[string]bool{}

func init() {
	for _, w := range strings.Fields("please pls kindly can could would need want like let help go ahead just quickly now also then hey ok okay mind try") {
		senseFillers[analysis.Stem(analysis.English, w)] = true
	}
}

// Sense is what a verb means with its object in a request.
type Sense struct {
	// Verb is the index of the verb in the stems Sense was given.
	Verb int
	// Object is the index of the object's first stem, End one past its
	// last.
	Object, End int
	// Actions are the English stems of the action's words.
	Actions []string
}

// Sense looks, in the English stems of a request with its stop words
// removed (an analysis.Analyzer's Terms), for a verb the request starts
// with (past filler words such as "please" or "need"), and its particle
// when the data gives one ("spin up"), followed within two words by an
// object the senses data pairs with it, and returns what the
// pair means: "open a new pull request" → create. The first pair of the data
// that matches wins. It does not allocate.
func (l *Lexicon) Sense(stems []string) (Sense, bool) {
	i := 0
	for i < len(stems) && senseFillers[stems[i]] {
		i++
	}
	if i >= len(stems) {
		return Sense{}, false
	}
	for _, sn := range l.senses[stems[i]] {
		at := i + 1
		if sn.particle != "" {
			if at >= len(stems) || stems[at] != sn.particle {
				continue
			}
			at++
		}
		for j := at; j <= at+2 && j+len(sn.object) <= len(stems); j++ {
			if slices.Equal(stems[j:j+len(sn.object)], sn.object) {
				return Sense{Verb: i, Object: j, End: j + len(sn.object), Actions: sn.actions}, true
			}
		}
	}
	return Sense{}, false
}

// Lemma returns the English lemma of an irregular inflected form ("sent" →
// "send", "children" → "child") and whether the lexicon knows it.
func (l *Lexicon) Lemma(word string) (string, bool) { return l.lemma(fold(word)) }

// lemma is Lemma of a folded word: irreg's look-up, made only when the
// word's bit in irregBits is set.
func (l *Lexicon) lemma(w string) (string, bool) {
	if l.irregBits != nil && !hasBit(l.irregBits, wordHash(w)) {
		return "", false
	}
	s, ok := l.irreg[w]
	return s, ok
}

// wordHash hashes every byte of w into [0, 2^16), as prefixHash does
// its first three.
func wordHash(w string) uint32 {
	var h uint32 = 2166136261
	for i := 0; i < len(w); i++ {
		h = (h ^ uint32(w[i])) * 16777619
	}
	return (h ^ h>>16) & (firstBitWords*64 - 1)
}

// Derive returns the words a folded English word derives from in another
// part of speech ("deletion" → "delete"), or nil. The returned slice is
// shared and must not be modified.
func (l *Lexicon) Derive(word string) []string { return l.derived[word] }

// Stats describes a lexicon's size.
type Stats struct {
	ToolGroups, Synsets, EnglishWords, Irregular, Derived, Spanish, Polish int
	// SpanishForms and PolishForms count the inflected forms (Hunspell)
	// that reach a Spanish or Polish entry; Spanish and Polish do not.
	SpanishForms, PolishForms int
}

// Stats returns the lexicon's size.
func (l *Lexicon) Stats() Stats {
	s := Stats{EnglishWords: len(l.english), Irregular: len(l.irreg), Derived: len(l.derived),
		Spanish: len(l.trans[0]) - l.forms[0], Polish: len(l.trans[1]) - l.forms[1],
		SpanishForms: l.forms[0], PolishForms: l.forms[1]}
	for _, c := range l.concepts {
		if c.weight >= WeightTool {
			s.ToolGroups++
		} else {
			s.Synsets++
		}
	}
	return s
}
