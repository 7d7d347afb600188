package local

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/examples/transfer/finance"
	"github.com/toolgate/toolgate/grammar"
	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/grammar/mask"
	"github.com/toolgate/toolgate/internal/masktest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/llm/local/internal/llamacpp"
)

// TestLiveMaskAgreesWithLlamaSampler compares, token for token, the mask
// of every step with llama.cpp's own grammar sampler called in this
// process on the same vocabulary (llama_sampler_init_grammar, then
// llama_sampler_apply over every token), along random walks through the
// one-tool envelope grammar of each tool the conformance run uses (the
// transfer example's and the real MCP catalogs'; every fourth in CI,
// TOOLGATE_LIVE_AGREEMENT_ALL=1 for all, TOOLGATE_LIVE_AGREEMENT_WALKS
// walks of up to 40 steps each, default 1). Both sides accept the same
// token at each step. It logs the agreement and both sides' per-step
// times (a measurement, never a pass/fail).
func TestLiveMaskAgreesWithLlamaSampler(t *testing.T) {
	lib, model := testenv.LocalModel(t)
	b, err := New(model, &Options{Library: lib, Threads: 1, ContextSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	walks := 1
	if s := os.Getenv("TOOLGATE_LIVE_AGREEMENT_WALKS"); s != "" {
		if walks, err = strconv.Atoi(s); err != nil || walks <= 0 {
			t.Fatalf("TOOLGATE_LIVE_AGREEMENT_WALKS=%q: want a positive count", s)
		}
	}
	all := os.Getenv("TOOLGATE_LIVE_AGREEMENT_ALL") == "1"
	type named struct {
		name   string
		schema []byte
	}
	var ts []named
	for _, tl := range finance.Tools(nil) {
		ts = append(ts, named{"transfer/" + tl.Name(), tl.InputSchema})
	}
	for i, tl := range testenv.CatalogTools(t) {
		if all || i%4 == 0 {
			ts = append(ts, named{tl.Catalog + "/" + tl.Name, tl.InputSchema})
		}
	}
	v := b.vocab
	n := v.Len()
	data := make([]llamacpp.TokenData, n)
	var ours, theirs []time.Duration
	steps, tokenSteps, grammars, refused := 0, 0, 0, 0
	diverged := map[string]int{}
	examples := map[string]map[string]bool{}
	rng := rand.New(rand.NewPCG(31, 1))
	for _, tl := range ts {
		name := modelFacing(tl.name)
		schema := tl.schema
		if len(schema) == 0 {
			schema = []byte(`{"type":"object","properties":{}}`)
		}
		res, err := grammar.Envelope([]grammar.EnvelopeTool{{Name: name, Schema: schema}}, nil)
		if err != nil || len(res.Excluded) > 0 {
			t.Logf("%s: no envelope grammar (%v, excluded %v)", tl.name, err, res.Excluded)
			continue
		}
		g, err := gbnf.Parse(res.GBNF)
		if err != nil {
			t.Fatalf("%s: %v", tl.name, err)
		}
		eng, err := mask.NewEngine(g, v, nil)
		if err != nil {
			t.Fatal(err)
		}
		grammars++
		for range walks {
			smpl := b.lib.SamplerInitGrammar(b.lvocab, res.GBNF, "root")
			if smpl == 0 {
				refused++
				t.Errorf("%s: llama.cpp cannot parse the grammar: %s", tl.name, b.lib.LastLog())
				break
			}
			s := eng.NewSession()
			got := mask.NewBitset(n)
			for step := range 40 {
				t0 := time.Now()
				s.Fill(got)
				ours = append(ours, time.Since(t0))
				for id := range data {
					data[id] = llamacpp.TokenData{ID: int32(id)}
				}
				arr := llamacpp.TokenDataArray{Data: &data[0], Size: uintptr(n), Selected: -1}
				t0 = time.Now()
				b.lib.SamplerApply(smpl, &arr)
				theirs = append(theirs, time.Since(t0))
				steps++
				tokenSteps += n
				out := s.Output()
				mid := !utf8.Valid(out)
				both := mask.NewBitset(n)
				for k := range int(arr.Size) {
					d := arr.At(k)
					id := int(d.ID)
					l := !math.IsInf(float64(d.Logit), -1)
					o := got.Has(id)
					if o && l {
						both.Set(id)
					}
					if o == l {
						continue
					}
					why := masktest.Divergence(token(v, id), out, mid, o)
					if why == "" {
						t.Fatalf("%s after %q: token %d %q: ours %v, llama.cpp %v", tl.name, out, id, v.Piece(id), o, l)
					}
					diverged[why]++
					if examples[why] == nil {
						examples[why] = map[string]bool{}
					}
					if len(examples[why]) < 8 {
						examples[why][fmt.Sprintf("%q", v.Piece(id))] = true
					}
				}
				id, ok := masktest.Pick(n, both.Has, func(id int) masktest.Token { return token(v, id) }, rng)
				if !ok || v.Kind(id) == mask.KindEnd || step == 39 {
					break
				}
				if err := s.Accept(id); err != nil {
					t.Fatal(err)
				}
				b.lib.SamplerAccept(smpl, int32(id))
			}
			b.lib.SamplerFree(smpl)
		}
	}
	if steps == 0 {
		t.Fatal("no step compared")
	}
	differing := 0
	for _, c := range diverged {
		differing += c
	}
	p := func(d []time.Duration, q float64) time.Duration {
		slices.Sort(d)
		return d[int(q*float64(len(d)-1))]
	}
	t.Logf("%d grammars (%d refused by llama.cpp), %d steps over a %d-token vocabulary: %d token-steps, %d differ (%.4f%%), all by design: %v",
		grammars, refused, steps, n, tokenSteps, differing, 100*float64(differing)/float64(tokenSteps), diverged)
	for _, why := range slices.Sorted(maps.Keys(examples)) {
		t.Logf("  %s, e.g. %v", why, slices.Sorted(maps.Keys(examples[why])))
	}
	t.Logf("per step: ours p50 %v p99 %v (a fresh Session per walk); llama.cpp llama_sampler_apply p50 %v p99 %v",
		p(ours, .5), p(ours, .99), p(theirs, .5), p(theirs, .99))
}

// modelFacing maps a tool ID to a name that fits ^[a-zA-Z0-9_-]{1,64}$.
func modelFacing(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b[:min(len(b), 64)])
}

// token is token id of v as masktest sees it.
func token(v *mask.Vocabulary, id int) masktest.Token {
	return masktest.Token{Piece: v.Piece(id), Control: v.Kind(id) == mask.KindControl, End: v.Kind(id) == mask.KindEnd}
}
