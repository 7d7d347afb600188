package mask

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/grammar"
	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/internal/masktest"
	"github.com/toolgate/toolgate/internal/testenv"
)

// namedGrammar is a grammar toolgate compiles, by where it comes from.
type namedGrammar struct {
	name string
	g    *gbnf.Grammar
}

func parsed(tb testing.TB, name, src string) namedGrammar {
	tb.Helper()
	g, err := gbnf.Parse(src)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return namedGrammar{name, g}
}

// toolgateGrammars returns the grammars of the differential test: each
// finance tool's schema (the transfer example's), a few foreign schemas
// of JSONSchemaBench, each real MCP catalog tool's, and turn envelopes
// over the finance tools and over a few MCP tools, through
// [grammar.FromSchema] and [grammar.Envelope].
func toolgateGrammars(tb testing.TB) []namedGrammar {
	tb.Helper()
	var out []namedGrammar
	var finance []grammar.EnvelopeTool
	files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(tb), "grammar", "testdata", "schema", "finance_*.json"))
	if len(files) == 0 {
		tb.Fatal("no finance schemas under grammar/testdata/schema")
	}
	for _, f := range files {
		schema, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "finance_"), ".json")
		res, err := grammar.FromSchema(schema, nil)
		if err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		out = append(out, parsed(tb, "finance/"+name, res.GBNF))
		finance = append(finance, grammar.EnvelopeTool{Name: name, Schema: schema})
	}
	// Strings near their maxLength: where the free-text fast path must
	// step aside.
	bounded := `{"type":"object","properties":{"code":{"type":"string","maxLength":12},"tag":{"type":"string","minLength":2,"maxLength":5},"note":{"type":"string","maxLength":30}},"required":["code","tag","note"]}`
	res, err := grammar.FromSchema([]byte(bounded), nil)
	if err != nil {
		tb.Fatal(err)
	}
	out = append(out, parsed(tb, "schema/bounded-strings", res.GBNF))
	// Foreign schemas of JSONSchemaBench that stress the mask: a pattern
	// with a non-ASCII character, recursive nesting, enums of over 200
	// values; and an enum of non-ASCII values (the bench has none).
	for _, f := range []string{"Github_easy/o46406.json", "Handwritten/mod30.json", "Github_trivial/o70256.json", "Github_easy/o9768.json"} {
		data, err := os.ReadFile(filepath.Join(testenv.Shared(tb, "datasets/jsonschemabench/maskbench"), f))
		if err != nil {
			tb.Fatal(err)
		}
		var bench struct {
			Schema json.RawMessage `json:"schema"`
		}
		if err := json.Unmarshal(data, &bench); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		res, err := grammar.FromSchema(bench.Schema, nil)
		if err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		out = append(out, parsed(tb, "jsonschemabench/"+f, res.GBNF))
	}
	res, err = grammar.FromSchema([]byte(`{"type":"object","properties":{"city":{"enum":["Zürich","São Paulo","東京","Αθήνα","€","😀 smile"]}},"required":["city"]}`), nil)
	if err != nil {
		tb.Fatal(err)
	}
	out = append(out, parsed(tb, "schema/unicode-enum", res.GBNF))
	var mcp []grammar.EnvelopeTool
	for _, tool := range testenv.CatalogTools(tb) {
		res, err := grammar.FromSchema(tool.InputSchema, nil)
		if err != nil {
			continue // the catalogs' few schemas that do not compile are grammar's tests' business
		}
		out = append(out, parsed(tb, tool.Catalog+"/"+tool.Name, res.GBNF))
		if len(mcp) < 4 && json.Valid(tool.InputSchema) {
			mcp = append(mcp, grammar.EnvelopeTool{Name: tool.Name, Schema: tool.InputSchema})
		}
	}
	for _, env := range []struct {
		name  string
		tools []grammar.EnvelopeTool
	}{{"envelope/finance", finance}, {"envelope/mcp", mcp}} {
		res, err := grammar.Envelope(env.tools, nil)
		if err != nil {
			tb.Fatalf("%s: %v", env.name, err)
		}
		out = append(out, parsed(tb, env.name, res.GBNF))
	}
	return out
}

