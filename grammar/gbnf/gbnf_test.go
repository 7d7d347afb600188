package gbnf

import (
	"encoding/json"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/gbnfcheck"
	"github.com/toolgate/toolgate/internal/testenv"
)

// gbnfAgreementGrammars are grammars from gbnf-check's README and self-test
// (../shared/tools/gbnfcheck) that are not already under testdata/gbnf.
var gbnfAgreementGrammars = map[string]string{
	"readme-repeat": `root ::= "a"{2,5}`,
	"readme-mixed":  `root ::= "x"{3} "-" [0-9]{2,} ( "xy" ){0,2} "z"{ 1 , 2 }`,
	"readme-object": `root ::= "{" ws "\"name\"" ws ":" ws str ( "," ws "\"tags\"" ws ":" ws "[" ws ( str ( "," ws str )* )? "]" ws )? "}"
str ::= "\"" [^"\\]* "\"" ws
ws ::= [ \t\n]*`,
	"readme-negated": `root ::= [^abc] [^a-z0-9 ] [^"\\\x00-\x1F] [^\x00-\x7F] [^\u0041]`,
	"readme-ranges":  `root ::= [α-ω]+ "|" [\u00e0-\u00ff]+ "|" [-a]+ [a-]+ [\]\[]+ "|" .`,
	"top-object-json": `root    ::= ws object
value   ::= ( object | array | string | number | "true" | "false" | "null" ) ws
object  ::= "{" ws ( member ( "," ws member )* )? "}" ws
member  ::= string ws ":" ws value
array   ::= "[" ws ( value ( "," ws value )* )? "]" ws
string  ::= "\"" ( [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\""
number  ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?
ws      ::= [ \t\n\r]*`,
	"ambiguous": `root ::= x+ "!"
x ::= "a" | "a" "a" | "aa" | [a-b]`,
}

// gbnfAgreementCorpus returns every grammar the agreement tests use, by name.
func gbnfAgreementCorpus(t *testing.T) map[string]string {
	corpus := map[string]string{}
	for k, v := range gbnfAgreementGrammars {
		corpus[k] = v
	}
	files, _ := filepath.Glob("testdata/gbnf/*.gbnf")
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		corpus[filepath.Base(f)] = string(src)
	}
	for _, tc := range gbnfParseOKCases {
		corpus["ok: "+tc.name] = tc.src
	}
	for _, tc := range gbnfMatchCases {
		if !strings.HasPrefix(tc.grammar, "@") {
			corpus["match: "+tc.name] = tc.grammar
		}
	}
	return corpus
}

// TestParseAgreesWithLlama: every grammar Parse accepts, llama.cpp accepts;
// every grammar of the error table that is marked as refused by llama.cpp,
// llama.cpp refuses.
func TestParseAgreesWithLlama(t *testing.T) {
	gc := testenv.GBNFCheck(t)
	corpus := gbnfAgreementCorpus(t)
	for _, name := range gbnfSortedKeys(corpus) {
		src := corpus[name]
		g, err := Parse(src)
		if err != nil {
			t.Errorf("%s: Parse = %v", name, err)
			continue
		}
		for _, text := range []string{src, g.String()} {
			t.Run(text, func(t *testing.T) {
				if msg := gbnfcheck.ParseOnly(t, gc, text); msg != "" {
					t.Errorf("%s: Parse accepts it, llama.cpp does not: %s\n%s", name, msg, text)
				}
			})
		}
	}
	for _, tc := range gbnfParseErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.llama || tc.slow {
				return
			}
			if msg := gbnfcheck.ParseOnly(t, gc, tc.src); msg == "" {
				t.Errorf("%s: Parse refuses %q, llama.cpp accepts it", tc.name, tc.src)
			}
		})
	}
	// The grammars Parse deliberately refuses although llama.cpp parses
	// them: pin that llama.cpp does parse them, so the table stays honest.
	for _, tc := range gbnfParseErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.llama || tc.err == ErrTooLarge {
				return
			}
			if msg := gbnfcheck.ParseOnly(t, gc, tc.src); msg != "" {
				t.Errorf("%s: marked as accepted by llama.cpp, but it says %s", tc.name, msg)
			}
		})
	}
}

