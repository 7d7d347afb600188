package gbnf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustParseGBNF(tb testing.TB, src string) *Grammar {
	tb.Helper()
	g, err := Parse(src)
	if err != nil {
		tb.Fatalf("Parse(%q) = %v", src, err)
	}
	return g
}

func mustParseGBNFFile(tb testing.TB, name string) *Grammar {
	tb.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "gbnf", name))
	if err != nil {
		tb.Fatal(err)
	}
	return mustParseGBNF(tb, string(src))
}

// gbnfMatchCase: Match(input) must return ok and offset (the start of the code
// point llama.cpp rejects, or len(input) for a proper prefix).
type gbnfMatchCase struct {
	input  string
	ok     bool
	offset int
}

var gbnfMatchCases = []struct {
	name    string
	grammar string // source, or @file under testdata/gbnf
	cases   []gbnfMatchCase
}{
	{"counted repetition", `root ::= "a"{2,5}`, []gbnfMatchCase{
		{"", false, 0}, {"a", false, 1}, {"aa", true, 2}, {"aaaaa", true, 5}, {"aaaaaa", false, 5}, {"ab", false, 1},
	}},
	{"exact and open counts", `root ::= "x"{3} "y"{2,} "z"{0,1}`, []gbnfMatchCase{
		{"xxxyy", true, 5}, {"xxxyyyyyz", true, 9}, {"xxyy", false, 2}, {"xxxy", false, 4}, {"xxxyyzz", false, 6},
	}},
	{"repeated literal", `root ::= "ab"+ "!"`, []gbnfMatchCase{
		{"ab!", true, 3}, {"ababab!", true, 7}, {"aba!", false, 3}, {"!", false, 0},
	}},
	{"alternatives and groups", `root ::= ("get" | "set") "_" ("a" | "ab" | "abc")`, []gbnfMatchCase{
		{"get_a", true, 5}, {"set_abc", true, 7}, {"get_abcd", false, 7}, {"put_a", false, 0}, {"get_", false, 4},
	}},
	{"empty", `root ::= ""`, []gbnfMatchCase{{"", true, 0}, {"a", false, 0}}},
	{"NUL is a code point", `root ::= [\x00] "a"`, []gbnfMatchCase{{"\x00a", true, 2}, {"a", false, 0}}},
	{"tokens never match text", `root ::= <[1]> | "a" <[2]>? | "b" !<[3]>`, []gbnfMatchCase{
		{"a", true, 1}, {"", false, 0}, {"b", false, 1}, {"ab", false, 1},
	}},
	{"negated classes", `root ::= [^a-z0-9 ]+ [^\x00-\x7F] [^"\\\x00-\x1F]`, []gbnfMatchCase{
		{"ABé\"", false, 5}, {"ABéx", true, 5}, {"Aéé", true, 5}, {"abc", false, 0}, {"A\x01", false, 2},
	}},
	{"any code point", `root ::= "#" . "#"`, []gbnfMatchCase{
		{"#a#", true, 3}, {"#😀#", true, 6}, {"#é#", true, 4}, {"##", false, 2}, {"#😀😀#", false, 5}, {"#\xf0\x9f\x98#", false, 1},
	}},
	{"code point ranges", `root ::= [α-ω]+ [\U0001F600-\U0001F64F]`, []gbnfMatchCase{
		{"αβω😀", true, 10}, {"αβω🙏", true, 10}, {"αβω🚀", false, 6}, {"αAω😀", false, 2}, {"α", false, 2},
	}},
	{"invalid UTF-8", `root ::= .*`, []gbnfMatchCase{
		{"ok é 😀", true, 10}, {"a\xffb", false, 1}, {"a\xc3", false, 1}, {"\xc3(", false, 0}, {"\x80", false, 0},
		{"\xc0\x80", false, 0}, {"\xed\xa0\x80", false, 0}, {"\xf4\x90\x80\x80", false, 0}, {"\xf5\x80\x80\x80", false, 0},
		{"\xe0\x9f\xbf", false, 0}, {"\xf0\x8f\xbf\xbf", false, 0},
	}},
	{"JSON", "@json.gbnf", []gbnfMatchCase{
		{`{}`, true, 2},
		{`{"a": [1, -2.5e+3, "x\u00e9\n", true, null], "b": {}}`, true, 53},
		{"  [\n  1 ,\t2 ]  ", true, 15},
		{`"😀 héllo"`, true, 13},
		{`{"a":1,}`, false, 7},
		{`{'a':1}`, false, 1},
		{`01`, false, 1},
		{`tru`, false, 3},
		{`[1,2`, false, 4},
		{"{\"a\":\"x\ty\"}", false, 7},
		{`{"a" 1}`, false, 5},
		{`[1]]`, false, 3},
		{`"\x"`, false, 2},
		{`-`, false, 1},
		{`1.`, false, 2},
	}},
	{"JSON whitespace is bounded", "@json.gbnf", []gbnfMatchCase{
		{strings.Repeat(" ", 20) + "1", true, 21},
		{strings.Repeat(" ", 21) + "1", false, 20},
		{"\n" + strings.Repeat("\t", 20) + "1", true, 22},
		{"\n\n1", false, 1},
		{"[1," + strings.Repeat(" ", 20) + "2]", true, 25},
		{"[1," + strings.Repeat(" ", 41) + "2]", false, 23},
	}},
	{"tool call envelope", "@toolcall.gbnf", []gbnfMatchCase{
		{`{"action": "call", "tool": "get_weather", "arguments": {"city": "Paris", "units": "metric"}}`, true, 92},
		{`{"action":"call","tool":"transfer_funds","arguments":{"source_account":"ACC-00001","target_account":"ACC-00002","amount":12.5}}`, true, 127},
		{`{"action":"answer","text":"Bonjour 👋"}`, true, 41},
		{`{"action":"call","tool":"delete_everything","arguments":{}}`, false, 25},
		{`{"action":"call","tool":"get_weather","arguments":{"city":"Paris","country":"FR"}}`, false, 67},
		{`{"action":"call","tool":"transfer_funds","arguments":{"source_account":"ACC-0001"`, false, 80},
		{`{"action":"call","tool":"transfer_funds","arguments":{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1.234}}`, false, 125},
	}},
	{"unicode literals", "@unicode.gbnf", []gbnfMatchCase{
		{"héllo 😀🚀", true, 15}, {"你好 🌀été", true, 16}, {"👋 😀", true, 9}, {"héllo 😁", false, 7}, {"hello 😀", false, 1},
	}},
	{"arithmetic", "@arithmetic.gbnf", []gbnfMatchCase{
		{"a+b*(c-1)=x2\n", true, 13}, {"1+=2\n", false, 2}, {"(a=1\n", false, 2},
	}},
}

