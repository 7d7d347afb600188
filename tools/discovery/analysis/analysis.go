package analysis

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Lang is a language code understood by the analyzers.
type Lang string

// The languages the analyzers support.
const (
	English Lang = "en"
	Spanish Lang = "es"
	Polish  Lang = "pl"
)

// Languages lists the supported languages in their canonical order.
var Languages = []Lang{English, Spanish, Polish}

// ErrUnsupportedLanguage is returned by [ParseLang] (and reported by
// [NewChecked]) for a language code the package does not support.
var ErrUnsupportedLanguage = errors.New("analysis: unsupported language")

// ParseLang returns the Lang for a code such as "en", "es" or "pl"
// (case-insensitive, region suffixes like "es-MX" accepted). The empty code
// returns "" (meaning: detect).
func ParseLang(code string) (Lang, error) {
	if code == "" {
		return "", nil
	}
	c := Fold(code)
	if len(c) > 2 && (c[2] == '-' || c[2] == '_') {
		c = c[:2]
	}
	switch Lang(c) {
	case English, Spanish, Polish:
		return Lang(c), nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnsupportedLanguage, code)
}

// Options configures an Analyzer. The zero value (and a nil *Options) means:
// all three languages, stop words removed, stemming on.
type Options struct {
	// Languages restricts the languages Detect may choose for Terms when the
	// caller passes lang "". Empty means all supported languages. English is
	// the fallback whether or not it is listed.
	Languages []Lang
	// KeepStopWords keeps stop words in Terms' output.
	KeepStopWords bool
	// NoStemming turns stemming off: Terms returns folded words.
	NoStemming bool
	// StemCache bounds how many words per language the Analyzer keeps the
	// stems of (the words a catalog and its requests repeat are then
	// stemmed once; the cache starts over when full and changes no stem).
	// Zero means [DefaultStemCache]; a negative value keeps none.
	StemCache int
}

// DefaultStemCache is the default [Options.StemCache]: 32,768 words per
// language, a few MiB at most.
const DefaultStemCache = 1 << 15

// Analyzer turns text into terms. It is immutable after New and safe for
// concurrent use by multiple goroutines.
type Analyzer struct {
	langs    [3]bool // indexed by langIndex
	keepStop bool
	noStem   bool
	stems    *stemCache // nil: none
}

// Detects reports whether the Analyzer detects and analyses lang (English
// always; Spanish and Polish unless [Options.Languages] leaves them out).
func (a *Analyzer) Detects(lang Lang) bool {
	i := langIndex(lang)
	return i >= 0 && a.langs[i]
}

// New returns an Analyzer configured by opts (nil means defaults). Unknown
// languages in opts.Languages are ignored; use [NewChecked] to reject them.
func New(opts *Options) *Analyzer {
	a, _ := build(opts)
	return a
}

// NewChecked is New that reports an unsupported language in opts.Languages
// as an error wrapping [ErrUnsupportedLanguage].
func NewChecked(opts *Options) (*Analyzer, error) {
	return build(opts)
}

func build(opts *Options) (*Analyzer, error) {
	a := &Analyzer{}
	if opts == nil {
		opts = &Options{}
	}
	var err error
	if len(opts.Languages) == 0 {
		a.langs = [3]bool{true, true, true}
	}
	for _, l := range opts.Languages {
		i := langIndex(l)
		if i < 0 {
			if err == nil {
				err = fmt.Errorf("analysis: Options.Languages: %w: %q", ErrUnsupportedLanguage, l)
			}
			continue
		}
		a.langs[i] = true
	}
	a.langs[0] = true // English is always the fallback.
	a.keepStop = opts.KeepStopWords
	a.noStem = opts.NoStemming
	switch {
	case opts.StemCache == 0:
		a.stems = &stemCache{max: DefaultStemCache}
	case opts.StemCache > 0:
		a.stems = &stemCache{max: opts.StemCache}
	}
	return a, err
}

func langIndex(l Lang) int {
	switch l {
	case English:
		return 0
	case Spanish:
		return 1
	case Polish:
		return 2
	}
	return -1
}

// scratch is the per-call working memory that Terms and Tokens borrow from
// a pool so that steady-state calls do not allocate it.
type scratch struct {
	buf   []byte // folded text, tokens separated by ' '
	ends  []int  // end offset in buf of each token
	stem  []byte // stemmer work area
	toks  []string
	flags []uint8 // per token: tokenHasPolish, tokenHasSpanish marks
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{buf: make([]byte, 0, 256), ends: make([]int, 0, 32), stem: make([]byte, 0, 64), toks: make([]string, 0, 32)}
}}

