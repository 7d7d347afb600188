package mask

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
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
	for i, id := range []int{-1, 2} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			s.Reset()
			if err := s.Accept(id); !errors.Is(err, ErrRefused) {
				t.Fatalf("Accept(%d) = %v, want ErrRefused", id, err)
			}
		})
	}
}

// TestMaskAfterCacheRebuild: a walk that meets more positions than the
// matcher's bounded caches hold (every prefix of thousands of distinct
// words is its own position) makes the matcher rebuild its caches
// mid-walk; the Session replays its output and still gives the exact mask.
func TestMaskAfterCacheRebuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	seen := map[string]bool{}
	var words []string
	for len(words) < 4000 {
		n := 4 + rng.IntN(6)
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a' + byte(rng.IntN(26))
		}
		if w := string(b); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	var src strings.Builder
	src.WriteString("root ::= (")
	for i, w := range words {
		if i > 0 {
			src.WriteString(" | ")
		}
		fmt.Fprintf(&src, "%q", w)
	}
	src.WriteString(`) "."`)
	// the vocabulary: every prefix of every word, and "." and an end token
	names := []string{".", "<eos>"}
	for _, w := range words {
		for k := 1; k <= len(w); k++ {
			if !seen["p"+w[:k]] {
				seen["p"+w[:k]] = true
				names = append(names, w[:k])
			}
		}
	}
	v := testVocab(t, names...)
	e := mustEngine(t, src.String(), v, nil)
	s := e.NewSession()
	got := NewBitset(v.Len())
	s.Fill(got)
	if want := bruteMask(t, e.g, v, nil); !slices.Equal(got, want) {
		t.Fatalf("mask at the start differs from brute force: %s", diff(v, got, want))
	}
	t.Logf("%d tokens, stats %+v", v.Len(), s.Stats())
	if s.Stats().Replays == 0 {
		t.Fatalf("Stats().Replays = 0: the walk did not outgrow the matcher's caches, the test checks nothing")
	}
	if err := s.Accept(slices.Index(names, words[0])); err != nil {
		t.Fatal(err)
	}
	s.Fill(got)
	if want := bruteMask(t, e.g, v, []byte(words[0])); !slices.Equal(got, want) {
		t.Fatalf("mask after %q differs from brute force: %s", words[0], diff(v, got, want))
	}
}

// TestEnginesShareAVocabulary: Engines over one Vocabulary, made and used
// from several goroutines at once (the trie and the class slices are built
// on first use and shared), give the masks a lone Engine gives. Run with
// -race.
func TestEnginesShareAVocabulary(t *testing.T) {
	grammars := []string{
		`root ::= "\"" [^"\\\x00-\x1F]* "\""`,
		`root ::= "{\"a\":\"" [^"\\\x00-\x1F]{0,40} "\"}"`,
		`root ::= "\"" [^"\\]* "\""`,
		`root ::= [a-z ]+ "."`,
	}
	prefixes := []string{`"the `, `{"a":"x`, `"`, `abc`}
	want := make([]Bitset, len(grammars))
	lone := synthVocab(t, 5, 2000)
	for i, src := range grammars {
		e := mustEngine(t, src, lone, nil)
		want[i] = bruteMask(t, e.g, lone, []byte(prefixes[i]))
	}
	shared := synthVocab(t, 5, 2000)
	var byteToken [256]int // the one-byte tokens synthVocab makes
	for id := range shared.Len() {
		if p := shared.Piece(id); len(p) == 1 {
			byteToken[p[0]] = id
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(grammars))
	for range 4 {
		for i, src := range grammars {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g, _ := gbnf.Parse(src)
				e, err := NewEngine(g, shared, nil)
				if err != nil {
					errs <- err.Error()
					return
				}
				s := e.NewSession()
				for _, b := range []byte(prefixes[i]) {
					if err := s.Accept(byteToken[b]); err != nil {
						errs <- err.Error()
						return
					}
				}
				got := NewBitset(shared.Len())
				s.Fill(got)
				if !slices.Equal(got, want[i]) {
					errs <- fmt.Sprintf("grammar %d: %s", i, diff(shared, got, want[i]))
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
