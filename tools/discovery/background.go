package discovery

import (
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// Background IDF (on unless [Options.NoBackgroundIDF]).
//
// A small catalog estimates how telling a word is from few cards: a word
// that tool descriptions use everywhere ("detailed", "information",
// "find") but that only one card of a 200-tool catalog has gets the
// highest IDF, and that card, short and generic, ranks first for every
// request worded that way. The background is the document frequency of
// each index term over a large, varied catalog of tool descriptions
// (BFCL's 2,573 functions, data/background_df.tsv), blended in as if the
// catalog had as many tools again drawn from it; a term's IDF is only
// ever lowered by it, never raised, so domain words keep their weight.

//go:embed data/background_df.tsv
var backgroundTSV string

// backgroundDF is the parsed background: each term's share of the
// background's tools.
type backgroundDF struct {
	share map[string]float64
}

var background struct {
	once sync.Once
	df   *backgroundDF
	err  error
}

// loadBackground parses the embedded background once.
func loadBackground() (*backgroundDF, error) {
	background.once.Do(func() {
		background.df, background.err = parseBackground(backgroundTSV)
	})
	return background.df, background.err
}

// parseBackground reads "# comment" lines, then "tools<TAB>N", then
// "term<TAB>df" lines with 0 < df <= N.
func parseBackground(text string) (*backgroundDF, error) {
	b := &backgroundDF{share: map[string]float64{}}
	n := 0.0
	for i, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		term, v, ok := strings.Cut(line, "\t")
		df, err := strconv.Atoi(v)
		switch {
		case !ok || err != nil || df <= 0:
			return nil, fmt.Errorf("discovery: background_df.tsv:%d: want term<TAB>count, got %q", i+1, line)
		case n == 0 && term != "tools":
			return nil, fmt.Errorf("discovery: background_df.tsv:%d: want the tools<TAB>N line first", i+1)
		case n == 0:
			n = float64(df)
		case float64(df) > n:
			return nil, fmt.Errorf("discovery: background_df.tsv:%d: %q in %d of %v tools", i+1, term, df, n)
		default:
			b.share[term] = float64(df) / n
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("discovery: background_df.tsv has no tools line")
	}
	return b, nil
}

// idfs returns the IDF of each term (by termTable number) with df[t]
// cards of n: BM25's, capped with the background by the blend of the
// catalog with n more tools drawn from the background (b nil: no cap).
// Terms no card has are left 0.
func (b *backgroundDF) idfs(n int, df []int32, strs []string) []float64 {
	out := make([]float64, len(df))
	for t, d := range df {
		if d == 0 {
			continue
		}
		out[t] = idf(n, int(d))
		if b != nil {
			blend := bm25IDF(2*float64(n), float64(d)+float64(n)*b.share[strs[t]])
			out[t] = min(out[t], blend)
		}
	}
	return out
}

// bm25IDF is idf over real-valued counts.
func bm25IDF(n, df float64) float64 { return math.Log(1 + (n-df+0.5)/(df+0.5)) }
