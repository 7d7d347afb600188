package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

const testAff = `SET UTF-8
FLAG UTF-8

PFX N Y 1
PFX N 0 nie .

SFX A Y 3
SFX A ć ł [aeę]ć
SFX A ać aj ać
SFX A ć my/B ć

SFX B Y 1
SFX B 0 ż y
`

const testDic = `3
pokazać/AN
usunąć/A
kot
`

func TestHunspellForms(t *testing.T) {
	dir := t.TempDir()
	aff, dic := filepath.Join(dir, "t.aff"), filepath.Join(dir, "t.dic")
	if err := os.WriteFile(aff, []byte(testAff), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dic, []byte(testDic), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := readHunspell(aff, dic)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		word string
		want []string
	}{
		// suffixes, a continuation class (my → myż), the prefix on the
		// word and, as a cross product, on its suffixed forms
		{"pokazać", []string{"pokazał", "pokazaj", "pokazamy", "pokazamyż", "niepokazać", "niepokazał", "niepokazaj", "niepokazamy"}},
		// the condition [aeę]ć does not hold for "ąć", ać does not either
		{"usunąć", []string{"usunąmy", "usunąmyż"}},
		{"kot", nil},
	} {
		t.Run(tt.word, func(t *testing.T) {
			got := h.forms(tt.word)
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("forms(%q) = %q, want %q", tt.word, got, want)
			}
		})
	}
}

func TestHunspellRejects(t *testing.T) {
	for _, tt := range []struct{ name, aff string }{
		{"long flags", "FLAG long\n"},
		{"aliases", "AF 1\n"},
		{"unclosed condition", "SFX A Y 1\nSFX A 0 s [ab\n"},
		{"bad count", "SFX A Y x\n"},
		{"short rule", "SFX A Y 1\nSFX A 0 s\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := &hunspell{classes: map[rune]*affixClass{}, words: map[string][]rune{}}
			if err := h.parseAff("t.aff", tt.aff); err == nil {
				t.Errorf("parseAff(%q) = nil, want an error", tt.aff)
			}
		})
	}
}

// FuzzHunspell feeds arbitrary affix and dictionary text to the parser and
// the expansion: an error is fine, a panic is not.
func FuzzHunspell(f *testing.F) {
	f.Add(testAff, testDic)
	f.Add("SFX A Y 1\nSFX A abc d .\n", "ab/A\n")
	f.Add("PFX A N 1\nPFX A xyz 0 [^x]\n", "x/A\n")
	f.Fuzz(func(t *testing.T, aff, dic string) {
		h := &hunspell{classes: map[rune]*affixClass{}, words: map[string][]rune{}}
		if err := h.parseAff("f.aff", aff); err != nil {
			return
		}
		h.parseDic(dic)
		n := 0
		for w := range h.words {
			if n++; n > 50 {
				break
			}
			h.forms(w)
		}
	})
}