func gbnfGrammarFor(tb testing.TB, src string) *Grammar {
	if name, ok := strings.CutPrefix(src, "@"); ok {
		return mustParseGBNFFile(tb, name)
	}
	return mustParseGBNF(tb, src)
}

func TestMatch(t *testing.T) {
	for _, tc := range gbnfMatchCases {
		t.Run(tc.name, func(t *testing.T) {
			g := gbnfGrammarFor(t, tc.grammar)
			for _, c := range tc.cases {
				ok, off := g.Match([]byte(c.input))
				if ok != c.ok || off != c.offset {
					t.Errorf("Match(%q) = %v, %d; want %v, %d", c.input, ok, off, c.ok, c.offset)
				}
			}
		})
	}
}

func TestRejectError(t *testing.T) {
	tests := []struct {
		grammar, input string
		n              int // bytes Write accepts
		offset, byteAt int
		err            error
	}{
		{`root ::= "😀" | "🚀"`, "😁", 3, 0, 3, nil},
		{`root ::= "😀" | "🚀"`, "😀x", 4, 4, 4, nil},
		{`root ::= "é"`, "è", 1, 0, 1, nil},
		{`root ::= "é"`, "a", 0, 0, 0, nil},
		{`root ::= [a-z]`, "é", 0, 0, 0, nil}, // no code point starting with 0xC3 is in [a-z]
		{`root ::= .*`, "ab\xff", 2, 2, 2, ErrInvalidUTF8},
		{`root ::= .*`, "ab\xe2\x28", 3, 2, 3, ErrInvalidUTF8},
		{`root ::= .*`, "\xed\xa0\x80", 1, 0, 1, ErrInvalidUTF8},
	}
	for _, tc := range tests {
		t.Run(tc.grammar, func(t *testing.T) {
			m, err := NewMatcher(mustParseGBNF(t, tc.grammar))
			if err != nil {
				t.Fatal(err)
			}
			n, err := m.Write([]byte(tc.input))
			var re *RejectError
			if !errors.As(err, &re) {
				t.Errorf("%s: Write(%q) = %d, %v; want a *RejectError", tc.grammar, tc.input, n, err)
				return
			}
			if n != tc.n || re.Offset != tc.offset || re.Byte != tc.byteAt || re.Err != tc.err {
				t.Errorf("%s: Write(%q) = %d, {Offset %d Byte %d Err %v}; want %d, {Offset %d Byte %d Err %v}",
					tc.grammar, tc.input, n, re.Offset, re.Byte, re.Err, tc.n, tc.offset, tc.byteAt, tc.err)
			}
			if m.Offset() != n {
				t.Errorf("%s: Offset() after Write(%q) = %d, want %d", tc.grammar, tc.input, m.Offset(), n)
			}
		})
	}
}

