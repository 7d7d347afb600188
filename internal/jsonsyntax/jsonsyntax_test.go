package jsonsyntax

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
)

// numberRE is RFC 8259's number grammar, the reference [FuzzNumber] checks
// Number against.
var numberRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`)

func TestNumber(t *testing.T) {
	for _, c := range []struct {
		in    string
		end   int
		fault NumberFault
	}{
		{"0", 1, NumberOK},
		{"-0", 2, NumberOK},
		{"123,", 3, NumberOK},
		{"01", 1, NumberOK}, // the scan stops after the 0: the parser refuses what follows
		{"1.5e+10]", 7, NumberOK},
		{"-1E-2", 5, NumberOK},
		{"-", 1, NumberInt},
		{"-x", 1, NumberInt},
		{"1.", 2, NumberFraction},
		{"1.e5", 2, NumberFraction},
		{"1e", 2, NumberExponent},
		{"1e+", 3, NumberExponent},
		{"2E-x", 3, NumberExponent},
	} {
		t.Run(c.in, func(t *testing.T) {
			end, fault := Number([]byte(c.in), 0)
			if end != c.end || fault != c.fault {
				t.Errorf("Number(%q) = %d, %d, want %d, %d", c.in, end, fault, c.end, c.fault)
			}
		})
	}
}

// FuzzNumber checks Number against the RFC 8259 number grammar written as
// a regular expression: a complete number ends where the longest match
// ends, and encoding/json agrees that it is a number.
func FuzzNumber(f *testing.F) {
	for _, s := range []string{"0", "-12.5e+3", "1.", "1e", "-", "007", "3.14x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
			return
		}
		end, fault := Number([]byte(s), 0)
		m := numberRE.FindString(s)
		if fault != NumberOK {
			if m != "" && len(m) >= end {
				t.Fatalf("Number(%q) fails at %d (%d), but %q is a number", s, end, fault, m)
			}
			return
		}
		if s[:end] != m {
			t.Fatalf("Number(%q) scans %q, the grammar %q", s, s[:end], m)
		}
		var v json.Number
		if err := json.Unmarshal([]byte(s[:end]), &v); err != nil {
			t.Fatalf("Number(%q) scans %q, which encoding/json refuses: %v", s, s[:end], err)
		}
	})
}

func TestHex4(t *testing.T) {
	for _, c := range []struct {
		in string
		r  rune
		ok bool
	}{
		{"00e9", 0xE9, true}, {"D83D", 0xD83D, true}, {"abcF", 0xABCF, true},
		{"12g4", 0, false}, {"123", 0, false}, {"", 0, false},
	} {
		t.Run(c.in, func(t *testing.T) {
			if r, ok := Hex4([]byte(c.in), 0); r != c.r || ok != c.ok {
				t.Errorf("Hex4(%q) = %#x, %v, want %#x, %v", c.in, r, ok, c.r, c.ok)
			}
		})
	}
}

func TestEscapeAndSpace(t *testing.T) {
	for e, want := range map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'} {
		t.Run(string(rune(e)), func(t *testing.T) {
			if got, ok := Escape(e); !ok || got != want {
				t.Errorf(`Escape(%q) = %q, %v, want %q`, e, got, ok, want)
			}
		})
	}
	for i, e := range []byte{'u', 'a', 'x', '0', '\''} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if _, ok := Escape(e); ok {
				t.Errorf("Escape(%q) = ok, want not an escape", e)
			}
		})
	}
	if got := Space([]byte(" \t\r\n x"), 0); got != 5 {
		t.Errorf("Space = %d, want 5", got)
	}
	if got := Space([]byte("  "), 1); got != 2 {
		t.Errorf("Space at the end = %d, want 2", got)
	}
}

// TestDescribe: the character at an offset, named as a person sees it
// (each input holds it after a "[").
func TestDescribe(t *testing.T) {
	want := map[string]string{
		"[x]":      "character 'x'",
		"[é]":      "character 'é'",
		"[\uFEFF]": "byte order mark (U+FEFF)",
		"[\xff]":   "byte 0xff, not UTF-8",
		"[\xc3":    "byte 0xc3, not UTF-8", // a character cut short
	}
	for in, w := range want {
		t.Run(w, func(t *testing.T) {
			if got := Describe([]byte(in), 1); got != w {
				t.Errorf("Describe(%q, 1) = %q, want %q", in, got, w)
			}
		})
	}
}
