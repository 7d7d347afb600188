package gbnfcheck

import (
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
		if got[i].Accepted != want[i].Accepted || got[i].Offset != want[i].Offset || got[i].GrammarError != "" {
			t.Errorf("verdict %d = %+v, want accepted %v offset %d", i, got[i], want[i].Accepted, want[i].Offset)
		}
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