func TestAllowed(t *testing.T) {
	byteRange := func(lo, hi byte) []byte {
		var out []byte
		for b := int(lo); b <= int(hi); b++ {
			out = append(out, byte(b))
		}
		return out
	}
	tests := []struct {
		name, grammar, prefix string
		want                  []byte
		accepts               bool
	}{
		{"literal", `root ::= "ab"`, "", []byte("a"), false},
		{"after literal", `root ::= "a" "b"?`, "a", []byte("b"), true},
		{"done", `root ::= "a"`, "a", nil, true},
		{"JSON start", "@json.gbnf", "", []byte("\t\n \"-0123456789[{fnt"), false},
		{"JSON in string", "@json.gbnf", `"`, append(byteRange(0x20, 0x7E), byteRange(0xC2, 0xF4)...), false},
		{"lead bytes of a range", `root ::= [\u00e0-\u00ff]`, "", []byte{0xC3}, false},
		{"continuation", `root ::= "é" | "ü"`, "\xc3", []byte{0xA9, 0xBC}, false},
		{"emoji third byte", `root ::= "😀" | "🚀"`, "\xf0\x9f", []byte{0x98, 0x9A}, false},
		{"after E0", `root ::= .`, "\xe0", byteRange(0xA0, 0xBF), false},
		{"after ED", `root ::= .`, "\xed", byteRange(0x80, 0x9F), false},
		{"after F4", `root ::= .`, "\xf4", byteRange(0x80, 0x8F), false},
		{"negated", `root ::= [^a]`, "", append(append(byteRange(0x00, 0x60), byteRange(0x62, 0x7F)...), byteRange(0xC2, 0xF4)...), false},
		{"token", `root ::= <[5]> | "x"`, "", []byte("x"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMatcher(gbnfGrammarFor(t, tc.grammar))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Write([]byte(tc.prefix)); err != nil {
				t.Fatalf("%s: Write(%q) = %v", tc.name, tc.prefix, err)
			}
			set := m.Allowed()
			if got := set.Bytes(); !bytes.Equal(got, gbnfSortedBytes(tc.want)) {
				t.Errorf("%s: Allowed() after %q = %q, want %q", tc.name, tc.prefix, got, gbnfSortedBytes(tc.want))
			}
			if set.Len() != len(tc.want) {
				t.Errorf("%s: Allowed().Len() = %d, want %d", tc.name, set.Len(), len(tc.want))
			}
			if m.Accepts() != tc.accepts {
				t.Errorf("%s: Accepts() after %q = %v, want %v", tc.name, tc.prefix, m.Accepts(), tc.accepts)
			}
			gbnfCheckAllowed(t, m)
		})
	}
}

func gbnfSortedBytes(b []byte) []byte {
	var set ByteSet
	for _, c := range b {
		set.Add(c)
	}
	return set.Bytes()
}

// gbnfCheckAllowed checks that Advance accepts exactly the bytes Allowed
// reports, on clones, leaving m as it was.
func gbnfCheckAllowed(t *testing.T, m *Matcher) {
	t.Helper()
	set := m.Allowed()
	for b := 0; b < 256; b++ {
		c := m.Clone()
		if got := c.Advance(byte(b)); got != set.Has(byte(b)) {
			t.Fatalf("after %d bytes: Advance(%#x) = %v but Allowed().Has = %v", m.Offset(), b, got, set.Has(byte(b)))
		}
	}
}