// TestMatcherAgreesWithLlama runs gbnf-check and the Matcher on the same
// inputs: sentences generated from each grammar, their prefixes and
// mutations, and the inputs of the match table. Verdict and reject offset
// must be equal, except on inputs where llama.cpp's lenient UTF-8 decoder
// accepts what strict UTF-8 refuses (overlong forms, surrogates, code points
// above U+10FFFF): those are counted and must be refused by the Matcher.
func TestMatcherAgreesWithLlama(t *testing.T) {
	gc := testenv.GBNFCheck(t)
	corpus := gbnfAgreementCorpus(t)
	extra := map[string][][]byte{}
	for _, tc := range gbnfMatchCases {
		name := "match: " + tc.name
		if n, ok := strings.CutPrefix(tc.grammar, "@"); ok {
			name = n
		}
		for _, c := range tc.cases {
			extra[name] = append(extra[name], []byte(c.input))
		}
	}
	total, lenient := 0, 0
	for _, name := range gbnfSortedKeys(corpus) {
		g := mustParseGBNF(t, corpus[name])
		inputs := append(gbnfGenerateInputs(g, gbnfSeed(name), 20, 3), extra[name]...)
		total += len(inputs)
		lenient += gbnfCompareWithLlama(t, gc, name, g, inputs)
	}
	t.Logf("%d grammars, %d inputs compared with gbnf-check; %d only differ by llama.cpp's lenient UTF-8 decoding", len(corpus), total, lenient)
}

// TestMatcherAgreesWithLlamaOnConverterOutput takes the grammars llama.cpp's
// own JSON-Schema converter (schema2gbnf) writes for real MCP tools' input
// schemas: Parse must accept every one, and the Matcher must agree with
// gbnf-check on sentences generated from each.
func TestMatcherAgreesWithLlamaOnConverterOutput(t *testing.T) {
	gc := testenv.GBNFCheck(t)
	s2g := testenv.Schema2GBNF(t)
	dir := testenv.Shared(t, "catalogs/real-mcp")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	tmp := t.TempDir()
	converted, compared := 0, 0
	for _, f := range files {
		var cat struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &cat); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tool := range cat.Tools {
			schema := filepath.Join(tmp, "schema.json")
			if err := os.WriteFile(schema, tool.InputSchema, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(s2g, schema).Output()
			if err != nil {
				continue // the converter refuses some schemas; not our grammar's business
			}
			converted++
			name := filepath.Base(f) + "/" + tool.Name
			g, err := Parse(string(out))
			if err != nil {
				t.Errorf("%s: Parse of schema2gbnf's grammar = %v\n%s", name, err, out)
				continue
			}
			inputs := gbnfGenerateInputs(g, gbnfSeed(name), 6, 2)
			compared += len(inputs)
			gbnfCompareWithLlama(t, gc, name, g, inputs)
		}
	}
	if converted < 50 {
		t.Errorf("only %d real MCP tool schemas converted; want at least 50", converted)
	}
	t.Logf("%d converter grammars parsed, %d inputs compared with gbnf-check", converted, compared)
}

