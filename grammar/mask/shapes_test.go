package mask

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/grammar"
	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/internal/testenv"
)

// shape is a schema of a shape that stresses the mask, with an output
// the benchmark generates through it.
type shape struct {
	name   string
	schema string
	output string
}

// shapes are schemas of the kinds unseen catalogs hold: short bounded
// strings (a maxLength below the longest token of the vocabulary, where
// the free-text fast path cannot admit the class at once), a large enum,
// many optional properties, deep nesting.
func shapes() []shape {
	var out []shape
	out = append(out, shape{"bounded-strings",
		`{"type":"object","properties":{"name":{"type":"string","maxLength":40},"email":{"type":"string","maxLength":60},"theme":{"type":"string","maxLength":40}},"required":["name","email","theme"],"additionalProperties":false}`,
		`{"name": "Jöhn Doe — 日本語のテキスト", "email": "john.doe@example.com", "theme": "Dark Mode, Привет"}`})
	vals := make([]string, 2000)
	for i := range vals {
		vals[i] = fmt.Sprintf("region-%04d-zone", i)
	}
	enum, _ := json.Marshal(vals)
	out = append(out, shape{"enum-2000",
		`{"type":"object","properties":{"region":{"enum":` + string(enum) + `}},"required":["region"]}`,
		`{"region": "region-1999-zone"}`})
	var props []string
	for i := range 200 {
		props = append(props, fmt.Sprintf(`"opt_%03d":{"type":"integer"}`, i))
	}
	out = append(out, shape{"optional-200",
		`{"type":"object","properties":{` + strings.Join(props, ",") + `}}`,
		`{"opt_003": 1, "opt_050": 2, "opt_120": 3, "opt_199": 4}`})
	out = append(out, shape{"pattern-strings",
		`{"type":"object","properties":{"ssh":{"type":"string","pattern":"^.+@.+$"},"url":{"type":"string","pattern":"^https?://"}},"required":["ssh","url"]}`,
		`{"ssh": "deploy.user@build-host.example.com", "url": "https://example.com/a/path?q=1"}`})
	schema, inst := `{"type":"string"}`, `"leaf"`
	for range 40 {
		schema = `{"type":"object","properties":{"child":` + schema + `},"required":["child"]}`
		inst = `{"child": ` + inst + `}`
	}
	out = append(out, shape{"nested-40", schema, inst})
	return out
}

// grammar compiles the shape's schema.
func (sh shape) grammar(tb testing.TB) *gbnf.Grammar {
	tb.Helper()
	res, err := grammar.FromSchema([]byte(sh.schema), nil)
	if err != nil {
		tb.Fatal(err)
	}
	g, err := gbnf.Parse(res.GBNF)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// BenchmarkMaskShapes times each Fill (a new Session per generation) of
// the shapes' outputs over each vocabulary and reports the per-token p50
// and p99 in µs, the trie nodes walked and the replays per generation.
func BenchmarkMaskShapes(b *testing.B) {
	benchSetup(b)
	for _, sh := range shapes() {
		g := sh.grammar(b)
		for _, bv := range benchVocabs {
			b.Run(sh.name+"/"+bv.name, func(b *testing.B) {
				e, err := NewEngine(g, bv.v, nil)
				if err != nil {
					b.Fatal(err)
				}
				ids := tokenize(b, e, sh.output)
				allowed := NewBitset(bv.v.Len())
				var times []time.Duration
				var st Stats
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					s := e.NewSession()
					for _, id := range ids {
						t0 := time.Now()
						s.Fill(allowed)
						times = append(times, time.Since(t0))
						if err := s.Accept(id); err != nil {
							b.Fatal(err)
						}
					}
					st = s.Stats()
				}
				b.StopTimer()
				slices.Sort(times)
				q := func(p float64) float64 { return float64(times[int(p*float64(len(times)-1))]) / 1e3 }
				b.ReportMetric(q(0.50), "p50-µs")
				b.ReportMetric(q(0.99), "p99-µs")
				b.ReportMetric(float64(st.Nodes), "nodes/gen")
				b.ReportMetric(float64(st.Replays), "replays/gen")
				b.ReportMetric(float64(len(ids)), "tokens/gen")
			})
		}
	}
}

// TestMaskInsideStrings: inside a string whose maxLength is below the
// longest token of the vocabulary (cl100k and o200k hold tokens of 128
// characters), the free-text slice cannot be admitted whole; the mask
// must still equal the brute-force one and cost a bounded walk, not one
// over every token of the string's class (6.7 million trie nodes and 7
// cache rebuilds for 40 cl100k tokens before subtrees were admitted
// whole; 13.8 million and 46 for o200k). Inside a pattern string
// ("^.+@.+$") the string's class less "@" is admitted at once (836,000
// nodes for 27 cl100k tokens and 1.66 million for o200k while every mask
// walked the whole trie), and the walk must not outgrow the matcher's
// caches (4 rebuilds a generation on o200k while each non-ASCII code
// point had its own transition).
func TestMaskInsideStrings(t *testing.T) {
	for _, tc := range []struct {
		shape string
		nodes int // the most trie nodes a token; 0: no bound
	}{{"bounded-strings", 5000}, {"pattern-strings", 1000}} {
		var sh shape
		for _, x := range shapes() {
			if x.name == tc.shape {
				sh = x
			}
		}
		g := sh.grammar(t)
		for _, rv := range realVocabs(t) {
			t.Run(tc.shape+"/"+rv.name, func(t *testing.T) {
				e, err := NewEngine(g, rv.v, nil)
				if err != nil {
					t.Fatal(err)
				}
				every := 4 // steps between brute-force comparisons
				if light() {
					every = 8
				}
				st, n := compareAlong(t, e, g, sh.output, every)
				if st.Replays > 0 || tc.nodes > 0 && st.Nodes > tc.nodes*n {
					t.Errorf("Stats() = %+v over %d tokens, want no replay and at most %d trie nodes a token (0: any)", st, n, tc.nodes)
				}
			})
		}
	}
}

