package discovery

import (
	"strings"

	"github.com/toolgate/toolgate/tools/analysis"
	"github.com/toolgate/toolgate/tools/discovery/ngram"
	"github.com/toolgate/toolgate/tools/lexicon"
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

// translate returns the English terms (analysed as English) of the words
// of a Spanish or Polish text that the lexicon can translate.
func translate(a *analysis.Analyzer, lex *lexicon.Lexicon, text string, lang analysis.Lang) []string {
	var words []string
	for _, t := range contentTokens(a, text, lang) {
		words = append(words, lex.Translate(lang, t)...)
	}
	if len(words) == 0 {
		return nil
	}
	return a.Terms(nil, strings.Join(words, " "), analysis.English)
}

// expansion returns the lexicon's expansion of text: translations for
// Spanish and Polish words and English synonyms, as words (not analysed).
func expansion(a *analysis.Analyzer, lex *lexicon.Lexicon, text string, lang analysis.Lang) []string {
	return lex.Expand(nil, contentTokens(a, text, lang), lang)
}

// Query widening: English words the lexicon adds to a request's lexical
// terms at widenWeight (0 turns it off): the verbs the request's nouns
// derive from ("deletion" → "delete") when widenDerived, and up to
// widenTool hand-written and widenWordNet WordNet synonyms per word, for
// requests of at most widenMaxTokens content words (0: any length).
// docs/benchmarks.md ("Sourced lexicon") has the measurements behind the
// defaults.
var (
	widenWeight    = 0.0
	widenDerived   = true
	widenTool      = 0
	widenWordNet   = 0
	widenMaxTokens = 0
)

// widen appends to dst the analysed English terms the lexicon adds to an
// English request's own; other languages get none (their translations
// already carry English terms).
func widen(dst []string, a *analysis.Analyzer, lex *lexicon.Lexicon, text string, lang analysis.Lang) []string {
	if widenWeight <= 0 || lang != analysis.English {
		return dst
	}
	toks := contentTokens(a, text, lang)
	if widenMaxTokens > 0 && len(toks) > widenMaxTokens {
		return dst
	}
	var words []string
	if widenDerived {
		for _, t := range toks {
			words = append(words, lex.Derive(t)...)
		}
	}
	if widenTool > 0 || widenWordNet > 0 {
		words = lex.ExpandN(words, toks, lang, widenTool, widenWordNet)
	}
	if len(words) == 0 {
		return dst
	}
	return a.Terms(dst, strings.Join(words, " "), analysis.English)
}