// Tokens appends the folded tokens of text to dst and returns the extended
// slice: text split on non-alphanumerics and identifier boundaries, then
// folded. No stop words are removed and nothing is stemmed, so the result
// suits character n-grams and identifier matching. Tokens allocates at most
// one string per call (the folded text), none when text is already folded
// lower-case ASCII separated by single spaces.
func (a *Analyzer) Tokens(dst []string, text string) []string {
	sc := scratchPool.Get().(*scratch)
	dst, _ = sc.tokenize(dst, text, false)
	scratchPool.Put(sc)
	return dst
}

// TokensLang is Tokens that also returns the language Detect (restricted to
// the Analyzer's languages) guesses for text, in one pass over it.
func (a *Analyzer) TokensLang(dst []string, text string) ([]string, Lang) {
	sc := scratchPool.Get().(*scratch)
	start := len(dst)
	dst, cues := sc.tokenize(dst, text, false)
	lang := a.detect(dst[start:], cues)
	scratchPool.Put(sc)
	return dst, lang
}

// TokensLangFunc is TokensLang for a caller that only reads the tokens:
// it appends them to dst and calls fn with the result and the language,
// without copying the folded text, so that the tokens are valid only until
// fn returns (fn copies what it keeps and should clear dst's strings). It
// allocates nothing in the steady state.
func (a *Analyzer) TokensLangFunc(dst []string, text string, fn func(toks []string, lang Lang)) {
	sc := scratchPool.Get().(*scratch)
	start := len(dst)
	dst, cues := sc.tokenize(dst, text, true)
	fn(dst, a.detect(dst[start:], cues))
	scratchPool.Put(sc)
}

// TokensFunc is TokensLangFunc without the language guess: it appends the
// folded tokens of text to dst and calls fn with the result, valid only
// until fn returns. It allocates nothing in the steady state.
func (a *Analyzer) TokensFunc(dst []string, text string, fn func(toks []string)) {
	sc := scratchPool.Get().(*scratch)
	dst, _ = sc.tokenize(dst, text, true)
	fn(dst)
	scratchPool.Put(sc)
}

// Terms appends the analyzed terms of text to dst and returns the extended
// slice: Tokens, then stop words of the language removed and each remaining
// token stemmed. lang "" means: guess with Detect (restricted to the
// Analyzer's languages). A lang the package does not support is treated as
// English. Tokens that are pure digit runs are kept as they are.
func (a *Analyzer) Terms(dst []string, text string, lang Lang) []string {
	dst, _ = a.terms(dst, text, lang, a)
	return dst
}

// TermsBorrowed appends to dst the English terms of a text written in
// lang, for the words it may have borrowed from English (tool names,
// "pull request"): Terms(dst, text, English) without lang's stop words as
// well, so that the Spanish "en" or the Polish "na" is no English term.
func (a *Analyzer) TermsBorrowed(dst []string, text string, lang Lang) []string {
	dst, _ = a.termsFunc(dst, text, English, a, lang, nil)
	return dst
}

// TermsDetect returns the language Detect guesses for text (among all
// supported languages, whatever the Analyzer's Languages) and appends the
// terms of text in that language to dst: Terms(dst, text, Detect(text)),
// in one pass over text instead of two.
func (a *Analyzer) TermsDetect(dst []string, text string) ([]string, Lang) {
	return a.terms(dst, text, "", defaultAnalyzer)
}

// TermsDetectFunc is TermsDetect that also calls fn, once, with the folded
// tokens of text (stop words included, nothing stemmed: what Tokens
// returns) and the language guessed, before the terms are made: one pass
// over text for a caller that needs both. The tokens are valid only until
// fn returns; fn must not modify them.
func (a *Analyzer) TermsDetectFunc(dst []string, text string, fn func(toks []string, lang Lang)) ([]string, Lang) {
	return a.termsFunc(dst, text, "", defaultAnalyzer, "", fn)
}

// terms is Terms; an empty lang is detected by det's languages.
func (a *Analyzer) terms(dst []string, text string, lang Lang, det *Analyzer) ([]string, Lang) {
	return a.termsFunc(dst, text, lang, det, "", nil)
}

