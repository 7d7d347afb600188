package gbnfcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
)

func TestCheck(t *testing.T) {
	gc := testenv.GBNFCheck(t)
	got := Check(t, gc, `root ::= "a"{2,5} "é"`, [][]byte{[]byte("aaé"), []byte("a"), []byte("aab"), []byte("aa\xff"), nil})
	want := []Verdict{{Accepted: true, Offset: -1}, {Offset: 1}, {Offset: 2}, {Offset: 2}, {Offset: 0}}
	if len(got) != len(want) {
		t.Fatalf("Check returned %d verdicts, want %d", len(got), len(want))
	}
	for i := range want {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if got[i].Accepted != want[i].Accepted || got[i].Offset != want[i].Offset || got[i].GrammarError != "" {
				t.Errorf("verdict %d = %+v, want accepted %v offset %d", i, got[i], want[i].Accepted, want[i].Offset)
			}
		})
	}
	crash := Check(t, gc, `root ::= "a" ( [x]* )*`, [][]byte{[]byte("ax")})
	if !strings.Contains(crash[0].GrammarError, "crashed") {
		t.Errorf("a grammar llama.cpp crashes on: %+v, want a GrammarError about the crash", crash[0])
	}
}

func TestParseOnly(t *testing.T) {
	gc := testenv.GBNFCheck(t)
	if msg := ParseOnly(t, gc, `root ::= [a-z]+`); msg != "" {
		t.Errorf("ParseOnly(valid) = %q, want \"\"", msg)
	}
	if msg := ParseOnly(t, gc, `root ::= "a"{,3}`); !strings.Contains(msg, "expecting an int") {
		t.Errorf("ParseOnly({,3}) = %q, want llama.cpp's 'expecting an int'", msg)
	}
}

// TestBatchAgreesWithGBNFCheck: gbnf-batch must give gbnf-check's verdict
// and offset on every input, including invalid UTF-8, NUL and prefixes.
func TestBatchAgreesWithGBNFCheck(t *testing.T) {
	gc := testenv.GBNFCheck(t)
	if batchProgram(gc) == "" {
		t.Skip("gbnf-batch cannot be built here (g++ or build.sh's objects missing); Check uses gbnf-check alone")
	}
	grammar := `root ::= ws value ws
value ::= "{" ws (str ws ":" ws value (ws "," ws str ws ":" ws value)*)? ws "}" | "[" ws (value (ws "," ws value)*)? ws "]" | str | [0-9]+ | "true" | .
str ::= "\"" [^"\\\x00-\x1F]* "\""
ws ::= [ \t\n]{0,3}`
	var inputs [][]byte
	for _, s := range []string{`{"a": [1, 2, {"b": "é😀"}]}`, `{"a":`, `[1,,2]`, "\"\xff\"", "\"\xc3\"", "\x00", "é", "\xc0\x80", "", "  true  ", "[tru]", `{"k":"v"}x`} {
		for i := 0; i <= len(s); i += 3 {
			inputs = append(inputs, []byte(s[:i]))
		}
		inputs = append(inputs, []byte(s))
	}
	got := Check(t, gc, grammar, inputs)
	dir := t.TempDir()
	gpath := filepath.Join(dir, "g.gbnf")
	if err := os.WriteFile(gpath, []byte(grammar), 0o644); err != nil {
		t.Fatal(err)
	}
	want := make([]Verdict, len(inputs))
	checkEach(t, gc, dir, gpath, inputs, want, make([]bool, len(inputs)))
	for i := range inputs {
		if got[i].Accepted != want[i].Accepted || got[i].Offset != want[i].Offset {
			t.Errorf("%q: batch %v %d, gbnf-check %v %d (%s)", inputs[i], got[i].Accepted, got[i].Offset, want[i].Accepted, want[i].Offset, want[i].Output)
		}
	}
}
