package gbnf

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

func TestState(t *testing.T) {
	g := mustParseGBNF(t, `root ::= ("ab" | "a" "b") "c"* "é"`)
	m, err := NewMatcher(g)
	if err != nil {
		t.Fatal(err)
	}
	start := m.State()
	m.WriteString("ab")
	ab := m.State()
	if ab == start {
		t.Fatalf("State after %q = State at the start, want different", "ab")
	}
	m.WriteString("c")
	abc := m.State()
	m.WriteString("c")
	if m.State() != abc {
		t.Errorf("State after %q != State after %q: the same position (c*) must give the same key", "abcc", "abc")
	}
	m.Advance(0xC3) // half of é
	if half := m.State(); half == abc {
		t.Errorf("State inside a code point = State before it, want different")
	}
	m.Reset()
	if m.State() != start {
		t.Errorf("State after Reset != State at the start")
	}
}

// matcherAt returns a Matcher of grammar after prefix.
func matcherAt(t *testing.T, grammar, prefix string) *Matcher {
	t.Helper()
	m, err := NewMatcher(mustParseGBNF(t, grammar))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.WriteString(prefix); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRun(t *testing.T) {
	str := Class{Negated: true, Ranges: []CharRange{{'"', '"'}, {'\\', '\\'}, {0, 0x1F}}}
	lower := Class{Ranges: []CharRange{{'a', 'z'}}}
	for _, tc := range []struct {
		name    string
		grammar string
		prefix  string
		class   Class
		limit   int
		want    int
	}{
		{"open string", `root ::= "\"" [^"\\\x00-\x1F]* "\""`, `"`, str, 40, 40},
		{"open string, a subset", `root ::= "\"" [^"\\\x00-\x1F]* "\""`, `"`, lower, 40, 40},
		{"bounded string", `root ::= "\"" [^"\\\x00-\x1F]{0,5} "\""`, `"`, str, 40, 5},
		{"bounded string, part used", `root ::= "\"" [^"\\\x00-\x1F]{0,5} "\""`, `"ab`, str, 40, 3},
		{"bounded string, limit below", `root ::= "\"" [^"\\\x00-\x1F]{0,5} "\""`, `"`, str, 2, 2},
		{"json-char with escapes", `root ::= "\"" char* "\""
char ::= [^"\\\x00-\x1F] | "\\" ["\\/bfnrt]`, `"x`, str, 16, 16},
		{"a class that splits the run", `root ::= "\"" ([a-m] "x" | [n-z] "y")* "\""`, `"`, lower, 16, 0},
		{"outside the string", `root ::= "\"" [^"\\\x00-\x1F]* "\""`, ``, str, 16, 0},
		{"after the end", `root ::= "\"" [^"\\\x00-\x1F]* "\""`, `"a"`, str, 16, 0},
		{"inside a code point", `root ::= [^"]*`, "\xC3", str, 16, 0},
		{"digits then letters", `root ::= [0-9]{3} [a-z]+`, `1`, Class{Ranges: []CharRange{{'0', '9'}}}, 16, 2},
		{"any code point", `root ::= .*`, `é`, Class{Negated: true}, 30, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := matcherAt(t, tc.grammar, tc.prefix)
			r := NewCodeRun(tc.class)
			before := m.State()
			if got := m.Run(r, tc.limit); got != tc.want {
				t.Errorf("Run(%s, %d) after %q = %d, want %d", AppendClass(nil, tc.class), tc.limit, tc.prefix, got, tc.want)
			}
			if got := m.Run(r, tc.limit); got != tc.want {
				t.Errorf("Run again (cached) = %d, want %d", got, tc.want)
			}
			if m.State() != before {
				t.Errorf("Run moved the matcher")
			}
		})
	}
}

// TestRunLoop: where every member of the class leads back to the same
// position (the body of an open string), Run knows at once that runs go
// on without end, instead of stepping through twice its limit.
func TestRunLoop(t *testing.T) {
	m := matcherAt(t, `root ::= "\"" [^"\\\x00-\x1F]* "\""`, `"`)
	r := NewCodeRun(Class{Ranges: []CharRange{{'a', 'z'}}})
	if got := m.Run(r, 3); got != 3 {
		t.Fatalf("Run(3) = %d, want 3", got)
	}
	if f := m.runs[runKey{r, m.cur}]; f.n != 0xFFFF || f.next != m.cur {
		t.Errorf("the cached fit = %+v, want at least 65535 code points, back to set %d", f, m.cur)
	}
	if got := m.Run(r, maxRunLimit); got != maxRunLimit {
		t.Errorf("Run(%d) = %d, want %[1]d", maxRunLimit, got)
	}
}