// TestAdvanceRefusalLeavesMatcherUnchanged feeds inputs with a bad byte in
// the middle: after the refusal the matcher must behave exactly as one that
// only saw the accepted bytes.
func TestAdvanceRefusalLeavesMatcherUnchanged(t *testing.T) {
	g := mustParseGBNFFile(t, "json.gbnf")
	for _, in := range []string{`{"a": [1, 2`, `{"é😀`, `[tru`, "[\"\xf0\x9f"} {
		t.Run(in, func(t *testing.T) {
			m, _ := NewMatcher(g)
			if _, err := m.Write([]byte(in)); err != nil {
				t.Fatalf("Write(%q) = %v", in, err)
			}
			for i, bad := range []byte{'}', 0xFF, 0x80, 'q'} {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					want := m.Allowed()
					if want.Has(bad) {
						return
					}
					if m.Advance(bad) {
						t.Fatalf("after %q: Advance(%#x) = true, want false", in, bad)
					}
					if m.Allowed() != want || m.Offset() != len(in) {
						t.Fatalf("after %q and a refused %#x the matcher changed", in, bad)
					}
				})
			}
			rest := `"x"]}`
			if strings.HasSuffix(in, "\xf0\x9f") {
				rest = "\x98\x80\"]"
			}
			fresh, _ := NewMatcher(g)
			fresh.Write([]byte(in))
			n1, err1 := m.Write([]byte(rest))
			n2, err2 := fresh.Write([]byte(rest))
			if n1 != n2 || (err1 == nil) != (err2 == nil) || m.Accepts() != fresh.Accepts() || m.Allowed() != fresh.Allowed() {
				t.Errorf("after refusals, %q+%q: %d %v %v; fresh matcher: %d %v %v", in, rest, n1, err1, m.Accepts(), n2, err2, fresh.Accepts())
			}
		})
	}
}

func TestCloneAndReset(t *testing.T) {
	g := mustParseGBNFFile(t, "toolcall.gbnf")
	m, _ := NewMatcher(g)
	prefix := `{"action":"call","tool":"`
	if _, err := m.WriteString(prefix); err != nil {
		t.Fatal(err)
	}
	a, b := m.Clone(), m.Clone()
	_, errA := a.WriteString(`get_weather","arguments":{"city":"Oslo"}}`)
	_, errB := b.WriteString(`transfer_funds","arguments":{"city":"Oslo"}}`)
	if errA != nil || !a.Accepts() {
		t.Errorf("clone a: err %v, Accepts %v; want nil, true", errA, a.Accepts())
	}
	if errB == nil {
		t.Errorf("clone b accepted get_weather's arguments for transfer_funds")
	}
	if m.Offset() != len(prefix) || m.Accepts() {
		t.Errorf("the original moved with its clones: Offset %d Accepts %v", m.Offset(), m.Accepts())
	}
	a.Reset()
	fresh, _ := NewMatcher(g)
	if a.Offset() != 0 || a.Allowed() != fresh.Allowed() || a.Accepts() != fresh.Accepts() {
		t.Errorf("Reset() did not return to the start")
	}
	if _, err := a.WriteString(`{"action":"answer","text":"ok"}`); err != nil || !a.Accepts() {
		t.Errorf("after Reset: %v, Accepts %v", err, a.Accepts())
	}
}

