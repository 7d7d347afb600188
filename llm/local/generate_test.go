package local

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/grammar/mask"
	"github.com/toolgate/toolgate/llm"
)

// The test vocabulary: ids 0..6.
var testPieces = []string{"</s>", "{", "}", "a", "b", "ab", "é", " "}

const (
	tEnd = iota
	tOpen
	tClose
	tA
	tB
	tAB
	tE
)

func testVocab(t *testing.T) *mask.Vocabulary {
	t.Helper()
	pieces := make([][]byte, len(testPieces))
	kinds := make([]mask.Kind, len(testPieces))
	for i, p := range testPieces {
		pieces[i] = []byte(p)
	}
	kinds[tEnd] = mask.KindEnd
	v, err := mask.NewVocabulary(pieces, kinds)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func testSession(t *testing.T, v *mask.Vocabulary, src string) *mask.Session {
	t.Helper()
	g, err := gbnf.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	e, err := mask.NewEngine(g, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e.NewSession()
}

// fakeRunner is a model whose logits favour, at each position after the
// prompt, the next token of script (and the end token, which the mask
// must keep out until the grammar is complete), and that records what it
// was asked to decode.
type fakeRunner struct {
	n         int   // tokens in the cache
	prompt    int   // the prompt's length, where the script starts
	script    []int // the favoured tokens, by position after the prompt
	evals     [][]int32
	truncs    []int
	refuseRm  bool // truncate(n > 0) fails, as for a model whose cache cannot drop a suffix
	failAt    int  // eval fails when the cache holds this many tokens (0: never)
	vocabSize int
}

func (f *fakeRunner) truncate(n int) bool {
	f.truncs = append(f.truncs, n)
	if n > 0 && f.refuseRm {
		return false
	}
	f.n = min(f.n, n)
	return true
}

func (f *fakeRunner) eval(toks []int32) error {
	if f.failAt > 0 && f.n+len(toks) > f.failAt {
		return errors.New("decode failed")
	}
	f.evals = append(f.evals, slices.Clone(toks))
	f.n += len(toks)
	return nil
}

func (f *fakeRunner) logits() ([]float32, error) {
	l := make([]float32, f.vocabSize)
	l[tEnd] = 10 // the most likely, and refused until the grammar ends
	if i := f.n - f.prompt; i >= 0 && i < len(f.script) {
		l[f.script[i]] = 5
	}
	return l, nil
}

func TestGenerate(t *testing.T) {
	v := testVocab(t)
	for _, row := range []struct {
		name, grammar string
		script        []int
		maxTokens     int
		want          string
		finish        llm.FinishReason
		tokens        int
		decoded       int // tokens decoded after the prompt
	}{
		// The grammar ends at "}": no token is sampled or decoded for the end.
		{"stops at the envelope's end", `root ::= "{" [ab]* "}"`, []int{tOpen, tA, tAB, tClose}, 10, "{aab}", llm.FinishStop, 4, 3},
		// The end token is the most likely, so it ends the reply as soon as the grammar is complete.
		{"end token once complete", `root ::= "{" [ab]* "}" [ ]*`, []int{tOpen, tB, tClose}, 10, "{b}", llm.FinishStop, 4, 3},
		{"max tokens", `root ::= "{" [ab]* "}"`, []int{tOpen, tA, tA, tA, tA, tA}, 3, "{aa", llm.FinishLength, 3, 2},
		// A token the script favours that the grammar refuses is masked out:
		// "é" is not in [ab], so the end token is refused too and the next
		// best (id order among equals: "{") cannot follow either: the
		// remaining zero-logit tokens decide, lowest id first.
		{"masked token", `root ::= "{" [ab]* "}"`, []int{tOpen, tE, tClose}, 3, "{}", llm.FinishStop, 2, 1},
	} {
		t.Run(row.name, func(t *testing.T) {
			f := &fakeRunner{prompt: 2, script: row.script, vocabSize: v.Len()}
			k := &kvState{r: f, batch: 8}
			if _, err := k.prefill(context.Background(), []int32{9, 9}); err != nil {
				t.Fatal(err)
			}
			var deltas string
			g, err := k.generate(context.Background(), testSession(t, v, row.grammar), v, sampling{maxTokens: row.maxTokens, onDelta: func(s string) { deltas += s }})
			if err != nil {
				t.Fatal(err)
			}
			if string(g.text) != row.want || g.finish != row.finish || g.tokens != row.tokens {
				t.Errorf("generate = %q %s %d tokens, want %q %s %d", g.text, g.finish, g.tokens, row.want, row.finish, row.tokens)
			}
			if deltas != row.want {
				t.Errorf("OnDelta got %q, want %q", deltas, row.want)
			}
			if got := f.n - 2; got != row.decoded {
				t.Errorf("decoded %d tokens after the prompt, want %d (evals %v)", got, row.decoded, f.evals)
			}
			if len(k.cached) != f.n {
				t.Errorf("cached %d tokens, the runner holds %d", len(k.cached), f.n)
			}
		})
	}
}

func TestGenerateCancelled(t *testing.T) {
	v := testVocab(t)
	f := &fakeRunner{prompt: 1, script: []int{tOpen, tA, tA, tA, tA}, vocabSize: v.Len()}
	k := &kvState{r: f, batch: 8}
	if _, err := k.prefill(context.Background(), []int32{9}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	deltas := 0
	_, err := k.generate(ctx, testSession(t, v, `root ::= "{" [ab]* "}"`), v, sampling{maxTokens: 100, onDelta: func(string) {
		if deltas++; deltas == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("generate = %v, want context.Canceled", err)
	}
	if f.n != 2 {
		t.Errorf("decoded %d tokens, want the prompt and one: the cancel is seen before the next decode", f.n)
	}
}

func TestGenerateDecodeFailureClearsCache(t *testing.T) {
	v := testVocab(t)
	f := &fakeRunner{prompt: 1, script: []int{tOpen, tA, tA}, vocabSize: v.Len(), failAt: 2}
	k := &kvState{r: f, batch: 8}
	if _, err := k.prefill(context.Background(), []int32{9}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.generate(context.Background(), testSession(t, v, `root ::= "{" [ab]* "}"`), v, sampling{maxTokens: 10}); err == nil {
		t.Fatal("generate succeeded past a failed decode")
	}
	if len(k.cached) != 0 || f.n != 0 {
		t.Errorf("after a failed decode: cached %v, runner %d tokens; want both cleared", k.cached, f.n)
	}
}

func TestPrefixReuse(t *testing.T) {
	for _, row := range []struct {
		name           string
		cached, prompt []int32
		refuseRm       bool
		reused         int
		evals          [][]int32
	}{
		{"cold", nil, []int32{1, 2, 3}, false, 0, [][]int32{{1, 2, 3}}},
		{"next turn", []int32{1, 2, 3, 4, 5}, []int32{1, 2, 3, 4, 5, 6, 7}, false, 5, [][]int32{{6, 7}}},
		{"diverges", []int32{1, 2, 3, 4, 5}, []int32{1, 2, 9, 9}, false, 2, [][]int32{{9, 9}}},
		{"same prompt: the last token again", []int32{1, 2, 3}, []int32{1, 2, 3}, false, 2, [][]int32{{3}}},
		{"shorter prompt", []int32{1, 2, 3, 4}, []int32{1, 2}, false, 1, [][]int32{{2}}},
		{"cache cannot drop a suffix", []int32{1, 2, 3, 4}, []int32{1, 2, 3, 7}, true, 0, [][]int32{{1, 2, 3, 7}}},
		{"batches", nil, []int32{1, 2, 3, 4, 5}, false, 0, [][]int32{{1, 2}, {3, 4}, {5}}},
	} {
		t.Run(row.name, func(t *testing.T) {
			f := &fakeRunner{n: len(row.cached), refuseRm: row.refuseRm, vocabSize: 8}
			k := &kvState{r: f, cached: slices.Clone(row.cached), batch: 2}
			if row.name != "batches" {
				k.batch = 8
			}
			reused, err := k.prefill(context.Background(), row.prompt)
			if err != nil {
				t.Fatal(err)
			}
			if reused != row.reused || !slices.EqualFunc(f.evals, row.evals, slices.Equal) {
				t.Errorf("prefill = reused %d, decoded %v; want %d, %v", reused, f.evals, row.reused, row.evals)
			}
			if !slices.Equal(k.cached, row.prompt) || f.n != len(row.prompt) {
				t.Errorf("cache holds %v (runner %d), want the prompt %v", k.cached, f.n, row.prompt)
			}
		})
	}
	t.Run("cancelled between batches", func(t *testing.T) {
		f := &fakeRunner{vocabSize: 8}
		k := &kvState{r: f, batch: 2}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := k.prefill(ctx, []int32{1, 2, 3}); !errors.Is(err, context.Canceled) || len(f.evals) != 0 {
			t.Errorf("prefill = %v after %v, want context.Canceled before any decode", err, f.evals)
		}
	})
}

func TestSample(t *testing.T) {
	allow := func(ids ...int) mask.Bitset {
		b := mask.NewBitset(130)
		for _, id := range ids {
			b.Set(id)
		}
		return b
	}
	logits := make([]float32, 130)
	logits[3], logits[70], logits[129] = 2, 9, 2
	rng := rand.New(rand.NewPCG(1, 2))
	t.Run("greedy takes the best allowed", func(t *testing.T) {
		if id, ok := sample(logits, allow(3, 129, 5), &sampling{temperature: 0, rng: rng}); !ok || id != 3 {
			t.Errorf("sample = %d, %v; want 3 (70 is better but masked; 129 ties and comes later)", id, ok)
		}
	})
	t.Run("nothing allowed", func(t *testing.T) {
		if id, ok := sample(logits, allow(), &sampling{temperature: 0.7, rng: rng}); ok {
			t.Errorf("sample = %d, want none", id)
		}
	})
	t.Run("never a masked token", func(t *testing.T) {
		for range 500 {
			if id, _ := sample(logits, allow(3, 129, 5), &sampling{temperature: 5, rng: rng}); id == 70 || (id != 3 && id != 129 && id != 5) {
				t.Fatalf("sample = %d outside the mask", id)
			}
		}
	})
	t.Run("softmax over the temperature", func(t *testing.T) {
		l := make([]float32, 130)
		l[10] = float32(math.Log(3)) // p = 3/4 at T=1, (3^(1/2))/(1+3^(1/2)) ≈ 0.634 at T=2
		for _, row := range []struct {
			temp, want float64
		}{{1, 0.75}, {2, math.Sqrt(3) / (1 + math.Sqrt(3))}} {
			t.Run(fmt.Sprintf("T=%v", row.temp), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(7, 7))
				n := 0
				const draws = 20000
				for range draws {
					if id, _ := sample(l, allow(10, 20), &sampling{temperature: row.temp, rng: rng}); id == 10 {
						n++
					}
				}
				if got := float64(n) / draws; math.Abs(got-row.want) > 0.02 {
					t.Errorf("T=%v: token 10 drawn %.3f of the time, want %.3f", row.temp, got, row.want)
				}
			})
		}
	})
	t.Run("seeded runs repeat", func(t *testing.T) {
		draw := func(seed uint64) []int {
			rng := rand.New(rand.NewPCG(seed, seed))
			var out []int
			for range 50 {
				id, _ := sample(logits, allow(3, 5, 129), &sampling{temperature: 3, rng: rng})
				out = append(out, id)
			}
			return out
		}
		if a, b, c := draw(4), draw(4), draw(5); !slices.Equal(a, b) || slices.Equal(a, c) {
			t.Errorf("seed 4 twice: %v, %v; seed 5: %v", a, b, c)
		}
	})
}

func TestSplitUTF8(t *testing.T) {
	for _, row := range []struct{ in, done, rest string }{
		{"abc", "abc", ""},
		{"a\xc3", "a", "\xc3"},
		{"a\xe2\x82", "a", "\xe2\x82"},
		{"a\xe2\x82\xac", "a\xe2\x82\xac", ""},
		{"", "", ""},
	} {
		t.Run(row.in, func(t *testing.T) {
			done, rest := splitUTF8([]byte(row.in))
			if string(done) != row.done || string(rest) != row.rest {
				t.Errorf("splitUTF8(%q) = %q, %q; want %q, %q", row.in, done, rest, row.done, row.rest)
			}
		})
	}
}