// bruteMask is the mask by definition: every token tried on its own
// through a matcher at the same output, with no trie, slice or cache.
func bruteMask(tb testing.TB, g *gbnf.Grammar, v *Vocabulary, out []byte) Bitset {
	tb.Helper()
	at := func() *gbnf.Matcher {
		m, err := gbnf.NewMatcher(g)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := m.Write(out); err != nil {
			tb.Fatalf("the output %q no longer matches: %v", out, err)
		}
		return m
	}
	m := at()
	b := NewBitset(v.Len())
	for id := range v.Len() {
		p := v.Piece(id)
		switch {
		case v.Kind(id) == KindEnd:
			if m.Accepts() {
				b.Set(id)
			}
		case v.Kind(id) == KindControl, len(p) == 0, bytes.IndexByte(p, 0) >= 0:
		default:
			mk := m.Mark()
			if _, err := m.Write(p); err == nil {
				b.Set(id)
			}
			if !m.Rewind(mk) {
				m = at()
			}
		}
	}
	return b
}

// walkAndCompare generates walks random outputs of g token by token,
// picking among the tokens its own mask allows (structural tokens more
// often, so that walks leave strings), and checks at every step that the
// mask equals bruteMask. It returns the steps checked.
func walkAndCompare(t *testing.T, ng namedGrammar, v *Vocabulary, opts *Options, rng *rand.Rand, walks, maxSteps int) int {
	t.Helper()
	e, err := NewEngine(ng.g, v, opts)
	if err != nil {
		t.Fatal(err)
	}
	s := e.NewSession()
	got := NewBitset(v.Len())
	steps := 0
	for w := 0; w < walks; w++ {
		s.Reset()
		for step := 0; step < maxSteps; step++ {
			s.Fill(got)
			steps++
			want := bruteMask(t, ng.g, v, s.Output())
			if !slices.Equal(got, want) {
				t.Fatalf("%s after %q: mask differs from brute force: %s", ng.name, s.Output(), diff(v, got, want))
			}
			id, ok := pick(v, got, rng)
			if !ok {
				break // nothing allowed: the grammar is complete and v has no end token, or a dead end
			}
			if err := s.Accept(id); err != nil {
				t.Fatalf("%s after %q: Accept(%d %q) of an allowed token = %v", ng.name, s.Output(), id, v.Piece(id), err)
			}
			if s.Ended() {
				break
			}
		}
	}
	return steps
}

func diff(v *Vocabulary, got, want Bitset) string {
	var extra, missing []string
	for id := range v.Len() {
		switch {
		case got.Has(id) && !want.Has(id):
			extra = append(extra, fmt.Sprintf("%d %q", id, v.Piece(id)))
		case !got.Has(id) && want.Has(id):
			missing = append(missing, fmt.Sprintf("%d %q", id, v.Piece(id)))
		}
	}
	clip := func(s []string) []string { return s[:min(len(s), 8)] }
	return fmt.Sprintf("%d extra %q, %d missing %q", len(extra), clip(extra), len(missing), clip(missing))
}

// pick chooses an allowed token: the end token half the time it is
// allowed, else a token with JSON punctuation or a digit one time in two,
// else any.
func pick(v *Vocabulary, allowed Bitset, rng *rand.Rand) (int, bool) {
	return masktest.Pick(v.Len(), allowed.Has, func(id int) masktest.Token { return token(v, id) }, rng)
}

// TestMaskEqualsBruteForce is the differential test: over every grammar
// toolgate compiles for the finance tools and the real MCP catalogs, and
// turn envelopes, random walks whose mask at every step must equal the
// brute-force mask, token for token, with a synthesized 3,000-token
// vocabulary (byte tokens, split UTF-8, control, end and empty tokens).
func TestMaskEqualsBruteForce(t *testing.T) {
	v := synthVocab(t, 1, 3000)
	grammars := toolgateGrammars(t)
	rng := rand.New(rand.NewPCG(3, 4))
	steps := 0
	for i, ng := range grammars {
		t.Run(ng.name, func(t *testing.T) {
			walks, maxSteps := 2, 40
			if testing.Short() && i%8 != 0 {
				t.Skip("-short: one grammar in eight")
			}
			if testenv.Race {
				walks, maxSteps = 1, 25
			}
			for _, vr := range variants {
				if vr.opts != nil && i%4 != 0 && !strings.HasPrefix(ng.name, "envelope/") {
					continue // the variants on a quarter of the grammars
				}
				steps += walkAndCompare(t, ng, v, vr.opts, rng, walks, maxSteps)
			}
		})
	}
	t.Logf("%d grammars, %d steps compared", len(grammars), steps)
}