func TestLongAndDeepInput(t *testing.T) {
	g := mustParseGBNFFile(t, "json.gbnf")
	deep := strings.Repeat("[", 5000) + "1" + strings.Repeat("]", 5000)
	if ok, off := g.Match([]byte(deep)); !ok {
		t.Errorf("5000-deep array: Match = false at %d", off)
	}
	var b strings.Builder
	b.WriteString("[")
	for i := 0; i < 20000; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"id": 12345, "name": "héllo wörld 😀", "tags": ["a", "b"], "ok": true}`)
	}
	b.WriteString("]")
	in := []byte(b.String())
	if ok, off := g.Match(in); !ok {
		t.Errorf("long array: Match = false at %d", off)
	}
	in[len(in)-2] = ','
	if ok, off := g.Match(in); ok || off != len(in)-1 {
		t.Errorf("long array with a trailing comma: Match = %v, %d; want false, %d", ok, off, len(in)-1)
	}
}

func TestTooManyStacks(t *testing.T) {
	// Each "a" can leave a "c" or a "d" to match later: 2^n distinct stacks.
	g := mustParseGBNF(t, "root ::= x\nx ::= \"a\" x \"c\" | \"a\" x \"d\" | \"\"\n")
	m, _ := NewMatcher(g)
	n, err := m.Write([]byte(strings.Repeat("a", 30)))
	if !errors.Is(err, ErrTooManyStacks) {
		t.Fatalf("Write(a×30) = %d, %v; want ErrTooManyStacks", n, err)
	}
	if n < 10 || n >= 20 {
		t.Errorf("Write(a×30) stopped after %d bytes, want 10..19 (about 2^n stacks after n bytes)", n)
	}
	if ok, off := g.Match([]byte("aaacdc")); !ok {
		t.Errorf("Match(aaacdc) = false at %d", off)
	}
}

func TestMatchHandBuiltGrammar(t *testing.T) {
	g := &Grammar{Rules: []*Rule{
		{Name: "root", Alts: []Seq{{Literal{[]rune("n=")}, Repeat{Ref{"digit"}, 1, 3}}}},
		{Name: "digit", Alts: []Seq{{Class{Ranges: []CharRange{{'0', '9'}}}}}},
	}}
	if got, want := g.String(), "root ::= \"n=\" digit{1,3}\ndigit ::= [0-9]\n"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if ok, _ := g.Match([]byte("n=42")); !ok {
		t.Errorf("Match(n=42) = false")
	}
	if ok, off := g.Match([]byte("n=4242")); ok || off != 5 {
		t.Errorf("Match(n=4242) = %v, %d; want false, 5", ok, off)
	}
	bad := &Grammar{Rules: []*Rule{{Name: "root", Alts: []Seq{{Ref{"missing_rule"}}}}}}
	if _, err := NewMatcher(bad); !errors.Is(err, ErrSyntax) {
		t.Errorf("NewMatcher(rule named missing_rule) = %v, want ErrSyntax (no _ in names)", err)
	}
	if ok, off := bad.Match([]byte("x")); ok || off != -1 {
		t.Errorf("Match on an invalid grammar = %v, %d; want false, -1", ok, off)
	}
}

func FuzzMatcher(f *testing.F) {
	files, _ := filepath.Glob("testdata/gbnf/*.gbnf")
	var grammars []*Grammar
	for _, file := range files {
		grammars = append(grammars, mustParseGBNFFile(f, filepath.Base(file)))
	}
	for i, tc := range gbnfMatchCases {
		for _, c := range tc.cases {
			f.Add(uint8(i), []byte(c.input), uint16(len(c.input)/2))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, input []byte, split uint16) {
		g := grammars[int(which)%len(grammars)]
		whole, _ := NewMatcher(g)
		n, err := whole.Write(input)
		k := int(split) % (len(input) + 1)
		parts, _ := NewMatcher(g)
		n1, err1 := parts.Write(input[:k])
		n2, err2 := 0, error(nil)
		if err1 == nil {
			n2, err2 = parts.Write(input[k:])
		}
		if err1 != nil {
			err2 = err1
		}
		if n1+n2 != n || (err == nil) != (err2 == nil) {
			t.Fatalf("Write(%q) = %d, %v; in two parts at %d: %d+%d, %v", input, n, err, k, n1, n2, err2)
		}
		if err != nil && *err.(*RejectError) != *err2.(*RejectError) {
			t.Fatalf("Write(%q): %+v, in two parts: %+v", input, err, err2)
		}
		if whole.Accepts() != parts.Accepts() || whole.Allowed() != parts.Allowed() {
			t.Fatalf("Write(%q): state differs when written in two parts", input)
		}
		if ok, off := g.Match(input); ok != (err == nil && whole.Accepts()) || (err != nil && off != err.(*RejectError).Offset) {
			t.Fatalf("Match(%q) = %v, %d, but Write gave %v (Accepts %v)", input, ok, off, err, whole.Accepts())
		}
		// Mark and Rewind: after writing the rest, rewinding to the split
		// gives the state of parts before its second Write.
		if err1 == nil {
			again, _ := NewMatcher(g)
			again.Write(input[:k])
			mk := again.Mark()
			want := again.Allowed()
			again.Write(input[k:])
			if !again.Rewind(mk) || again.Allowed() != want || again.Offset() != k {
				t.Fatalf("Rewind to %d after writing %q did not restore the state", k, input)
			}
			if n2b, _ := again.Write(input[k:]); n2b != n2 || again.Accepts() != parts.Accepts() {
				t.Fatalf("after Rewind, writing %q again: %d bytes, want %d", input[k:], n2b, n2)
			}
			if other, _ := NewMatcher(g); other.Rewind(mk) {
				t.Fatalf("Rewind accepted a Mark from another Matcher")
			}
		}
		// Allowed agrees with Advance along the accepted prefix.
		m, _ := NewMatcher(g)
		for i := 0; i <= n && i < 24; i++ {
			gbnfCheckAllowed(t, m)
			if i < n {
				m.Advance(input[i])
			}
		}
	})
}

// benchOutputs are realistic model outputs: turn envelopes calling real MCP
// tools (GitHub, filesystem, Slack, Playwright) and an answer.
var benchOutputs = []string{
	`{"action": "call", "tool": "create_issue", "arguments": {"owner": "toolgate", "repo": "toolgate", "title": "Matcher rejects valid surrogate pairs", "body": "Steps:\n1. Compile the schema\n2. Feed \"\\ud83d\\ude00\"\n\nExpected: accepted. Got: rejected at byte 12 — see attached log 😀", "labels": ["bug", "grammar"]}}`,
	`{"action": "call", "tool": "read_text_file", "arguments": {"path": "/home/user/projects/toolgate/README.md", "head": 40}}`,
	`{"action": "call", "tool": "slack_post_message", "arguments": {"channel_id": "C024BE91L", "text": "Déploiement terminé ✅ — 3 services mis à jour, 0 erreur."}}`,
	`{"action": "call", "tool": "browser_click", "arguments": {"element": "Submit order button", "ref": "e42", "doubleClick": false, "modifiers": ["Shift"]}}`,
	`{"action": "call", "tool": "search_repositories", "arguments": {"query": "language:go stars:>1000 grammar constrained decoding", "page": 1, "perPage": 30}}`,
	`{"action": "answer", "text": "The transfer of 250.00 USD from ACC-00001 to ACC-00002 is done (transaction 7f3c9a). Your new balance is 750.00 USD."}`,
}

// BenchmarkMatcher measures Write throughput (MB/s) and allocations per
// byte of a reused Matcher (Reset between outputs) on realistic outputs.
func BenchmarkMatcher(b *testing.B) {
	cases := []struct {
		name    string
		grammar string
		outputs []string
	}{
		{"json", "@json.gbnf", benchOutputs},
		{"llama-create-issue", "@llama-create-issue.gbnf", []string{
			`{"owner": "toolgate", "repo": "toolgate", "title": "Matcher rejects valid surrogate pairs", "body": "Steps:\n1. Compile the schema\n2. Feed \"\\ud83d\\ude00\"\n\nExpected: accepted. Got: rejected at byte 12 — see attached log 😀", "labels": ["bug", "grammar"]}`,
		}},
		{"toolcall", "@toolcall.gbnf", []string{
			`{"action": "call", "tool": "transfer_funds", "arguments": {"source_account": "ACC-00001", "target_account": "ACC-00002", "amount": 250.75}}`,
			`{"action": "call", "tool": "get_weather", "arguments": {"city": "São Paulo", "units": "metric"}}`,
			`{"action": "answer", "text": "The transfer of 250.00 USD from ACC-00001 to ACC-00002 is done (transaction 7f3c9a)."}`,
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			g := gbnfGrammarFor(b, tc.grammar)
			m, err := NewMatcher(g)
			if err != nil {
				b.Fatal(err)
			}
			var inputs [][]byte
			total := 0
			for _, o := range tc.outputs {
				inputs = append(inputs, []byte(o))
				total += len(o)
				m.Reset()
				if _, err := m.Write([]byte(o)); err != nil || !m.Accepts() {
					b.Fatalf("%s does not accept %q: %v", tc.name, o, err)
				}
			}
			b.SetBytes(int64(total))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for _, in := range inputs {
					m.Reset()
					m.Write(in)
				}
			}
		})
	}
}

// BenchmarkMatcherCold is [BenchmarkMatcher] with a new Matcher per output:
// no cached transitions, the cost of a first encounter.
func BenchmarkMatcherCold(b *testing.B) {
	g := mustParseGBNFFile(b, "json.gbnf")
	total := 0
	for _, o := range benchOutputs {
		total += len(o)
	}
	run := func() {
		for _, o := range benchOutputs {
			m, _ := NewMatcher(g)
			if _, err := m.WriteString(o); err != nil || !m.Accepts() {
				b.Fatalf("%q: %v", o, err)
			}
		}
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for range b.N {
		run()
	}
	b.ReportMetric(testing.AllocsPerRun(1, run)/float64(total), "allocs/byte")
}

// BenchmarkMatcherLarge feeds one 1.5 MB JSON document, the size gbnf-check's
// README times llama.cpp on (1.6 MB in about 1.6 s).
func BenchmarkMatcherLarge(b *testing.B) {
	g := mustParseGBNFFile(b, "json.gbnf")
	var sb strings.Builder
	sb.WriteString("[")
	for i := 0; sb.Len() < 1500000; i++ {
		if i > 0 {
			sb.WriteString(",\n ")
		}
		sb.WriteString(benchOutputs[i%len(benchOutputs)])
	}
	sb.WriteString("]")
	in := []byte(sb.String())
	m, _ := NewMatcher(g)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m.Reset()
		if _, err := m.Write(in); err != nil || !m.Accepts() {
			b.Fatal(err)
		}
	}
}

// BenchmarkAllowed measures the next-byte set at every position of a tool
// call (what a token mask needs per step).
func BenchmarkAllowed(b *testing.B) {
	g := mustParseGBNFFile(b, "json.gbnf")
	in := []byte(benchOutputs[0])
	m, _ := NewMatcher(g)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	var sink int
	for range b.N {
		m.Reset()
		for _, c := range in {
			set := m.Allowed()
			sink += set.Len()
			m.Advance(c)
		}
	}
	_ = sink
}

// BenchmarkParse measures Parse (parsing, llama.cpp's checks and
// compilation) of typical grammars.
func BenchmarkParse(b *testing.B) {
	for _, name := range []string{"json.gbnf", "toolcall.gbnf", "llama-create-issue.gbnf"} {
		src, err := os.ReadFile(filepath.Join("testdata", "gbnf", name))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strings.TrimSuffix(name, ".gbnf"), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for range b.N {
				if _, err := Parse(string(src)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func ExampleMatcher() {
	g, err := Parse(`root ::= "{\"city\":" " "? ("\"Paris\"" | "\"Oslo\"") "}"`)
	if err != nil {
		panic(err)
	}
	m, _ := NewMatcher(g)
	m.WriteString(`{"city": "`)
	next := m.Allowed()
	fmt.Printf("allowed next: %q\n", next.Bytes())
	fmt.Println(m.Advance('L'), m.Advance('O')) // L is refused, the matcher is unchanged
	_, err = m.WriteString(`slo"`)
	fmt.Println(err, m.Accepts())
	m.WriteString(`}`)
	fmt.Println(m.Accepts())
	// Output:
	// allowed next: "OP"
	// false true
	// <nil> false
	// true
}

// TestRewindAcrossRebuild: 20,000 distinct stack sets overflow the caches,
// which are rebuilt; a Mark from before is refused, and the Matcher goes on
// correctly.
func TestRewindAcrossRebuild(t *testing.T) {
	m, _ := NewMatcher(mustParseGBNFFile(t, "json.gbnf"))
	before := m.Mark()
	open := strings.Repeat("[", 20000)
	if _, err := m.WriteString(open); err != nil {
		t.Fatal(err)
	}
	if m.Rewind(before) {
		t.Fatalf("Rewind to a Mark from before a cache rebuild = true, want false")
	}
	if m.Offset() != len(open) {
		t.Fatalf("a refused Rewind moved the Matcher to %d", m.Offset())
	}
	mk := m.Mark()
	m.WriteString("1]")
	if !m.Rewind(mk) || m.Offset() != len(open) {
		t.Fatalf("Rewind to a fresh Mark failed")
	}
	if _, err := m.WriteString("1" + strings.Repeat("]", 20000)); err != nil || !m.Accepts() {
		t.Fatalf("closing 20,000 arrays: %v, Accepts %v", err, m.Accepts())
	}
}
