package jsonschema

import (
	"regexp"
	"testing"

	"github.com/dlclark/regexp2"
)

func TestPortable(t *testing.T) {
	tests := []struct {
		p    string
		want bool
	}{
		{`^ACC-[0-9]{5}$`, true},
		{`^[A-Za-z0-9_-]{1,64}$`, true},
		{`^\d{4}-\d{2}-\d{2}$`, true},
		{`^(?:https?|ftp)://\w+$`, true},
		{`^[a-z]+(\.[a-z]+)*$`, true},
		{`^\$?\d+(\.\d{1,2})?$`, true},
		{`ab{2,}c`, true},
		{``, true},
		{`^.*$`, false},           // '.' excludes line terminators in ECMA-262 only
		{`^\s+$`, false},          // \s is Unicode in ECMA-262
		{`^[^a-z]$`, false},       // negated class: code units versus runes
		{`^(?!ignore).*$`, false}, // lookahead
		{`(a)\1`, false},          // backreference
		{`[[:alpha:]]`, false},    // POSIX class in RE2, literal in ECMA-262
		{`a{`, false},             // literal brace in ECMA-262 Annex B
		{`a{,3}`, false},
		{`a}`, false},
		{`[]a]`, false},
		{`\bword\b`, false},
		{`\u0041`, false},
		{`é`, false},
		{`(?i)abc`, false},
		{`(?P<n>a)`, false},
		{`[abc`, false},
		{`abc\`, false},
	}
	for _, tc := range tests {
		t.Run(tc.p, func(t *testing.T) {
			if got := Portable(tc.p); got != tc.want {
				t.Errorf("Portable(%q) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}

var patternInputs = []string{
	"", "a", "ACC-00001", "ACC-0001", "ACC-000011", "acc-00001", "ACC-00001\n", "\nACC-00001",
	"2026-11-29", "https://x_y", "ftp://abc", "http:/x", "$12.50", "12.505", "abbc", "ac", "abbbbc",
	"ACC-0000\U0001F600", "ÀCC-00001", "a\u2028b", "foo.bar", "foo..bar", "x ACC-00002 y",
}

// TestPortableAgrees runs every portable pattern on both engines.
func TestPortableAgrees(t *testing.T) {
	for _, p := range []string{`^ACC-[0-9]{5}$`, `^[A-Za-z0-9_-]{1,64}$`, `^\d{4}-\d{2}-\d{2}$`, `^(?:https?|ftp)://\w+$`,
		`^[a-z]+(\.[a-z]+)*$`, `^\$?\d+(\.\d{1,2})?$`, `ab{2,}c`, `ACC-\d+`, `^$`, `b|^a`} {
		t.Run(p, func(t *testing.T) {
			if !Portable(p) {
				t.Fatalf("Portable(%q) = false, want true", p)
			}
			agree(t, p, patternInputs)
		})
	}
}

func agree(t *testing.T, p string, inputs []string) {
	t.Helper()
	g, err := regexp.Compile(p)
	if err != nil {
		return
	}
	e, err := regexp2.Compile(p, regexp2.ECMAScript)
	if err != nil {
		return
	}
	for _, s := range inputs {
		want, err := e.MatchString(s)
		if err != nil {
			continue
		}
		if got := g.MatchString(s); got != want {
			t.Errorf("pattern %q on %q: RE2 %v, ECMA-262 (regexp2) %v", p, s, got, want)
		}
	}
}

// FuzzPortable checks that a pattern Portable accepts matches the same
// strings on RE2 as on regexp2's ECMAScript mode.
func FuzzPortable(f *testing.F) {
	for _, p := range []string{`^ACC-[0-9]{5}$`, `^\d+(\.\d{1,2})?$`, `(?:a|b)+c{2}`, `[a-f0-9-]+`} {
		for _, s := range patternInputs[:6] {
			f.Add(p, s)
		}
	}
	f.Fuzz(func(t *testing.T, p, s string) {
		if Portable(p) {
			agree(t, p, []string{s})
		}
	})
}
