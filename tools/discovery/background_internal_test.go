package discovery

import (
	"strings"
	"testing"
)

func TestParseBackground(t *testing.T) {
	for _, tc := range []struct {
		name, text, err string
	}{
		{"good", "# c\ntools\t10\ndetail\t4\n", ""},
		{"no tools line", "detail\t4\n", "tools<TAB>N line first"},
		{"count above tools", "tools\t10\ndetail\t11\n", "in 11 of 10 tools"},
		{"not a count", "tools\t10\ndetail\tmany\n", "want term<TAB>count"},
		{"empty", "# only a comment\n", "no tools line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseBackground(tc.text)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("parseBackground(%q) = %v, want no error", tc.text, err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("parseBackground(%q) = %v, want an error containing %q", tc.text, err, tc.err)
			}
		})
	}
	b, err := loadBackground()
	if err != nil || len(b.share) < 1000 {
		t.Fatalf("the embedded background: %v, %d terms", err, len(b.share))
	}
	if s := b.share["detail"]; s < 0.05 {
		t.Errorf("share of %q = %v, want a word most tool descriptions use", "detail", s)
	}
}

// FuzzParseBackground: any text parses or fails with an error, and every
// share is in (0,1].
func FuzzParseBackground(f *testing.F) {
	f.Add("tools\t10\ndetail\t4\n")
	f.Add("# x\ntools\t0\n")
	f.Fuzz(func(t *testing.T, text string) {
		b, err := parseBackground(text)
		if err != nil {
			return
		}
		for term, s := range b.share {
			if s <= 0 || s > 1 {
				t.Errorf("parseBackground(%q): share[%q] = %v", text, term, s)
			}
		}
	})
}
