package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPrefix cuts ASCII, two- and four-byte characters at and inside a
// bound, and keeps bytes that are not UTF-8 as they are.
func TestPrefix(t *testing.T) {
	for _, c := range []struct {
		name, s string
		n       int
		want    string
	}{
		{"short", "abc", 5, "abc"},
		{"exact", "abc", 3, "abc"},
		{"ascii", "abcdef", 4, "abcd"},
		{"inside a two-byte character", "aé", 2, "a"},
		{"after a two-byte character", "aéb", 3, "aé"},
		{"inside a four-byte character", "a😀", 3, "a"},
		{"inside the first character", "😀", 2, ""},
		{"zero", "abc", 0, ""},
		{"negative", "abc", -1, ""},
		{"invalid bytes kept", "a\xff\xffb", 3, "a\xff\xff"},
		{"continuation bytes only", "\x80\x80\x80\x80\x80\x80", 4, "\x80\x80\x80\x80"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Prefix(c.s, c.n); got != c.want {
				t.Errorf("Prefix(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
			}
		})
	}
}

func TestShorten(t *testing.T) {
	if got := Shorten("abc", 3); got != "abc" {
		t.Errorf("Shorten uncut = %q", got)
	}
	if got := Shorten("aéb", 2); got != "a…" {
		t.Errorf("Shorten = %q, want %q", got, "a…")
	}
}

// FuzzPrefix: the prefix is a prefix of at most n bytes, at most 3 short
// of n, and valid UTF-8 whenever s is.
func FuzzPrefix(f *testing.F) {
	f.Add("aé😀b", 4)
	f.Add(strings.Repeat("é", 10), 7)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 64
		p := Prefix(s, n)
		if !strings.HasPrefix(s, p) || len(p) > max(n, 0) && len(p) != len(s) {
			t.Fatalf("Prefix(%q, %d) = %q", s, n, p)
		}
		if len(s) > n && len(p) < max(n, 0)-(utf8.UTFMax-1) {
			t.Fatalf("Prefix(%q, %d) = %q: backed off too far", s, n, p)
		}
		if utf8.ValidString(s) && !utf8.ValidString(p) {
			t.Fatalf("Prefix(%q, %d) = %q: not valid UTF-8", s, n, p)
		}
	})
}

func TestEnds(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"short enough", "open an issue", 13, "open an issue"},
		{"both ends", "open an issue " + strings.Repeat("x", 100) + " thanks", 33, "open an issue … xxxxxxx thanks"},
		{"a character at each cut", "ééééé" + strings.Repeat("x", 20) + "ééééé", 15, "éé … ééé"},
		{"too small for the gap", "abcdefghij", 5, "abcde"},
		{"negative", "abc", -1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Ends(tc.s, tc.n); got != tc.want {
				t.Errorf("Ends(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
		})
	}
}

// FuzzEnds: the result is s when s fits, else at most n bytes that start
// with a prefix of s and end with a suffix of s, valid UTF-8 whenever s is.
func FuzzEnds(f *testing.F) {
	f.Add("aé😀b"+strings.Repeat("é", 20)+"😀", 17)
	f.Add(strings.Repeat("x", 40), 10)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 128
		e := Ends(s, n)
		if len(s) <= max(n, 0) {
			if e != s {
				t.Fatalf("Ends(%q, %d) = %q, want s", s, n, e)
			}
			return
		}
		if len(e) > max(n, 0) {
			t.Fatalf("Ends(%q, %d) = %q: %d bytes", s, n, e, len(e))
		}
		ends := strings.HasPrefix(s, e) // too short a bound for the gap
		for i := 0; !ends && i <= len(e)-len(endsGap); i++ {
			ends = e[i:i+len(endsGap)] == endsGap && strings.HasPrefix(s, e[:i]) && strings.HasSuffix(s, e[i+len(endsGap):])
		}
		if !ends {
			t.Fatalf("Ends(%q, %d) = %q: not s's ends", s, n, e)
		}
		if utf8.ValidString(s) && !utf8.ValidString(e) {
			t.Fatalf("Ends(%q, %d) = %q: not valid UTF-8", s, n, e)
		}
	})
}