// gbnfCompareWithLlama checks the Matcher against gbnf-check on inputs and
// returns how many inputs were left out for llama.cpp's lenient UTF-8.
func gbnfCompareWithLlama(t *testing.T, gc, name string, g *Grammar, inputs [][]byte) int {
	t.Helper()
	verdicts := gbnfcheck.Check(t, gc, g.String(), inputs)
	lenient := 0
	for i, in := range inputs {
		ok, off := g.Match(in)
		v := verdicts[i]
		if v.GrammarError != "" {
			t.Errorf("%s: gbnf-check refused the grammar: %s", name, v.GrammarError)
			return lenient
		}
		if gbnfStrictUTF8Error(in) != gbnfLlamaUTF8Error(in) {
			lenient++
			if ok {
				t.Errorf("%s: Match(%q) accepted invalid UTF-8", name, in)
			}
			continue
		}
		want := v.Offset
		if v.Accepted {
			want = len(in)
		}
		if ok != v.Accepted || off != want {
			t.Errorf("%s: Match(%q) = %v, %d; gbnf-check: %v, %d (%s)", name, in, ok, off, v.Accepted, want, v.Output)
		}
	}
	return lenient
}

// gbnfStrictUTF8Error returns the offset of the first invalid UTF-8 sequence
// (Go's rules), or -1.
func gbnfStrictUTF8Error(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return -1
}

// gbnfLlamaUTF8Error is unicode_cpt_from_utf8's view: lead-byte bit patterns and
// continuation bytes only.
func gbnfLlamaUTF8Error(b []byte) int {
	for i := 0; i < len(b); {
		c := b[i]
		n := 0
		switch {
		case c&0x80 == 0:
			n = 1
		case c&0x40 == 0:
			return i
		case c&0x20 == 0:
			n = 2
		case c&0x10 == 0:
			n = 3
		case c&0x08 == 0:
			n = 4
		default:
			return i
		}
		if i+n > len(b) {
			return i
		}
		for k := 1; k < n; k++ {
			if b[i+k]&0xC0 != 0x80 {
				return i
			}
		}
		i += n
	}
	return -1
}

func gbnfSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func gbnfSeed(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// gbnfGenerateInputs returns up to n sentences of g chosen at random (seeded),
// each followed by mutations: a prefix, a byte deleted, inserted or
// replaced, junk appended.
func gbnfGenerateInputs(g *Grammar, seed uint64, n, mutations int) [][]byte {
	gen := newGBNFSentenceGen(g, seed)
	var out [][]byte
	seen := map[string]bool{}
	addInput := func(b []byte) {
		if !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, b)
		}
	}
	for i := 0; i < n; i++ {
		s, ok := gen.sentence()
		if !ok {
			continue
		}
		addInput(s)
		for j := 0; j < mutations; j++ {
			addInput(gen.mutate(s))
		}
	}
	return out
}

type gbnfSentenceGen struct {
	rules map[string]*Rule
	cost  map[string]int
	rnd   *rand.Rand
	depth int
	fail  bool
	buf   []byte
}

const gbnfUnreachable = 1 << 30

func newGBNFSentenceGen(g *Grammar, seed uint64) *gbnfSentenceGen {
	s := &gbnfSentenceGen{rules: map[string]*Rule{}, cost: map[string]int{}, rnd: rand.New(rand.NewPCG(seed, 0x5EED))}
	for _, r := range g.Rules {
		s.rules[r.Name] = r
		s.cost[r.Name] = gbnfUnreachable
	}
	// the cheapest sentence of each rule, to a fixed point, so that
	// generation can always finish once it is deep enough
	for changed := true; changed; {
		changed = false
		for _, r := range g.Rules {
			if c := s.altsCost(r.Alts); c < s.cost[r.Name] {
				s.cost[r.Name] = c
				changed = true
			}
		}
	}
	return s
}

func (s *gbnfSentenceGen) altsCost(alts []Seq) int {
	best := gbnfUnreachable
	for _, seq := range alts {
		best = min(best, s.seqCost(seq))
	}
	return best
}

func (s *gbnfSentenceGen) seqCost(seq Seq) int {
	total := 0
	for _, e := range seq {
		total = min(gbnfUnreachable, total+s.exprCost(e))
	}
	return total
}

