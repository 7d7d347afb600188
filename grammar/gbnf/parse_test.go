package gbnf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/golden"
)

// gbnfParseErrorCase is a grammar Parse refuses. llama says whether llama.cpp
// refuses it too (gbnf-check --parse-only exits 2): false marks the cases
// where this package is deliberately stricter (see gbnf.go), and slow marks
// one llama.cpp needs seconds of memory exhaustion to refuse.
type gbnfParseErrorCase struct {
	name   string
	src    string
	err    error
	offset int
	msg    string // a substring of the message
	llama  bool
	slow   bool
}

var gbnfParseErrorCases = []gbnfParseErrorCase{
	{name: "no ::=", src: `root = "a"`, err: ErrSyntax, offset: 5, msg: "expecting ::=", llama: true},
	{name: "underscore in name", src: `root-rule_x ::= "a"`, err: ErrSyntax, offset: 9, msg: "expecting ::=", llama: true},
	{name: "newline ends rule", src: "root ::= \"a\"\n  | \"b\"\n", err: ErrSyntax, offset: 15, msg: "expecting name", llama: true},
	{name: "newline before ::=", src: "root\n::= \"a\"", err: ErrSyntax, offset: 4, msg: "expecting ::=", llama: true},
	{name: "unclosed group", src: `root ::= ("a"`, err: ErrSyntax, offset: 13, msg: "expecting ')'", llama: true},
	{name: "unclosed group at newline", src: "root ::= (\"a\"\n", err: ErrSyntax, offset: 14, msg: "expecting ')'", llama: true},
	{name: "stray paren", src: `root ::= "a" )`, err: ErrSyntax, offset: 13, msg: "expecting newline or end", llama: true},
	{name: "unknown escape", src: `root ::= "\q"`, err: ErrSyntax, offset: 10, msg: "unknown escape", llama: true},
	{name: "escaped dash", src: `root ::= [a\-z]`, err: ErrSyntax, offset: 11, msg: "unknown escape", llama: true},
	{name: "short hex", src: `root ::= "\x4"`, err: ErrSyntax, offset: 12, msg: "expecting 2 hex chars", llama: true},
	{name: "short u", src: `root ::= [\u12]`, err: ErrSyntax, offset: 12, msg: "expecting 4 hex chars", llama: true},
	{name: "unterminated literal", src: `root ::= "abc`, err: ErrSyntax, offset: 9, msg: "unexpected end of input", llama: true},
	{name: "unterminated class", src: `root ::= [abc`, err: ErrSyntax, offset: 9, msg: "unexpected end of input", llama: true},
	{name: "unterminated range", src: `root ::= [a-`, err: ErrSyntax, offset: 9, msg: "unexpected end of input", llama: true},
	{name: "backslash at end", src: `root ::= "\`, err: ErrSyntax, offset: 10, msg: "unknown escape", llama: true},
	{name: "token needs vocab", src: `root ::= <hello>`, err: ErrSyntax, offset: 9, msg: "no vocab", llama: true},
	{name: "not token", src: `root ::= !a`, err: ErrSyntax, offset: 10, msg: "expecting '<'", llama: true},
	{name: "token bracket", src: `root ::= <[12`, err: ErrSyntax, offset: 13, msg: "expecting ']'", llama: true},
	{name: "token angle", src: `root ::= <[12]`, err: ErrSyntax, offset: 14, msg: "expecting '>'", llama: true},
	{name: "token no id", src: `root ::= <[]>`, err: ErrSyntax, offset: 11, msg: "expecting integer", llama: true},
	{name: "open lower bound", src: `root ::= "a"{,3}`, err: ErrSyntax, offset: 13, msg: "expecting an int", llama: true},
	{name: "unclosed count", src: `root ::= "a"{2,5`, err: ErrSyntax, offset: 16, msg: "expecting '}'", llama: true},
	{name: "bad count separator", src: `root ::= "a"{2;5}`, err: ErrSyntax, offset: 14, msg: "expecting ','", llama: true},
	{name: "count over limit", src: `root ::= "a"{2001}`, err: ErrRepetition, offset: 12, msg: "exceeds sane defaults", llama: true},
	{name: "max over limit", src: `root ::= "a"{0,2001}`, err: ErrRepetition, offset: 12, msg: "exceeds sane defaults", llama: true},
	{name: "count without item", src: `root ::= {2}`, err: ErrSyntax, offset: 12, msg: "expecting preceding item", llama: true},
	{name: "star without item", src: `root ::= *`, err: ErrSyntax, offset: 10, msg: "expecting preceding item", llama: true},
	{name: "star after bar", src: `root ::= "a" | +`, err: ErrSyntax, offset: 16, msg: "expecting preceding item", llama: true},
	{name: "star on empty literal", src: `root ::= "a" ""*`, err: ErrSyntax, offset: 16, msg: "expecting preceding item", llama: true},
	{name: "star on empty class", src: `root ::= "a" []?`, err: ErrSyntax, offset: 16, msg: "expecting preceding item", llama: true},
	{name: "star on zero count", src: `root ::= "a"{0}*`, err: ErrSyntax, offset: 16, msg: "expecting preceding item", llama: true},
	{name: "undefined rule", src: "root ::= \"a\" foo\n", err: ErrUndefinedRule, offset: 13, msg: "'foo'", llama: true},
	{name: "undefined in group", src: "root ::= (\"a\" | bar) baz\nbaz ::= \"b\"\n", err: ErrUndefinedRule, offset: 16, msg: "'bar'", llama: true},
	{name: "undefined in replaced rule's group", src: "root ::= (foo)\nroot ::= \"a\"\n", err: ErrUndefinedRule, offset: 10, msg: "'foo'", llama: true},
	{name: "missing root", src: "a ::= \"x\"\n", err: ErrNoRoot, offset: 0, llama: true},
	{name: "byte order mark", src: "\uFEFFroot ::= \"a\"\r\n", err: ErrSyntax, offset: 0, msg: "byte order mark", llama: true},
	{name: "byte order mark after a comment", src: "# g\n\uFEFFroot ::= \"a\"\n", err: ErrSyntax, offset: 4, msg: "byte order mark", llama: true},
	{name: "empty grammar", src: "", err: ErrEmptyGrammar, offset: 0, llama: true},
	{name: "only comments", src: "# nothing here\n\n", err: ErrEmptyGrammar, offset: 16, llama: true},
	{name: "direct left recursion", src: `root ::= root "a" | "b"`, err: ErrLeftRecursion, offset: 0, msg: "'root'", llama: true},
	{name: "indirect left recursion", src: "root ::= a\na ::= b \"x\" | \"y\"\nb ::= a \"z\"\n", err: ErrLeftRecursion, offset: 11, msg: "'a'", llama: true},
	{name: "left recursion below root", src: "root ::= \"(\" x\nx ::= x \"a\" | \"a\"\n", err: ErrLeftRecursion, offset: 15, msg: "'x'", llama: true},
	{name: "left recursion through empty alternative", src: "root ::= e root \"x\" | \"y\"\ne ::= \"\" | \"e\"\n", err: ErrLeftRecursion, offset: 0, msg: "'root'", llama: true},
	{name: "left recursion in group", src: `root ::= ("a" | root) "b"`, err: ErrLeftRecursion, offset: 0, llama: true},
	{name: "repeat of empty at start", src: `root ::= ( [x]* )*`, err: ErrEmptyLoop, offset: 0, msg: "crashes", llama: true},
	// llama.cpp passes these at parse time but crashes or hangs later,
	// or reads them differently; Parse refuses them.
	{name: "repeat of empty later", src: `root ::= "a" ( [x]* )*`, err: ErrEmptyLoop, offset: 0},
	{name: "repeat of optional rule", src: "root ::= \"a\" x+\nx ::= \"b\"?\n", err: ErrEmptyLoop, offset: 0},
	{name: "max below min", src: `root ::= "a"{5,2}`, err: ErrRepetition, offset: 12, msg: "below its minimum", llama: true, slow: true},
	{name: "NUL byte", src: "root ::= \"a\"\n\x00", err: ErrSyntax, offset: 13, msg: "NUL"},
	{name: "code point too large", src: `root ::= "\U00110000"`, err: ErrSyntax, offset: 10, msg: "above U+10FFFF"},
	{name: "invalid UTF-8 in literal", src: "root ::= \"\xff\"", err: ErrSyntax, offset: 10, msg: "invalid UTF-8", llama: true},
	{name: "stray continuation byte in literal", src: "root ::= \"\x80\"", err: ErrSyntax, offset: 10, msg: "invalid UTF-8"},
	{name: "token id too large", src: `root ::= <[4294967296]>`, err: ErrSyntax, offset: 11, msg: "out of range"},
	{name: "groups too deep", src: "root ::= " + strings.Repeat("(", 1001) + `"a"` + strings.Repeat(")", 1001), err: ErrSyntax, offset: 1009, msg: "nested more than 1000"},
	{name: "repetitions too deep", src: `root ::= "a"` + strings.Repeat("?", 1001), err: ErrSyntax, offset: 1013, msg: "more than 1000 times"},
	{name: "too large", src: `root ::= "aaaaaaaaaaaaaaaaaaaa"{2000}{2000}{2000}`, err: ErrTooLarge, offset: 0},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range gbnfParseErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Parse(tc.src)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) = %v, %v; want a *ParseError", tc.src, g, err)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("Parse(%q) = %v; want class %v", tc.src, err, tc.err)
			}
			if pe.Offset != tc.offset {
				t.Errorf("Parse(%q) offset = %d, want %d (%v)", tc.src, pe.Offset, tc.offset, err)
			}
			if wantLine, wantCol := gbnfLineOf(tc.src, tc.offset), gbnfColOf(tc.src, tc.offset); pe.Line != wantLine || pe.Col != wantCol {
				t.Errorf("Parse(%q) line:col = %d:%d, want %d:%d", tc.src, pe.Line, pe.Col, wantLine, wantCol)
			}
			if !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("Parse(%q) message = %q, want it to contain %q", tc.src, pe.Msg, tc.msg)
			}
		})
	}
}

func TestParseErrorPosition(t *testing.T) {
	_, err := Parse("root ::= \"a\"\nb ::= [x\n")
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("Parse = %v, want *ParseError", err)
	}
	if pe.Line != 2 || pe.Col != 7 || pe.Offset != 19 {
		t.Errorf("position = line %d col %d byte %d, want line 2 col 7 byte 19", pe.Line, pe.Col, pe.Offset)
	}
	if got, want := pe.Error(), "gbnf: line 2 col 7 (byte 19): unexpected end of input (unterminated class)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// gbnfParseOKCases are grammars llama.cpp accepts, with the rules Parse must
// build; they pin the odd corners of the syntax.
var gbnfParseOKCases = []struct {
	name string
	src  string
	want []*Rule
}{
	{"literal", `root ::= "ab"`, []*Rule{{"root", []Seq{{Literal{[]rune("ab")}}}}}},
	{"no spaces", `root::="a"[b]c` + "\nc::=\"c\"", []*Rule{
		{"root", []Seq{{Literal{[]rune("a")}, Class{false, []CharRange{{'b', 'b'}}}, Ref{"c"}}}},
		{"c", []Seq{{Literal{[]rune("c")}}}},
	}},
	{"empty alternatives", "root ::= | \"a\" | \n \"b\" |", []*Rule{{"root", []Seq{{}, {Literal{[]rune("a")}}, {Literal{[]rune("b")}}, {}}}}},
	{"empty rule", "root ::=\n", []*Rule{{"root", []Seq{{}}}}},
	{"empty literal and classes vanish", `root ::= "" [] [^] "a"`, []*Rule{{"root", []Seq{{Literal{[]rune("a")}}}}}},
	{"escapes", `root ::= "\x41\u00e9\U0001F600\t\r\n\\\"\[\]"`, []*Rule{{"root", []Seq{{Literal{[]rune("Aé😀\t\r\n\\\"[]")}}}}}},
	{"class ranges", `root ::= [^a-z0-9_-] [-a] [a-] [\]\[] [z-a] [α-ω]`, []*Rule{{"root", []Seq{{
		Class{true, []CharRange{{'a', 'z'}, {'0', '9'}, {'_', '_'}, {'-', '-'}}},
		Class{false, []CharRange{{'-', '-'}, {'a', 'a'}}},
		Class{false, []CharRange{{'a', 'a'}, {'-', '-'}}},
		Class{false, []CharRange{{']', ']'}, {'[', '['}}},
		Class{false, []CharRange{{'z', 'a'}}},
		Class{false, []CharRange{{'α', 'ω'}}},
	}}}}},
	{"dash ranges", `root ::= [a-z-9] [--/]`, []*Rule{{"root", []Seq{{
		Class{false, []CharRange{{'a', 'z'}, {'-', '-'}, {'9', '9'}}},
		Class{false, []CharRange{{'-', '/'}}},
	}}}}},
	{"repetitions", `root ::= "a"* "b"+ "c"? "d"{2} "e"{2,} "f"{ 1 , 3 } "g"{0} "h"{2}{3} "ij"?`, []*Rule{{"root", []Seq{{
		Repeat{Literal{[]rune("a")}, 0, Unbounded},
		Repeat{Literal{[]rune("b")}, 1, Unbounded},
		Repeat{Literal{[]rune("c")}, 0, 1},
		Repeat{Literal{[]rune("d")}, 2, 2},
		Repeat{Literal{[]rune("e")}, 2, Unbounded},
		Repeat{Literal{[]rune("f")}, 1, 3},
		Repeat{Literal{[]rune("g")}, 0, 0},
		Repeat{Repeat{Literal{[]rune("h")}, 2, 2}, 3, 3},
		Repeat{Literal{[]rune("ij")}, 0, 1},
	}}}}},
	{"groups across lines", "root ::= (\n  \"a\" # first\n  | \"b\"\n)+ .\n", []*Rule{{"root", []Seq{{
		Repeat{Group{[]Seq{{Literal{[]rune("a")}}, {Literal{[]rune("b")}}}}, 1, Unbounded}, Any{},
	}}}}},
	{"tokens", `root ::= <[12]> !<[7]> | "x"`, []*Rule{{"root", []Seq{{Token{12, false}, Token{7, true}}, {Literal{[]rune("x")}}}}}},
	{"CRLF and CR", "root ::= a\r\na ::= \"x\"\rb ::= \"y\"\r\n", []*Rule{
		{"root", []Seq{{Ref{"a"}}}}, {"a", []Seq{{Literal{[]rune("x")}}}}, {"b", []Seq{{Literal{[]rune("y")}}}},
	}},
	{"redefinition keeps the last", "root ::= a\na ::= \"x\"\nroot ::= \"y\" a\n", []*Rule{
		{"root", []Seq{{Literal{[]rune("y")}, Ref{"a"}}}}, {"a", []Seq{{Literal{[]rune("x")}}}},
	}},
	{"undefined ref only in replaced rule", "root ::= foo\nroot ::= \"a\"\n", []*Rule{{"root", []Seq{{Literal{[]rune("a")}}}}}},
	{"raw newline in literal", "root ::= \"a\nb\"", []*Rule{{"root", []Seq{{Literal{[]rune("a\nb")}}}}}},
	{"right recursion", "root ::= \"(\" root \")\" | \"\"", []*Rule{{"root", []Seq{{Literal{[]rune("(")}, Ref{"root"}, Literal{[]rune(")")}}, {}}}}},
	{"empty group repeated", `root ::= "a" (){0,3}`, []*Rule{{"root", []Seq{{Literal{[]rune("a")}, Repeat{Group{[]Seq{{}}}, 0, 3}}}}}},
}

func TestParse(t *testing.T) {
	for _, tc := range gbnfParseOKCases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Parse(tc.src)
			if err != nil {
				t.Fatalf("Parse(%q) = %v", tc.src, err)
			}
			if !reflect.DeepEqual(g.Rules, tc.want) {
				t.Errorf("Parse(%q) =\n%s\nwant\n%s", tc.src, (&Grammar{Rules: g.Rules}).String(), (&Grammar{Rules: tc.want}).String())
			}
			gbnfRoundTrip(t, g)
		})
	}
}

// gbnfRoundTrip checks that g prints to text that parses back to the same rules
// and prints the same again.
func gbnfRoundTrip(t *testing.T, g *Grammar) {
	t.Helper()
	text := g.String()
	g2, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(String()) = %v\n%s", err, text)
	}
	if !reflect.DeepEqual(g.Rules, g2.Rules) {
		t.Fatalf("Parse(String()) differs from the grammar:\n%s\nreprinted:\n%s", text, g2.String())
	}
	if again := g2.String(); again != text {
		t.Fatalf("String() is not stable:\n%s\nthen\n%s", text, again)
	}
}

// TestGolden parses each grammar under testdata/gbnf and compares its
// canonical form with the .golden file beside it (rewrite with -update).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/gbnf/*.gbnf")
	if err != nil || len(files) == 0 {
		t.Fatalf("no grammars under testdata/gbnf: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			g, err := Parse(string(src))
			if err != nil {
				t.Fatalf("Parse(%s) = %v", f, err)
			}
			got := g.String()
			golden.Check(t, strings.TrimSuffix(f, ".gbnf")+".golden", []byte(got))
			gbnfRoundTrip(t, g)
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, tc := range gbnfParseErrorCases {
		if !tc.slow {
			f.Add(tc.src)
		}
	}
	for _, tc := range gbnfParseOKCases {
		f.Add(tc.src)
	}
	files, _ := filepath.Glob("testdata/gbnf/*.gbnf")
	for _, file := range files {
		if src, err := os.ReadFile(file); err == nil {
			f.Add(string(src))
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		g, err := Parse(src)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) = %T %v, want *ParseError", src, err, err)
			}
			if pe.Offset < 0 || pe.Offset > len(src) {
				t.Fatalf("Parse(%q) offset %d outside the source", src, pe.Offset)
			}
			return
		}
		gbnfRoundTrip(t, g)
		// The matcher must start on every grammar Parse accepts.
		if _, err := NewMatcher(g); err != nil {
			t.Fatalf("NewMatcher(Parse(%q)) = %v", src, err)
		}
	})
}

func ExampleParse() {
	g, err := Parse(`root ::= "call " tool
tool ::= "get_weather" | "transfer_funds"`)
	if err != nil {
		panic(err)
	}
	ok, _ := g.Match([]byte("call get_weather"))
	fmt.Println(ok)
	ok, offset := g.Match([]byte("call get_wether"))
	fmt.Println(ok, offset)
	_, err = Parse(`root ::= "a"{,3}`)
	fmt.Println(err)
	// Output:
	// true
	// false 11
	// gbnf: line 1 col 14 (byte 13): expecting an int
}

// TestParseAndMatchAreNotExponential: llama.cpp's left-recursion check and
// its stack expansion revisit shared rules once per path, which is 2^60
// here; Parse and the Matcher must not.
func TestParseAndMatchAreNotExponential(t *testing.T) {
	var b strings.Builder
	b.WriteString("root ::= r0 \"!\"\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "r%d ::= r%d | r%d \"\" | \"\" r%d\n", i, i+1, i+1, i+1)
	}
	b.WriteString("r60 ::= \"x\"\n")
	g, err := Parse(b.String())
	if err != nil {
		t.Fatalf("Parse = %v", err)
	}
	if ok, off := g.Match([]byte("x!")); !ok {
		t.Errorf("Match(x!) = false at %d", off)
	}
}
