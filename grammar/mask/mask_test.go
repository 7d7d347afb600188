package mask

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/grammar/gbnf"
)

// testVocab builds a vocabulary from names: "<eos>" is an end token,
// "<ctl>TEXT" a control token whose text is TEXT, anything else a text
// token with those bytes.
func testVocab(tb testing.TB, names ...string) *Vocabulary {
	tb.Helper()
	pieces := make([][]byte, len(names))
	kinds := make([]Kind, len(names))
	for i, n := range names {
		switch {
		case n == "<eos>":
			kinds[i], pieces[i] = KindEnd, []byte("</s>")
		case strings.HasPrefix(n, "<ctl>"):
			kinds[i], pieces[i] = KindControl, []byte(n[len("<ctl>"):])
		default:
			pieces[i] = []byte(n)
		}
	}
	v, err := NewVocabulary(pieces, kinds)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func mustEngine(tb testing.TB, src string, v *Vocabulary, opts *Options) *Engine {
	tb.Helper()
	g, err := gbnf.Parse(src)
	if err != nil {
		tb.Fatalf("Parse(%q) = %v", src, err)
	}
	e, err := NewEngine(g, v, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func allowedNames(v *Vocabulary, names []string, b Bitset) []string {
	var out []string
	for id := 0; id < v.Len(); id++ {
		if b.Has(id) {
			out = append(out, names[id])
		}
	}
	return out
}

var variants = []struct {
	name string
	opts *Options
}{
	{"default", nil},
	{"no slices", &Options{NoSlices: true}},
	{"no cache", &Options{CacheEntries: -1}},
}

// TestMaskContract pins what a token may be (the package documentation's
// list), on small grammars and vocabularies, under every engine variant.
func TestMaskContract(t *testing.T) {
	for _, tc := range []struct {
		name    string
		grammar string
		vocab   []string
		prefix  []string // tokens accepted first, by name
		want    []string
		sliced  bool // the default engine admits the tokens by a slice
	}{
		{"end only when complete", `root ::= "ab" | "abc"`,
			[]string{"a", "ab", "abc", "abcd", "b", "c", "<eos>"}, nil,
			[]string{"a", "ab", "abc"}, false},
		{"end after a complete sentence", `root ::= "ab" | "abc"`,
			[]string{"a", "ab", "abc", "abcd", "b", "c", "<eos>"}, []string{"ab"},
			[]string{"c", "<eos>"}, false},
		{"nothing crosses the end", `root ::= "a"`,
			[]string{"a", "ab", "a ", "<eos>"}, []string{"a"},
			[]string{"<eos>"}, false},
		{"control tokens never, whatever their text", `root ::= "<s>" | [a-z<>/]+`,
			[]string{"<ctl><s>", "<s>", "<ctl>a", "s", "<eos>"}, nil,
			[]string{"<s>", "s"}, false},
		{"empty and NUL tokens never", `root ::= [\x00-\x7F]*`,
			[]string{"", "a", "a\x00", "\x00", "<eos>"}, nil,
			[]string{"a", "<eos>"}, false},
		{"a code point split across tokens", `root ::= "é" "x"`,
			[]string{"\xC3", "\xA9", "é", "éx", "\xA9x", "\xC3\xA9x", "x", "<eos>"}, nil,
			[]string{"\xC3", "é", "éx", "\xC3\xA9x"}, false},
		{"the rest of a split code point", `root ::= "é" "x"`,
			[]string{"\xC3", "\xA9", "é", "éx", "\xA9x", "\xC3\xA9x", "x", "<eos>"}, []string{"\xC3"},
			[]string{"\xA9", "\xA9x"}, false},
		{"no end inside a code point", `root ::= "a" | "aé"`,
			[]string{"a", "\xC3", "\xA9", "<eos>"}, []string{"a", "\xC3"},
			[]string{"\xA9"}, false},
		{"invalid UTF-8 never", `root ::= [^"]*`,
			[]string{"\xC0\x80", "\xED\xA0\x80", "\xF5", "\xFF", "\x80", "ok", "\xF0\x9F\x98\x80", "<eos>"}, nil,
			[]string{"ok", "\xF0\x9F\x98\x80", "<eos>"}, false},
		{"a string body", `root ::= "\"" [^"\\\x00-\x1F]{0,4} "\""`,
			[]string{`"`, `a`, `ab`, `abc`, `abcd`, `a"`, `abc"`, `abcd"`, `\`, "\n", "<eos>"}, []string{`"`},
			[]string{`"`, `a`, `ab`, `abc`, `abcd`, `a"`, `abc"`, `abcd"`}, true},
		{"a string body near its bound", `root ::= "\"" [^"\\\x00-\x1F]{0,3} "\""`,
			[]string{`"`, `a`, `ab`, `abc`, `abcd`, `a"`, `abc"`, `abcd"`, `\`, "\n", "<eos>"}, []string{`"`},
			[]string{`"`, `a`, `ab`, `abc`, `a"`, `abc"`}, false},
		{"duplicate pieces", `root ::= "a"`,
			[]string{"a", "b", "a", "<eos>", "<eos>"}, nil,
			[]string{"a", "a"}, false},
	} {
		for _, vr := range variants {
			t.Run(tc.name+"/"+vr.name, func(t *testing.T) {
				v := testVocab(t, tc.vocab...)
				e := mustEngine(t, tc.grammar, v, vr.opts)
				s := e.NewSession()
				for _, p := range tc.prefix {
					if err := s.Accept(slices.Index(tc.vocab, p)); err != nil {
						t.Fatalf("Accept(%q) = %v", p, err)
					}
				}
				got := NewBitset(v.Len())
				for range 2 { // the second time from the cache
					s.Fill(got)
					if names := allowedNames(v, tc.vocab, got); !slices.Equal(names, tc.want) {
						t.Fatalf("Fill after %q = %q, want %q", tc.prefix, names, tc.want)
					}
				}
				if tc.sliced && vr.opts == nil && s.Stats().Sliced == 0 {
					t.Errorf("Stats().Sliced = 0, want the string body's slice used")
				}
				// Accept agrees with the mask, and a refusal changes nothing.
				for id := range tc.vocab {
					before := string(s.Output())
					err := s.Accept(id)
					if (err == nil) != got.Has(id) {
						t.Fatalf("Accept(%q) = %v, but Fill says allowed = %v", tc.vocab[id], err, got.Has(id))
					}
					if err != nil {
						if !errors.Is(err, ErrRefused) {
							t.Fatalf("Accept(%q) = %v, want ErrRefused", tc.vocab[id], err)
						}
						if string(s.Output()) != before {
							t.Fatalf("a refused Accept(%q) changed the output", tc.vocab[id])
						}
						continue
					}
					// put the session back for the next token
					s.Reset()
					for _, p := range tc.prefix {
						s.Accept(slices.Index(tc.vocab, p))
					}
				}
			})
		}
	}
}

func TestSessionEnd(t *testing.T) {
	v := testVocab(t, "a", "<eos>")
	e := mustEngine(t, `root ::= "a"`, v, nil)
	s := e.NewSession()
	if err := s.Accept(1); !errors.Is(err, ErrRefused) {
		t.Fatalf("Accept(eos) at the start = %v, want ErrRefused", err)
	}
	if err := s.Accept(0); err != nil {
		t.Fatal(err)
	}
	if !s.Complete() {
		t.Fatal("Complete() = false after the whole sentence")
	}
	if err := s.Accept(1); err != nil {
		t.Fatalf("Accept(eos) when complete = %v", err)
	}
	if !s.Ended() {
		t.Fatal("Ended() = false after the end token")
	}
	if err := s.Accept(0); !errors.Is(err, ErrFinished) {
		t.Fatalf("Accept after the end = %v, want ErrFinished", err)
	}
	got := NewBitset(v.Len())
	if s.Fill(got); got.Count() != 0 {
		t.Fatalf("Fill after the end allows %d tokens, want 0", got.Count())
	}
	for _, id := range []int{-1, 2} {
		s.Reset()
		if err := s.Accept(id); !errors.Is(err, ErrRefused) {
			t.Fatalf("Accept(%d) = %v, want ErrRefused", id, err)
		}
	}
}
