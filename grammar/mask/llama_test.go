package mask

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/gbnfcheck"
	"github.com/toolgate/toolgate/internal/masktest"
	"github.com/toolgate/toolgate/internal/testenv"
)

// TestMaskAgreesWithLlamaCpp compares the masks with llama.cpp's own
// grammar sampler (llama_grammar_apply_impl through gbnf-mask), token for
// token, at every step of random generations over the envelopes, the
// finance tools, the foreign and hand-written schemas and one MCP tool in
// four; with TinyLlama's vocabulary when the model is present, else the
// synthesized one. It logs both engines' per-step time.
func TestMaskAgreesWithLlamaCpp(t *testing.T) {
	if testing.Short() {
		t.Skip("runs llama.cpp's sampler over every token at every step")
	}
	bin := testenv.GBNFCheck(t)
	var v *Vocabulary
	vname := "TinyLlama 32k"
	// In CI the model comes from the engines' build, which runs beside
	// the unit suite and may not have fetched it yet: the synthesized
	// vocabulary stands in rather than skipping the comparison.
	if liveModelPath() != "" {
		v = readLiveVocab(t)
	} else {
		v, vname = synthVocab(t, 1, 3000), "synthesized 3k"
	}
	vocab := make([]gbnfcheck.Token, v.Len())
	for id := range vocab {
		vocab[id] = gbnfcheck.Token{Piece: v.Piece(id), End: v.Kind(id) == KindEnd}
	}
	rng := rand.New(rand.NewPCG(11, 12))
	var ours, theirs []time.Duration
	steps, diverged := 0, map[string]int{}
	examples := map[string]map[string]bool{}
	for i, ng := range toolgateGrammars(t) {
		if !strings.HasPrefix(ng.name, "envelope/") && !strings.HasPrefix(ng.name, "finance/") && !strings.HasPrefix(ng.name, "jsonschemabench/") && !strings.HasPrefix(ng.name, "schema/") && i%4 != 0 {
			continue
		}
		t.Run(ng.name, func(t *testing.T) {
			e, err := NewEngine(ng.g, v, nil)
			if err != nil {
				t.Fatal(err)
			}
			// our generation, its masks and their times
			s := e.NewSession()
			var ids []int
			var masks []Bitset
			var outs [][]byte
			var partial []bool
			for step := 0; step < 40; step++ {
				got := NewBitset(v.Len())
				t0 := time.Now()
				s.Fill(got)
				ours = append(ours, time.Since(t0))
				masks = append(masks, got)
				outs = append(outs, slices.Clone(s.Output()))
				partial = append(partial, !utf8.Valid(s.Output()))
				id, ok := pick(v, got, rng)
				if !ok || v.Kind(id) == KindEnd || step == 39 {
					break
				}
				if err := s.Accept(id); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			lm, err := gbnfcheck.Masks(t, bin, ng.g.String(), vocab, ids)
			if err != nil {
				t.Fatalf("after %d steps: %v", len(lm), err)
			}
			if len(lm) != len(masks) {
				t.Fatalf("llama.cpp gave %d masks, want %d", len(lm), len(masks))
			}
			for k, want := range lm {
				theirs = append(theirs, want.Apply)
				steps++
				for id := range v.Len() {
					o, l := masks[k].Has(id), want.Allowed[id>>6]&(1<<(uint(id)&63)) != 0
					if o == l {
						continue
					}
					why := divergence(v, id, outs[k], partial[k], o)
					if why == "" {
						t.Fatalf("after %q: token %d %q: ours %v, llama.cpp %v", outs[k], id, v.Piece(id), o, l)
					}
					diverged[why]++
					if examples[why] == nil {
						examples[why] = map[string]bool{}
					}
					if len(examples[why]) < 12 {
						examples[why][fmt.Sprintf("%q", v.Piece(id))] = true
					}
				}
			}
		})
	}
	p := func(d []time.Duration, q float64) time.Duration {
		slices.Sort(d)
		return d[int(q*float64(len(d)-1))]
	}
	if len(ours) > 0 && len(theirs) > 0 {
		t.Logf("%s vocabulary: %d steps compared; by-design differences (token-steps): %v", vname, steps, diverged)
		for why, ex := range examples {
			t.Logf("  %s, e.g. %v", why, slices.Sorted(maps.Keys(ex)))
		}
		t.Logf("per step: ours p50 %v p99 %v (fresh Session, cold); llama.cpp llama_grammar_apply_impl p50 %v p99 %v", p(ours, .5), p(ours, .99), p(theirs, .5), p(theirs, .99))
	}
}

// divergence names the documented difference that explains token id
// being allowed by one side only after out, or "" when none does.
func divergence(v *Vocabulary, id int, out []byte, midCodePoint, ours bool) string {
	return masktest.Divergence(token(v, id), out, midCodePoint, ours)
}

// token is token id of v as masktest sees it.
func token(v *Vocabulary, id int) masktest.Token {
	return masktest.Token{Piece: v.Piece(id), Control: v.Kind(id) == KindControl, End: v.Kind(id) == KindEnd}
}
