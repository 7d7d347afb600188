package discovery_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/discovery/lexicon"
)

// lexiconVariant is one combination of lexicon sources and query widening
// measured by [TestLexiconSources].
type lexiconVariant struct {
	name  string
	src   func(*lexicon.Source) // drops or adds data; nil keeps the embedded data
	files []string              // optional files, under DISCOVERY_LEXICON_OPTIONAL
	// noWiden turns off widening the request words no card uses (on in
	// the default Discoverer).
	noWiden bool
}

// TestLexiconSources prints, with -discovery.report, recall per lexicon
// source on a development half (every even scored query of each set) and a
// held-out half (every odd one), and recall@5 of the Spanish, Polish and
// English requests of the real MCP set. The optional GPL/LGPL-derived
// files (tools/discovery/lexicon/internal/gen -optional DIR: derivations, mythes,
// FreeDict) are measured when
// DISCOVERY_LEXICON_OPTIONAL=DIR. DISCOVERY_LEXICON_VARIANTS keeps the
// variants whose name contains one of its comma-separated words.
func TestLexiconSources(t *testing.T) {
	if !*report {
		t.Skip("run with -discovery.report")
	}
	// WordNet synsets of one part of speech (the key ends with n, v, a or r).
	synsetsOf := func(pos string) func(*lexicon.Source) {
		return func(s *lexicon.Source) {
			var keep []lexicon.Entry
			for _, e := range s.WordNet {
				if strings.ContainsAny(e.Key[len(e.Key)-1:], pos) {
					keep = append(keep, e)
				}
			}
			s.WordNet = keep
		}
	}
	variants := []lexiconVariant{
		{name: "hand-written only", src: func(s *lexicon.Source) { s.WordNet, s.Irregular = nil, nil }},
		{name: "embedded default (hand-written + wordnet synsets + irregular)"},
		{name: "synsets of nouns and verbs only", src: synsetsOf("nv")},
		{name: "no synsets (irregular kept)", src: synsetsOf("")},
		{name: "embedded default, widening off", noWiden: true},
	}
	if dir := os.Getenv("DISCOVERY_LEXICON_OPTIONAL"); dir != "" {
		derived := []string{"derived=derived_en.txt"}
		variants = append(variants,
			lexiconVariant{name: "+derived concepts", files: derived},
			lexiconVariant{name: "optional mythes es+pl", files: []string{"es=es_en_mythes.txt", "pl=pl_en_mythes.txt"}},
			lexiconVariant{name: "optional freedict es+pl", files: []string{"es=es_en_freedict.txt", "pl=pl_en_freedict.txt"}},
			lexiconVariant{name: "optional freedict pl only", files: []string{"pl=pl_en_freedict.txt"}},
		)
	}
	if only := os.Getenv("DISCOVERY_LEXICON_VARIANTS"); only != "" {
		var keep []lexiconVariant
		for _, v := range variants {
			for _, w := range strings.Split(only, ",") {
				if strings.Contains(v.name, w) {
					keep = append(keep, v)
					break
				}
			}
		}
		variants = keep
	}
	sets := reportSets(t)
	fmt.Printf("| variant | set | half | R@1 | R@5 | MRR |\n|---|---|---|---|---|---|\n")
	for _, v := range variants {
		lex := variantLexicon(t, v)
		restore := func() {}
		if v.noWiden {
			restore = discovery.SetTuning("widen.weight", 0)
		}
		for _, ds := range sets {
			rep := evaluate(t, ds, &discovery.Options{Lexicon: lex})
			for half, name := range []string{"dev", "test"} {
				r1, r5, mrr := halfRecall(rep, half)
				fmt.Printf("| %s | %s | %s | %.3f | %.3f | %.3f |\n", v.name, ds.name, name, r1, r5, mrr)
			}
			if ds.name == "real-mcp" {
				for _, l := range []string{"en", "es", "pl"} {
					g := rep.ByLang[l]
					fmt.Printf("| %s | real-mcp %s (%d) | all | | %.3f | %.3f |\n", v.name, l, g.Queries, g.RecallAt5, g.MRR)
				}
			}
		}
		restore()
	}
}

func variantLexicon(t *testing.T, v lexiconVariant) *lexicon.Lexicon {
	t.Helper()
	return editedLexicon(t, func(src *lexicon.Source) {
		if v.src != nil {
			v.src(src)
		}
		for _, spec := range v.files {
			f, err := lexicon.ParseFile(spec)
			if err != nil {
				t.Fatal(err)
			}
			f.Path = filepath.Join(os.Getenv("DISCOVERY_LEXICON_OPTIONAL"), f.Path)
			if err := src.AddFile(f); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// halfRecall returns recall@1, recall@5 and MRR over the scored queries
// whose index has parity half (0: even, the development half; 1: odd).
func halfRecall(rep *discovery.Report, half int) (r1, r5, mrr float64) {
	n := 0
	for i, d := range rep.Details {
		if i%2 != half {
			continue
		}
		n++
		r1 += d.Recall[0]
		r5 += d.Recall[2]
		mrr += d.RR
	}
	if n == 0 {
		return 0, 0, 0
	}
	return r1 / float64(n), r5 / float64(n), mrr / float64(n)
}

// TestLexiconCardExpansion prints, with -discovery.report, recall with
// card expansion: each tool's tags gain the closest hand-written synonyms
// of its name's words (as an overlay would add them), on the same halves
// as [TestLexiconSources].
func TestLexiconCardExpansion(t *testing.T) {
	if !*report {
		t.Skip("run with -discovery.report")
	}
	lex := lexicon.Default()
	fmt.Printf("| card expansion | set | half | R@1 | R@5 | MRR |\n|---|---|---|---|---|---|\n")
	for _, ds := range reportSets(t) {
		for row, n := range []int{0, 2, 4} {
			t.Run(fmt.Sprint(row), func(t *testing.T) {
				ts := make([]tools.Tool, ds.snap.Len())
				for i, tl := range ds.snap.Tools() {
					ts[i] = *tl
					if n == 0 {
						continue
					}
					words := strings.FieldsFunc(strings.ToLower(tl.Name()), func(r rune) bool { return r < 'a' || r > 'z' })
					ts[i].Card.Tags = lex.ExpandN(append([]string(nil), tl.Card.Tags...), words, "en", n, 0)
				}
				reg := tools.NewRegistry()
				if err := reg.Add(ts...); err != nil {
					t.Fatal(err)
				}
				rep := evaluate(t, dataset{name: ds.name, snap: reg.Snapshot(), queries: ds.queries}, nil)
				for half, name := range []string{"dev", "test"} {
					r1, r5, mrr := halfRecall(rep, half)
					fmt.Printf("| %d synonyms per name word | %s | %s | %.3f | %.3f | %.3f |\n", n, ds.name, name, r1, r5, mrr)
				}
			})
		}
	}
}
