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
func defaultEmbedder() Embedder { return ngram.New(nil) }

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
func translate(a *analysis.Analyzer, text string, lang analysis.Lang) []string {
	lex := lexicon.Default()
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
func expansion(a *analysis.Analyzer, text string, lang analysis.Lang) []string {
	return lexicon.Default().Expand(nil, contentTokens(a, text, lang), lang)
}
