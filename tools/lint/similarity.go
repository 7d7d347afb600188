package lint

import (
	"math"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery/analysis"
)

// similarity holds each card's TF-IDF vector over the analyzed terms of its
// name, summary and aliases — what a user reads to choose a tool — with an
// inverted index for the pairwise comparison. The namespace is left out on
// purpose: two servers' create_issue tools are told apart by their words
// ("GitHub repository", "GitLab project"), or not at all.
type similarity struct {
	vecs     []map[string]float64 // unit-length TF-IDF vector per tool
	terms    [][]string           // each vector's terms, sorted: the order of its sums
	postings map[string][]int     // term -> tools holding it, ascending
}

func newSimilarity(snap *tools.Snapshot, a *analysis.Analyzer) *similarity {
	s := &similarity{vecs: make([]map[string]float64, snap.Len()), terms: make([][]string, snap.Len()), postings: map[string][]int{}}
	tf := make([]map[string]float64, snap.Len())
	var buf []string
	for i, t := range snap.Tools() {
		text := t.Card.Name + "\n" + t.Card.Summary + "\n" + strings.Join(t.Card.Aliases, "\n")
		buf = a.Terms(buf[:0], text, "")
		counts := map[string]float64{}
		for _, term := range buf {
			counts[term]++
		}
		tf[i] = counts
		for term := range counts {
			s.postings[term] = append(s.postings[term], i)
		}
	}
	n := float64(snap.Len())
	var squares []float64
	for i, counts := range tf {
		vec := make(map[string]float64, len(counts))
		terms := make([]string, 0, len(counts))
		squares = squares[:0]
		for term, c := range counts {
			w := (1 + math.Log(c)) * math.Log(1+n/float64(len(s.postings[term])))
			vec[term] = w
			terms = append(terms, term)
			squares = append(squares, w*w)
		}
		sort.Strings(terms)
		s.terms[i] = terms
		// Summed by value, not in map order: two cards alike but for a
		// word get the same norm to the last bit, so their tie is one.
		sort.Float64s(squares)
		var norm float64
		for _, sq := range squares {
			norm += sq
		}
		norm = math.Sqrt(norm)
		for term := range vec {
			if norm > 0 {
				vec[term] /= norm
			}
		}
		s.vecs[i] = vec
	}
	return s
}

type neighbour struct {
	j   int
	sim float64
}

type neighbours struct {
	best neighbour   // the most similar other tool (j = -1 when none shares a term)
	dups []neighbour // every other tool at or above the threshold, by ID order
}

// nearest returns, for every tool, its most similar sibling and its near
// duplicates. Ties go to the lower index, so results are deterministic.
func (s *similarity) nearest(threshold float64) []neighbours {
	out := make([]neighbours, len(s.vecs))
	acc := make([]float64, len(s.vecs))
	var touched []int
	for i, vec := range s.vecs {
		touched = touched[:0]
		for _, term := range s.terms[i] {
			w := vec[term]
			for _, j := range s.postings[term] {
				if j == i {
					continue
				}
				if acc[j] == 0 {
					touched = append(touched, j)
				}
				acc[j] += w * s.vecs[j][term]
			}
		}
		sort.Ints(touched)
		best := neighbour{j: -1}
		for _, j := range touched {
			sim := math.Min(acc[j], 1)
			acc[j] = 0
			if sim > best.sim {
				best = neighbour{j, sim}
			}
			if sim >= threshold {
				out[i].dups = append(out[i].dups, neighbour{j, sim})
			}
		}
		out[i].best = best
	}
	return out
}