// compareAlong generates output through a new Session of e, token by
// token (the longest allowed token each time), checks every few steps
// that the mask equals the brute-force one (not under -race) and returns
// the Session's Stats and the tokens generated.
func compareAlong(t *testing.T, e *Engine, g *gbnf.Grammar, output string, every int) (Stats, int) {
	t.Helper()
	v := e.Vocabulary()
	ids := tokenize(t, e, output)
	s := e.NewSession()
	got := NewBitset(v.Len())
	for i, id := range ids {
		s.Fill(got)
		if !testenv.Race && i%every == 0 {
			if want := bruteMask(t, g, v, s.Output()); !slices.Equal(got, want) {
				t.Fatalf("after %q: mask differs from brute force: %s", s.Output(), diff(v, got, want))
			}
		}
		if err := s.Accept(id); err != nil {
			t.Fatalf("after %q: Accept(%d %q): %v", s.Output(), id, v.Piece(id), err)
		}
	}
	t.Logf("%d tokens: %+v", len(ids), s.Stats())
	return s.Stats(), len(ids)
}

// TestMaskEqualsBruteForceBoundedUnseen is the differential test over
// unseen schemas with bounded strings (JSONSchemaBench and the test
// suite, those with a maxLength) and cl100k's 100k tokens, where masks
// admit trie subtrees whole inside short runs: at every step of random
// walks the mask must equal the brute-force one.
func TestMaskEqualsBruteForceBoundedUnseen(t *testing.T) {
	if light() {
		t.Skip("-short or -race: brute force over 100k tokens per step")
	}
	var cl realVocab
	for _, rv := range realVocabs(t) {
		if rv.name == "cl100k" {
			cl = rv
		}
	}
	rng := rand.New(rand.NewPCG(11, 12))
	n, steps := 0, 0
	for _, us := range unseenSchemas(t, 7, nil) {
		if !bytes.Contains(us.schema, []byte(`"maxLength"`)) || n >= 6 {
			continue
		}
		n++
		t.Run(us.name, func(t *testing.T) {
			steps += walkAndCompare(t, namedGrammar{us.name, us.g}, cl.v, nil, rng, 1, 30)
		})
	}
	t.Logf("%d schemas, %d steps compared", n, steps)
}

// patternStrings are strings constrained by the regular expressions real
// tool schemas use, each with an output that reaches every part of its
// pattern: where a run's class takes the character that starts the next
// term ("@" inside "^.+@.+$", "." inside a domain), the free-text slice of
// the class does not apply as it is.
var patternStrings = []struct {
	name, pattern, output string
	nodes                 int // the most trie nodes a token over cl100k
}{
	{"any-at-any", `^.+@.+$`, `"deploy.user@build-host.example.com — ок @ twice"`, 1000},
	{"email", `^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$`, `"john.doe+tag@mail.example.co.uk"`, 1000},
	// The \u escape's hex digits walk every token that starts with one.
	{"url-prefix", `^https?://`, `"https://example.com/a/path?q=1&r=\u00e9"`, 5000},
	{"url", `^https?://[^\\s/$.?#].[^\\s]*$`, `"http://example.org/index.html#top"`, 1000},
	{"kebab", `^[a-z]+(-[a-z]+)*$`, `"model-context-protocol-gateway"`, 1000},
	{"date", `^\\d{4}-\\d{2}-\\d{2}$`, `"2026-12-07"`, 1000},
}

// TestMaskPatternStrings: inside strings constrained by a pattern, every
// mask along an output, and along a random walk (not with -short), must
// equal the brute-force one over cl100k's 100k tokens, at every step; the
// output's must walk at most the row's trie nodes a token ("^.+@.+$"
// walked 56,000 while its "@" kept the string's slice out,
// "^[a-z]+(-[a-z]+)*$" 9,500 while [a-z] had no slice, the email 3,600
// while the letters after a domain's "." were walked).
func TestMaskPatternStrings(t *testing.T) {
	var cl realVocab
	for _, rv := range realVocabs(t) {
		if rv.name == "cl100k" {
			cl = rv
		}
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for _, tc := range patternStrings {
		t.Run(tc.name, func(t *testing.T) {
			sh := shape{tc.name, `{"type":"string","pattern":"` + tc.pattern + `"}`, tc.output}
			g := sh.grammar(t)
			e, err := NewEngine(g, cl.v, nil)
			if err != nil {
				t.Fatal(err)
			}
			every := 1
			if light() {
				every = 4
			}
			st, n := compareAlong(t, e, g, sh.output, every)
			if st.Nodes > tc.nodes*n {
				t.Errorf("Stats() = %+v over %d tokens, want at most %d trie nodes a token", st, n, tc.nodes)
			}
			if !light() {
				walkAndCompare(t, namedGrammar{tc.name, g}, cl.v, nil, rng, 2, 20)
			}
		})
	}
}