// TestMaskEqualsBruteForceTinyLlama is the same over TinyLlama's real
// 32,000-token vocabulary, on the envelopes, the finance tools and
// GitHub's create_issue.
func TestMaskEqualsBruteForceTinyLlama(t *testing.T) {
	if testing.Short() {
		t.Skip("brute force over 32k tokens per step")
	}
	v := readLiveVocab(t)
	rng := rand.New(rand.NewPCG(5, 6))
	steps := 0
	for _, ng := range toolgateGrammars(t) {
		if !strings.HasPrefix(ng.name, "envelope/") && !strings.HasPrefix(ng.name, "finance/") && ng.name != "github/create_issue" {
			continue
		}
		t.Run(ng.name, func(t *testing.T) {
			steps += walkAndCompare(t, ng, v, nil, rng, 1, 30)
		})
	}
	t.Logf("%d steps compared", steps)
}

// FuzzMaskEqualsBruteForce: for any grammar and vocabulary (tokens are
// the input's pieces between 0xFF bytes, the last one an end token), the
// mask equals the brute-force mask at the start and after each of the
// first allowed tokens. With -fuzz it searches for a disagreement.
func FuzzMaskEqualsBruteForce(f *testing.F) {
	f.Add(`root ::= "\"" [^"\\\x00-\x1F]{0,4} "\""`, []byte("\"\xffa\xffab\xffabcd\xffabcde\xff\"\xff\\\xffa\"\xff\xc3\xff\xa9\xffé\xff"), uint8(3))
	f.Add(`root ::= ("ab" | "abc") [x-z]*`, []byte("a\xffab\xffabc\xffbc\xffx\xffxyz\xff"), uint8(0))
	f.Add(`root ::= [^a]* "a"`, []byte("\xe4\xb8\xff\xad\xff中\xffa\xffba\xff"), uint8(7))
	f.Add(`root ::= "\"" [^"\\\x00-\x1F]+ "@" [^"\\\x00-\x1F]+ "\""`, []byte("\"\xffa\xffab\xff@\xffa@\xff@b\xffa@b\xff\"a\xffb\"\xff\xc3\xff\xa9\xffé@\xff"), uint8(5))
	// duplicate pieces (a byte token and a text token of the same
	// bytes, as SentencePiece vocabularies have), control characters,
	// a NUL, an empty token, pieces of a code point
	f.Add(`root ::= "\"" [^"\\\x00-\x1F]* "\"" "\n"?`, []byte("\"\xffa\xffa\xff\x01\xff\t\xffa\x1b\xff\"a\xff\"a\xff\x00\xff\xff\xe2\xff\x80\xa8\xff\xe2\x80\xff\n\xff\"\n\xff"), uint8(9))
	f.Fuzz(func(t *testing.T, src string, vocab []byte, seed uint8) {
		g, err := gbnf.Parse(src)
		if err != nil || len(src) > 2000 {
			return
		}
		parts := bytes.Split(vocab, []byte{0xFF})
		if len(parts) > 300 {
			return
		}
		kinds := make([]Kind, len(parts))
		kinds[len(kinds)-1] = KindEnd
		v, err := NewVocabulary(parts, kinds)
		if err != nil {
			t.Fatal(err)
		}
		for i, opts := range []*Options{nil, {NoSlices: true}} {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				e, err := NewEngine(g, v, opts)
				if err != nil {
					t.Fatal(err)
				}
				s := e.NewSession()
				got := NewBitset(v.Len())
				rng := rand.New(rand.NewPCG(uint64(seed), 1))
				for step := 0; step < 8; step++ {
					s.Fill(got)
					if want := bruteMask(t, g, v, s.Output()); !slices.Equal(got, want) {
						t.Fatalf("after %q: %s", s.Output(), diff(v, got, want))
					}
					id, ok := pick(v, got, rng)
					if !ok || s.Accept(id) != nil || s.Ended() {
						break
					}
				}
			})
		}
	})
}