// termsFunc is terms that calls fn, when not nil, with the tokens, and
// removes the stop words of also (when not "") as well as lang's.
func (a *Analyzer) termsFunc(dst []string, text string, lang Lang, det *Analyzer, also Lang, fn func([]string, Lang)) ([]string, Lang) {
	sc := scratchPool.Get().(*scratch)
	start := len(dst)
	var cues langCues
	dst, cues = sc.tokenize(dst, text, true)
	toks := dst[start:]
	if lang == "" {
		lang = det.detect(toks, cues)
	} else if langIndex(lang) < 0 {
		lang = English
	}
	if fn != nil {
		fn(toks, lang)
	}
	out := dst[:start]
	for _, t := range toks {
		if !a.keepStop && (isStop(lang, t) || also != "" && isStop(also, t)) {
			continue
		}
		if !a.noStem {
			t = sc.stemWord(a.stems, lang, t)
		}
		if t == "" {
			continue
		}
		out = append(out, t)
	}
	sc.own(out[start:])
	// Clear the tail so dropped strings are not kept alive by dst's array.
	clear(dst[len(out):])
	scratchPool.Put(sc)
	return out, lang
}

// Stem returns the stem of one folded word in lang (English for an
// unsupported or empty lang). The word should come from Tokens: stemmers
// expect folded lower-case letters. Stem is safe for concurrent use.
func Stem(lang Lang, word string) string {
	sc := scratchPool.Get().(*scratch)
	s := sc.stemWord(nil, lang, word)
	scratchPool.Put(sc)
	return s
}

// Stem is the package's Stem through the Analyzer's stem cache, so that
// the words its Terms have stemmed cost a look-up. [Options.NoStemming]
// does not apply: it governs Terms.
func (a *Analyzer) Stem(lang Lang, word string) string {
	if !isAlphaWord(word) {
		return word
	}
	li := max(langIndex(lang), 0)
	if st, ok := a.stems.get(li, word); ok {
		return st // without borrowing a scratch
	}
	sc := scratchPool.Get().(*scratch)
	st := sc.stemAlpha(lang, word)
	scratchPool.Put(sc)
	a.stems.put(li, word, st)
	return st
}

// CachedStem returns the stem of one folded word in lang, as Stem does,
// when the Analyzer need not stem it: when its stem cache holds the word
// (or the word is one stemmers leave alone). It stores nothing, so that a
// caller asking about words seldom seen twice does not fill the cache.
func (a *Analyzer) CachedStem(lang Lang, word string) (string, bool) {
	if !isAlphaWord(word) {
		return word, true
	}
	return a.stems.get(max(langIndex(lang), 0), word)
}

// stemWord stems w in lang, through cache when it is not nil.
func (sc *scratch) stemWord(cache *stemCache, lang Lang, w string) string {
	if !isAlphaWord(w) {
		return w
	}
	li := max(langIndex(lang), 0)
	if st, ok := cache.get(li, w); ok {
		return st
	}
	st := sc.stemAlpha(lang, w)
	cache.put(li, w, st)
	return st
}

// stemAlpha stems w, a word of ASCII letters (isAlphaWord), in lang.
func (sc *scratch) stemAlpha(lang Lang, w string) string {
	switch lang {
	case Spanish:
		return sc.stemSpanish(w)
	case Polish:
		return sc.stemPolish(w)
	}
	return sc.stemEnglish(w)
}

// stemCache keeps the stems of recently seen words, per language: a
// request is mostly words seen before, and a look-up costs a fraction of
// running a stemmer. It holds at most max words per language and starts
// over when full; keys and stems are copied, so that a cached stem never
// keeps a caller's text alive. A nil *stemCache keeps nothing.
type stemCache struct {
	max int
	mu  sync.RWMutex
	m   [3]map[string]string
}

func (c *stemCache) get(lang int, w string) (string, bool) {
	if c == nil {
		return "", false
	}
	c.mu.RLock()
	st, ok := c.m[lang][w]
	c.mu.RUnlock()
	return st, ok
}

func (c *stemCache) put(lang int, w, st string) {
	if c == nil || len(w) > 64 { // a longer one is not a word texts repeat
		return
	}
	c.mu.Lock()
	if c.m[lang] == nil || len(c.m[lang]) >= c.max {
		c.m[lang] = make(map[string]string, min(c.max, 1024))
	}
	c.m[lang][strings.Clone(w)] = strings.Clone(st)
	c.mu.Unlock()
}

// isAlphaWord reports whether w is made of ASCII letters only; stemmers
// leave anything else (digits, non-Latin scripts) alone.
func isAlphaWord(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// result returns the stemmer's output b for input w without allocating when
// b is a prefix of w.
func result(w string, b []byte) string {
	if len(b) <= len(w) && w[:len(b)] == string(b) {
		return w[:len(b)]
	}
	return string(b)
}