func (s *gbnfSentenceGen) exprCost(e Expr) int {
	switch e := e.(type) {
	case Literal:
		return len(e.Chars)
	case Class, Any:
		return 1
	case Ref:
		return min(gbnfUnreachable, s.cost[e.Name]+1)
	case Group:
		return min(gbnfUnreachable, s.altsCost(e.Alts)+1)
	case Repeat:
		if e.Min == 0 {
			return 0
		}
		return min(gbnfUnreachable, e.Min*s.exprCost(e.Expr))
	}
	return gbnfUnreachable // Token: text never matches it
}

func (s *gbnfSentenceGen) sentence() ([]byte, bool) {
	s.buf, s.fail, s.depth = s.buf[:0], false, 0
	s.alts(s.rules["root"].Alts)
	if s.fail || len(s.buf) > 1<<16 {
		return nil, false
	}
	return append([]byte(nil), s.buf...), true
}

func (s *gbnfSentenceGen) alts(alts []Seq) {
	var seq Seq
	if s.depth > 12 {
		best := gbnfUnreachable
		for _, a := range alts {
			if c := s.seqCost(a); c < best {
				best, seq = c, a
			}
		}
	} else {
		seq = alts[s.rnd.IntN(len(alts))]
	}
	s.depth++
	for _, e := range seq {
		s.expr(e)
	}
	s.depth--
}

var gbnfSamplePool = []rune("aZ09 _-\"\\/é😀中\n\t{}[],:.!?#~αωàÿ\u0041\x00\x1f\x7f")

func (s *gbnfSentenceGen) expr(e Expr) {
	if s.fail || len(s.buf) > 1<<16 {
		s.fail = true
		return
	}
	switch e := e.(type) {
	case Literal:
		for _, r := range e.Chars {
			s.rune(r)
		}
	case Class:
		cl := newGBNFClass(e.Negated, e.Ranges)
		if len(cl.ranges) == 0 {
			s.fail = true
			return
		}
		if e.Negated {
			for range 20 {
				if r := gbnfSamplePool[s.rnd.IntN(len(gbnfSamplePool))]; cl.has(r) {
					s.rune(r)
					return
				}
			}
		}
		rg := cl.ranges[s.rnd.IntN(len(cl.ranges))]
		hi := min(rg.Hi, rg.Lo+300)
		s.rune(rg.Lo + rune(s.rnd.IntN(int(hi-rg.Lo)+1)))
	case Any:
		s.rune(gbnfSamplePool[s.rnd.IntN(len(gbnfSamplePool))])
	case Ref:
		s.alts(s.rules[e.Name].Alts)
	case Group:
		s.alts(e.Alts)
	case Repeat:
		n := e.Min
		if s.depth <= 12 {
			extra := 3
			if e.Max != Unbounded {
				extra = min(extra, e.Max-e.Min)
			}
			n += s.rnd.IntN(extra + 1)
		}
		for range n {
			s.expr(e.Expr)
		}
	case Token:
		s.fail = true
	}
}

func (s *gbnfSentenceGen) rune(r rune) {
	if !utf8.ValidRune(r) {
		s.fail = true
		return
	}
	s.buf = utf8.AppendRune(s.buf, r)
}

var gbnfMutationBytes = []byte{'a', '"', '}', ']', ',', ' ', '\n', 0x00, 0xFF, 0xC3, 0xA9, 0xF0, 0x9F, 0x80, 0xED}

func (s *gbnfSentenceGen) mutate(in []byte) []byte {
	out := append([]byte(nil), in...)
	pos := 0
	if len(out) > 0 {
		pos = s.rnd.IntN(len(out))
	}
	b := gbnfMutationBytes[s.rnd.IntN(len(gbnfMutationBytes))]
	switch s.rnd.IntN(5) {
	case 0: // prefix
		return out[:pos]
	case 1: // delete
		if len(out) > 0 {
			return append(out[:pos], out[pos+1:]...)
		}
	case 2: // insert
		return append(out[:pos], append([]byte{b}, in[pos:]...)...)
	case 3: // replace
		if len(out) > 0 {
			out[pos] = b
		}
		return out
	}
	return append(out, b) // append junk
}
