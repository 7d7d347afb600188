package mask

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/toolgate/toolgate/grammar"
	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/internal/jsonschema"
	"github.com/toolgate/toolgate/internal/testenv"
)

// unseenSchema is a schema nobody here wrote, from JSONSchemaBench or the
// official JSON-Schema-Test-Suite, compiled without a relaxation, with
// the suite's valid instances as their files write them.
type unseenSchema struct {
	name   string
	schema []byte
	g      *gbnf.Grammar
	v      *jsonschema.Schema
	valid  []json.RawMessage
}

// unseenSchemas returns every stride-th schema of JSONSchemaBench (files
// in name order) and of the test suite's draft2020-12 groups that
// [grammar.FromSchema] compiles (opts) without a relaxation and the
// gateway's validator compiles.
func unseenSchemas(tb testing.TB, stride int, opts *grammar.Options) []unseenSchema {
	tb.Helper()
	type raw struct {
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"schema"`
		Tests       []struct {
			Data  json.RawMessage `json:"data"`
			Valid bool            `json:"valid"`
		} `json:"tests"`
	}
	var groups []raw
	var names []string
	bench, _ := filepath.Glob(filepath.Join(testenv.Shared(tb, "datasets/jsonschemabench/maskbench"), "*", "*.json"))
	sort.Strings(bench)
	for i, f := range bench {
		if i%stride != 0 {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var r raw
		if err := json.Unmarshal(data, &r); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		groups = append(groups, r)
		names = append(names, filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f))
	}
	suite, _ := filepath.Glob(filepath.Join(testenv.Shared(tb, "datasets/json-schema-test-suite/tests/draft2020-12"), "*.json"))
	sort.Strings(suite)
	k := 0
	for _, f := range suite {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var rs []raw
		if err := json.Unmarshal(data, &rs); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		for _, r := range rs {
			if k++; k%stride != 0 {
				continue
			}
			groups = append(groups, r)
			names = append(names, "suite/"+filepath.Base(f)+": "+r.Description)
		}
	}
	var out []unseenSchema
	for i, r := range groups {
		res, err := grammar.FromSchema(r.Schema, opts)
		if err != nil || len(res.Relaxations) > 0 {
			continue
		}
		g, err := gbnf.Parse(res.GBNF)
		if err != nil {
			tb.Fatalf("%s: the compiled grammar does not parse: %v", names[i], err)
		}
		doc, err := jsonschema.ParseDocument(r.Schema)
		if err != nil {
			continue
		}
		v, err := jsonschema.Compile(doc, &jsonschema.Options{AssertFormat: true, CloseObjects: true})
		if err != nil {
			continue
		}
		us := unseenSchema{name: names[i], schema: r.Schema, g: g, v: v}
		for _, x := range r.Tests {
			if x.Valid {
				us.valid = append(us.valid, x.Data)
			}
		}
		out = append(out, us)
	}
	return out
}

// light reports whether the tests here run a smaller sample: with -short
// and under the race detector (the CI runs every package with -race).
func light() bool { return testing.Short() || testenv.Race }

// realVocab is a real model vocabulary, with its own tokenizer where the
// test has one (tiktoken's BPE for cl100k and o200k).
type realVocab struct {
	name   string
	v      *Vocabulary
	encode func(string) []int // nil: none
	end    int
	// control and structural (JSON punctuation or digits) tokens, for the
	// walks' checks and choices
	control, structural Bitset
}

func newRealVocab(name string, v *Vocabulary, encode func(string) []int) realVocab {
	rv := realVocab{name: name, v: v, encode: encode, end: -1, control: NewBitset(v.Len()), structural: NewBitset(v.Len())}
	for id := range v.Len() {
		switch {
		case v.Kind(id) == KindEnd && rv.end < 0:
			rv.end = id
		case v.Kind(id) == KindControl:
			rv.control.Set(id)
		case bytes.ContainsAny(v.Piece(id), "\"{}[],:0123456789"):
			rv.structural.Set(id)
		}
	}
	return rv
}

// pick chooses the walk's next token as masktest.Pick does (the end when
// allowed, half the time; else a structural token half the time; else
// any), by words of the sets so that a 200k vocabulary costs microseconds.
func (rv realVocab) pick(allowed Bitset, rng *rand.Rand) (int, bool) {
	hasEnd := allowed.Has(rv.end)
	if hasEnd && rng.IntN(2) == 0 {
		return rv.end, true
	}
	// nth returns the n-th id (from 0) set in allowed and in also (nil:
	// any), the end token left out.
	count := func(also Bitset) int {
		n := 0
		for w, word := range allowed {
			if also != nil {
				word &= also[w]
			}
			n += bits.OnesCount64(word)
		}
		if hasEnd && (also == nil || also.Has(rv.end)) {
			n--
		}
		return n
	}
	nth := func(also Bitset, n int) int {
		for w, word := range allowed {
			if also != nil {
				word &= also[w]
			}
			for ; word != 0; word &= word - 1 {
				if id := w*64 + bits.TrailingZeros64(word); id != rv.end {
					if n == 0 {
						return id
					}
					n--
				}
			}
		}
		return -1
	}
	if n := count(rv.structural); n > 0 && rng.IntN(2) == 0 {
		return nth(rv.structural, rng.IntN(n)), true
	}
	if n := count(nil); n > 0 {
		return nth(nil, rng.IntN(n)), true
	}
	return rv.end, hasEnd
}

var (
	realVocabsOnce sync.Once
	realVocabsList []realVocab
)

// realVocabs returns TinyLlama's 32k SentencePiece vocabulary (when the
// model file is present) and OpenAI's byte-level BPE cl100k_base and
// o200k_base, each with its end token, built once per test binary.
func realVocabs(tb testing.TB) []realVocab {
	tb.Helper()
	realVocabsOnce.Do(func() {
		if p := liveModelPath(); p != "" {
			f, err := os.Open(p)
			if err == nil {
				v, err := ReadGGUF(f)
				f.Close()
				if err == nil {
					realVocabsList = append(realVocabsList, newRealVocab("tinyllama", v, nil))
				}
			}
		}
		tiktoken.SetBpeLoader(loader.NewOfflineLoader())
		for _, enc := range []string{"cl100k_base", "o200k_base"} {
			v := tiktokenVocab(tb, enc+".tiktoken")
			tk, err := tiktoken.GetEncoding(enc)
			if err != nil {
				tb.Fatal(err)
			}
			realVocabsList = append(realVocabsList, newRealVocab(strings.TrimSuffix(enc, "_base"), v,
				func(s string) []int { return tk.EncodeOrdinary(s) }))
		}
	})
	if len(realVocabsList) == 0 {
		tb.Fatal("no vocabulary")
	}
	return realVocabsList
}

// TestUnseenSchemasWalk walks random generations token by token over real
// vocabularies for schemas nobody here wrote (a seeded sample of
// JSONSchemaBench and the test suite), in both whitespace modes: at every
// step the mask must allow some token (no dead end before the value is
// complete), never a control token, and the end token exactly when the
// output is complete; every finished output must be JSON the gateway's
// validator accepts.
func TestUnseenSchemasWalk(t *testing.T) {
	stride, walks, maxSteps := 40, 2, 200
	if light() {
		stride, walks = 160, 1
	}
	rng := rand.New(rand.NewPCG(7, 8))
	vocabs := realVocabs(t)
	finished, unfinished, steps := 0, 0, 0
	for _, compact := range []bool{false, true} {
		schemas := unseenSchemas(t, stride, &grammar.Options{Compact: compact})
		for _, us := range schemas {
			for _, rv := range vocabs {
				t.Run(fmt.Sprintf("%s/compact=%v/%s", rv.name, compact, us.name), func(t *testing.T) {
					e, err := NewEngine(us.g, rv.v, nil)
					if err != nil {
						t.Fatal(err)
					}
					s := e.NewSession()
					allowed := NewBitset(rv.v.Len())
					for range walks {
						s.Reset()
						n, done := walkUnseen(t, s, rv, allowed, rng, maxSteps)
						steps += n
						if !done {
							unfinished++
							continue
						}
						finished++
						checkValid(t, us, s.Output())
					}
				})
			}
		}
	}
	t.Logf("%d outputs finished and valid, %d cut at %d tokens, %d steps", finished, unfinished, maxSteps, steps)
}

// walkUnseen runs one walk of at most maxSteps tokens, checking each mask;
// done reports that the end token was accepted.
func walkUnseen(t *testing.T, s *Session, rv realVocab, allowed Bitset, rng *rand.Rand, maxSteps int) (steps int, done bool) {
	t.Helper()
	for steps = 0; steps < maxSteps; steps++ {
		s.Fill(allowed)
		if c := allowed.Count(); c == 0 {
			t.Fatalf("dead end after %q: no token allowed and the output is not complete", s.Output())
		}
		if got, want := allowed.Has(rv.end), s.Complete(); got != want {
			t.Fatalf("after %q: end token allowed = %v, complete = %v", s.Output(), got, want)
		}
		for w, word := range allowed {
			if c := word & rv.control[w]; c != 0 {
				id := w*64 + bits.TrailingZeros64(c)
				t.Fatalf("after %q: control token %d %q allowed", s.Output(), id, rv.v.Piece(id))
			}
		}
		id, ok := rv.pick(allowed, rng)
		if !ok {
			t.Fatalf("after %q: pick found nothing in a non-empty mask", s.Output())
		}
		if err := s.Accept(id); err != nil {
			t.Fatalf("after %q: Accept(%d %q) of an allowed token: %v", s.Output(), id, rv.v.Piece(id), err)
		}
		if s.Ended() {
			return steps + 1, true
		}
	}
	return steps, false
}

// checkValid requires out to be one JSON value that us's validator
// accepts.
func checkValid(t *testing.T, us unseenSchema, out []byte) {
	t.Helper()
	inst, err := jsonschema.ParseDocument(out)
	if err != nil {
		if strings.Contains(err.Error(), "duplicate member") {
			return // a name a pattern admits is not tracked (grammar's documented limit)
		}
		t.Fatalf("%.300s: the mask let %q through, not JSON: %v", us.schema, out, err)
	}
	if vs, err := us.v.Validate(inst, time.Time{}); err != nil || len(vs) > 0 {
		t.Fatalf("%.300s: the mask let %q through, the validator refuses it: %v %v", us.schema, out, vs, err)
	}
}

// spaced rewrites compact JSON with a space after each comma and colon
// outside strings, as most models (and Python's json.dumps) write it.
func spaced(compact []byte) []byte {
	var b bytes.Buffer
	in := false
	for i := 0; i < len(compact); i++ {
		c := compact[i]
		b.WriteByte(c)
		switch {
		case in && c == '\\':
			i++
			b.WriteByte(compact[i])
		case c == '"':
			in = !in
		case !in && (c == ',' || c == ':'):
			b.WriteByte(' ')
		}
	}
	return b.Bytes()
}

// greedy tokenizes text by the longest textual piece of v at each
// position; false when some byte has no token.
func greedy(v *Vocabulary, byPiece map[string]int, text []byte) ([]int, bool) {
	var ids []int
	for i := 0; i < len(text); {
		n := min(len(text)-i, v.maxLen)
		for ; n > 0; n-- {
			if id, ok := byPiece[string(text[i:i+n])]; ok {
				ids = append(ids, id)
				break
			}
		}
		if n == 0 {
			return nil, false
		}
		i += n
	}
	return ids, true
}

// piecesOf maps each textual piece of v to its lowest id.
func piecesOf(v *Vocabulary) map[string]int {
	m := make(map[string]int, v.Len())
	for id := v.Len() - 1; id >= 0; id-- {
		if v.textual(id) {
			m[string(v.Piece(id))] = id
		}
	}
	return m
}

// TestUnseenInstancesPass is the converse: every valid instance of the
// sampled schemas that the grammar accepts as text (written compactly or
// with a space after commas and colons; the grammar wants declaration
// order, which not every file keeps) must get through the mask token by
// token, however it is tokenized: by the vocabulary's own BPE where the
// test has it, by the longest piece, and byte by byte; then the end token.
func TestUnseenInstancesPass(t *testing.T) {
	if testenv.Race {
		// One goroutine, nothing for the detector; the full trie walks
		// inside pattern strings take minutes under it.
		t.Skip("-race")
	}
	stride := 30
	if light() {
		stride = 240
	}
	schemas := unseenSchemas(t, stride, nil)
	checked := 0
	for _, rv := range realVocabs(t) {
		byPiece := piecesOf(rv.v)
		for _, us := range schemas {
			t.Run(rv.name+"/"+us.name, func(t *testing.T) {
				e, err := NewEngine(us.g, rv.v, nil)
				if err != nil {
					t.Fatal(err)
				}
				s := e.NewSession()
				for _, data := range us.valid {
					var c bytes.Buffer
					if json.Compact(&c, data) != nil {
						continue
					}
					for _, text := range [][]byte{c.Bytes(), spaced(c.Bytes())} {
						if ok, _ := us.g.Match(text); !ok {
							continue
						}
						checked += passTokens(t, s, rv, byPiece, text)
					}
				}
			})
		}
	}
	t.Logf("%d schemas, %d tokenizations of valid instances passed", len(schemas), checked)
}

// passTokens feeds text to s (reset first) in each way the test can
// tokenize it and fails unless the mask allows every token in turn and
// then the end token; it returns the number of ways tried.
func passTokens(t *testing.T, s *Session, rv realVocab, byPiece map[string]int, text []byte) int {
	t.Helper()
	ways := map[string][]int{}
	if rv.encode != nil {
		ways["bpe"] = rv.encode(string(text))
	}
	if ids, ok := greedy(rv.v, byPiece, text); ok {
		ways["longest"] = ids
	}
	var bytewise []int
	for _, b := range text {
		if id, ok := byPiece[string([]byte{b})]; ok {
			bytewise = append(bytewise, id)
		}
	}
	if len(bytewise) == len(text) {
		ways["bytes"] = bytewise
	}
	allowed := NewBitset(rv.v.Len())
	for _, way := range []string{"bpe", "longest", "bytes"} {
		ids, ok := ways[way]
		if !ok {
			continue
		}
		t.Run(way, func(t *testing.T) {
			s.Reset()
			for i, id := range ids {
				s.Fill(allowed)
				if !allowed.Has(id) {
					t.Fatalf("%s tokens of %q: token %d (%d %q) refused after %q", way, text, i, id, rv.v.Piece(id), s.Output())
				}
				if err := s.Accept(id); err != nil {
					t.Fatalf("%s tokens of %q: Accept(%d): %v", way, text, id, err)
				}
			}
			s.Fill(allowed)
			if !allowed.Has(rv.end) {
				t.Fatalf("%s tokens of %q: end token refused at the end", way, text)
			}
		})
	}
	return len(ways)
}

// TestStraddlingTokens feeds values whose tokens straddle what the
// grammar keeps apart: a string's closing quote joined with a comma, a
// brace or a colon, leading spaces, escapes (\" \\ \n \u00e9, a
// surrogate pair), multi-byte code points split over byte-level tokens,
// a string at its maxLength; by each vocabulary's own BPE, the longest
// piece and byte by byte (TinyLlama's bytes are its <0xXX> tokens), each
// followed by the end token.
func TestStraddlingTokens(t *testing.T) {
	schema := `{"type":"object","properties":{"s":{"type":"string"},"t":{"type":"string","maxLength":10},"n":{"type":"number"},"k":{"type":"array","items":{"type":"string"}}},"required":["s","t"]}`
	texts := []string{
		`{"s": "a\"b\\c\n\u00e9\ud83d\ude00 Jöhn — 日本語のテキスト 😀🤖", "t": "Привет мир", "n": -1.5e3, "k": ["", "x", "\"", "\\"]}`,
		`{"s":"","t":"","k":[]}`,
		`{"s":"\"\",\"t\":\"","t":"0123456789","n":0}`,
		"{\n  \"s\": \"   leading spaces\",\n  \"t\": \" \"\n}",
	}
	if light() {
		texts = texts[:2]
	}
	for _, compact := range []bool{false, true} {
		res, err := grammar.FromSchema([]byte(schema), &grammar.Options{Compact: compact})
		if err != nil {
			t.Fatal(err)
		}
		g, err := gbnf.Parse(res.GBNF)
		if err != nil {
			t.Fatal(err)
		}
		for _, rv := range realVocabs(t) {
			byPiece := piecesOf(rv.v)
			e, err := NewEngine(g, rv.v, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, text := range texts {
				if ok, _ := g.Match([]byte(text)); !ok {
					if !compact {
						t.Fatalf("the grammar refuses %q", text)
					}
					continue // spaced texts in the compact grammar
				}
				t.Run(fmt.Sprintf("%s/compact=%v/%d", rv.name, compact, i), func(t *testing.T) {
					if n := passTokens(t, e.NewSession(), rv, byPiece, []byte(text)); n < 2 {
						t.Fatalf("%d ways to tokenize %q, want at least 2", n, text)
					}
				})
			}
		}
	}
}

// TestUnseenEnvelopeWalk walks turn envelopes (what the agent compiles
// for a shortlist) over unseen tool schemas, four at a time, with real
// vocabularies and the answer branch removed so that walks call tools: no
// dead end, and each finished call's arguments must pass the chosen
// tool's validator.
func TestUnseenEnvelopeWalk(t *testing.T) {
	stride := 40
	if light() {
		stride = 160
	}
	schemas := unseenSchemas(t, stride, nil)
	rng := rand.New(rand.NewPCG(9, 10))
	calls := 0
	for i := 0; i+4 <= len(schemas); i += 4 {
		var tools []grammar.EnvelopeTool
		byName := map[string]unseenSchema{}
		for k, us := range schemas[i : i+4] {
			name := fmt.Sprintf("tool_%d", k)
			tools = append(tools, grammar.EnvelopeTool{Name: name, Schema: us.schema})
			byName[name] = us
		}
		res, err := grammar.Envelope(tools, &grammar.Options{NoAnswer: true, NoFindTools: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Excluded) > 0 {
			continue // a schema the envelope leaves out: grammar's business
		}
		g, err := gbnf.Parse(res.GBNF)
		if err != nil {
			t.Fatal(err)
		}
		for _, rv := range realVocabs(t) {
			t.Run(fmt.Sprintf("%s/%d", rv.name, i/4), func(t *testing.T) {
				e, err := NewEngine(g, rv.v, nil)
				if err != nil {
					t.Fatal(err)
				}
				s := e.NewSession()
				if _, done := walkUnseen(t, s, rv, NewBitset(rv.v.Len()), rng, 300); !done {
					return
				}
				var call struct {
					Tool      string          `json:"tool"`
					Arguments json.RawMessage `json:"arguments"`
				}
				if err := json.Unmarshal(s.Output(), &call); err != nil {
					t.Fatalf("the mask let %q through, not JSON: %v", s.Output(), err)
				}
				us, ok := byName[call.Tool]
				if !ok {
					t.Fatalf("the mask let %q through: no tool %q", s.Output(), call.Tool)
				}
				calls++
				checkValid(t, us, call.Arguments)
			})
		}
	}
	t.Logf("%d calls finished and valid", calls)
}
