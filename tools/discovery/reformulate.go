package discovery

import (
	"context"
	"strings"

	"github.com/toolgate/toolgate/tools/discovery/analysis"
	"github.com/toolgate/toolgate/tools/discovery/lexicon"
)

// LexiconReformulator is the offline Reformulator: it appends to the
// request the English translations (for Spanish and Polish) and English
// synonyms of its words from the lexicon toolgate ships. It is safe for
// concurrent use.
type LexiconReformulator struct {
	analyzer *analysis.Analyzer
	lex      *lexicon.Lexicon
}

var _ Reformulator = (*LexiconReformulator)(nil)

// NewLexiconReformulator returns the lexicon reformulator; a nil analyzer
// means analysis.New(nil).
func NewLexiconReformulator(a *analysis.Analyzer) *LexiconReformulator {
	if a == nil {
		a = analysis.New(nil)
	}
	return &LexiconReformulator{analyzer: a, lex: lexicon.Default()}
}

// Reformulate returns query followed by its expansions, or query itself
// when the lexicon knows none of its words. It never fails.
func (r *LexiconReformulator) Reformulate(_ context.Context, query string) (string, error) {
	lang := detect(query)
	extra := expansion(r.analyzer, r.lex, query, lang)
	if len(extra) == 0 {
		return query, nil
	}
	return query + " " + strings.Join(extra, " "), nil
}