// TestRunIsSound checks Run's promise on random strings: after Run says n,
// any n code points of the class are accepted.
func TestRunIsSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	g := mustParseGBNFFile(t, "json.gbnf")
	classes := []Class{
		{Negated: true, Ranges: []CharRange{{'"', '"'}, {'\\', '\\'}, {0, 0x1F}}},
		{Ranges: []CharRange{{'a', 'z'}, {'é', 'é'}, {'中', '中'}}},
		{Ranges: []CharRange{{'0', '9'}}},
	}
	members := [][]rune{{'a', 'z', ' ', '!', 'é', '中', '😀', 0x7F}, {'a', 'q', 'é', '中'}, {'0', '5', '9'}}
	docs := []string{`{"title": "ab`, `{"n": 12`, `["x", "`, `{"k": "é中`, `{`, `"`}
	for _, doc := range docs {
		t.Run(doc, func(t *testing.T) {
			m, err := NewMatcher(g)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.WriteString(doc); err != nil {
				t.Fatalf("prefix %q: %v", doc, err)
			}
			for ci, c := range classes {
				t.Run(fmt.Sprint(ci), func(t *testing.T) {
					r := NewCodeRun(c)
					n := m.Run(r, 24)
					for trial := 0; trial < 20 && n > 0; trial++ {
						var s []byte
						for i := 0; i < n; i++ {
							s = utf8.AppendRune(s, members[ci][rng.IntN(len(members[ci]))])
						}
						mk := m.Mark()
						if k, err := m.Write(s); err != nil {
							t.Fatalf("after %q Run(class %d) = %d, but %q is refused at byte %d: %v", doc, ci, n, s, k, err)
						}
						if !m.Rewind(mk) {
							t.Fatal("Rewind failed")
						}
					}
				})
			}
		})
	}
}

func TestCodeRunSpan(t *testing.T) {
	body := NewCodeRun(Class{Negated: true, Ranges: []CharRange{{'"', '"'}, {'\\', '\\'}, {0, 0x1F}}})
	latin := NewCodeRun(Class{Ranges: []CharRange{{'a', 'z'}, {0xE0, 0xFF}}})
	for _, tc := range []struct {
		name string
		r    *CodeRun
		p    string
		n    int
		end  int
	}{
		{"ascii word", body, " the", 4, 4},
		{"a quote", body, `a"b`, 1, 1},
		{"a newline", body, "ab\n", 2, 2},
		{"whole multi-byte", body, "é中😀", 3, 9},
		{"unfinished last code point", body, "a\xE4\xB8", 2, 3},
		{"starts inside a code point", body, "\xB8a", 0, 0},
		{"overlong", body, "a\xC0\x80", 1, 1},
		{"surrogate", body, "\xED\xA0\x80", 0, 0},
		{"bad lead", body, "\xF5", 0, 0},
		{"bad continuation", body, "a\xE4a", 1, 1},
		{"empty", body, "", 0, 0},
		{"unfinished, may complete to a member", latin, "ab\xC3", 3, 3},
		{"unfinished, cannot", latin, "ab\xE4", 2, 2},
		{"not a member", latin, "aB", 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n, end := tc.r.Span([]byte(tc.p)); n != tc.n || end != tc.end {
				t.Fatalf("Span(%q) = %d, %d; want %d, %d", tc.p, n, end, tc.n, tc.end)
			}
		})
	}
}

func TestRunAllowed(t *testing.T) {
	body := NewCodeRun(Class{Negated: true, Ranges: []CharRange{{'"', '"'}, {'\\', '\\'}, {0, 0x1F}}})
	for _, tc := range []struct {
		name    string
		grammar string
		prefix  string
		n       int
		ok      bool
		has     string // bytes that must be in the union
		hasNot  string // bytes that must not
	}{
		{"string body", `root ::= "\"" ([^"\\\x00-\x1F] | "\\" ["\\/bfnrt])* "\"" "}"`, `"`, 8, true, "\"\\a \xC3", "\n\t"},
		{"bounded string", `root ::= "\"" [^"\\\x00-\x1F]{0,3} "\"" "}"`, `"`, 3, true, "\"a", "\\\n"},
		{"run too short", `root ::= "\"" [^"\\\x00-\x1F]{0,3} "\"" "}"`, `"`, 4, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMatcher(mustParseGBNF(t, tc.grammar))
			if err != nil {
				t.Fatal(err)
			}
			m.WriteString(tc.prefix)
			all, ok := m.RunAllowed(body, tc.n)
			if ok != tc.ok {
				t.Fatalf("RunAllowed(%d) ok = %v, want %v", tc.n, ok, tc.ok)
			}
			for i := 0; i < len(tc.has); i++ {
				if !all.Has(tc.has[i]) {
					t.Errorf("RunAllowed(%d) lacks %q", tc.n, tc.has[i])
				}
			}
			for i := 0; i < len(tc.hasNot); i++ {
				if all.Has(tc.hasNot[i]) {
					t.Errorf("RunAllowed(%d) has %q", tc.n, tc.hasNot[i])
				}
			}
		})
	}
}

func TestNarrow(t *testing.T) {
	str := Class{Negated: true, Ranges: []CharRange{{'"', '"'}, {'\\', '\\'}, {0, 0x1F}}}
	domain := Class{Ranges: []CharRange{{'-', '.'}, {'0', '9'}, {'A', 'Z'}, {'a', 'z'}}}
	for _, tc := range []struct {
		name    string
		grammar string
		prefix  string
		class   Class
		want    string // the narrowed class; "" when none
		run     int    // Run of the narrowed class, limit 40
	}{
		{"before the at sign", `root ::= "\"" [^"\\\x00-\x1F]+ "@" [^"\\\x00-\x1F]+ "\""`, `"a`, str, `[ -!#-?A-\[\]-\U0010FFFF]`, 40},
		{"first code point, the at sign one later", `root ::= "\"" [^"\\\x00-\x1F]+ "@" [^"\\\x00-\x1F]+ "\""`, `"`, str, `[ -!#-?A-\[\]-\U0010FFFF]`, 40},
		{"after the at sign", `root ::= "\"" [^"\\\x00-\x1F]+ "@" [^"\\\x00-\x1F]+ "\""`, `"a@b`, str, `[ -!#-?A-\[\]-\U0010FFFF]`, 40},
		{"top-level domain: the letters", `root ::= "\"" [a-zA-Z0-9.-]+ "." [a-zA-Z]{2,} "\""`, `"mail.ex`, domain, `[A-Za-z]`, 40},
		{"domain: all but the dot", `root ::= "\"" [a-zA-Z0-9.-]+ "." [a-zA-Z]{2,} "\""`, `"mail`, domain, `[-0-9A-Za-z]`, 40},
		{"bounded: the run ends", `root ::= "\"" [^"\\\x00-\x1F]{1,3} "@" "\""`, `"`, str, `[ -!#-?A-\[\]-\U0010FFFF]`, 3},
		{"a class inside the string's", `root ::= "\"" [a-z]+ ("-" [a-z]+)* "\""`, `"ab`, str, `[a-z]`, 40},
		{"nothing to narrow", `root ::= "\"" [^"\\\x00-\x1F]* "\""`, `"`, str, "", 0},
		{"outside the string", `root ::= "\"" [^"\\\x00-\x1F]* "@" "\""`, ``, str, "", 0},
		{"inside a code point", `root ::= [^"]* "@"`, "\xC3", str, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := matcherAt(t, tc.grammar, tc.prefix)
			before := m.State()
			c, ok := m.Narrow(NewCodeRun(tc.class), 40)
			got := ""
			if ok {
				got = string(AppendClass(nil, c))
			}
			if got != tc.want {
				t.Fatalf("Narrow(%s) after %q = %q, want %q", AppendClass(nil, tc.class), tc.prefix, got, tc.want)
			}
			if m.State() != before {
				t.Errorf("Narrow moved the matcher")
			}
			if ok {
				if n := m.Run(NewCodeRun(c), 40); n != tc.run {
					t.Errorf("Run(%s, 40) = %d, want %d", got, n, tc.run)
				}
			}
		})
	}
}
