package tokens

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// longPieces are pieces at and past longPiece bytes of the shapes a model
// or a hostile input writes: one letter repeated, words run together,
// digits, random bytes and runes (a piece need not be valid UTF-8 here).
func longPieces() []string {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"account", "balance", "transfer", "the", "ing", "tion", "un", "re", "xyz", "ä", "ż", "的", "🙂"}
	var out []string
	for _, n := range []int{longPiece - 1, longPiece, longPiece + 1, 300, 1000, 4000} {
		out = append(out, strings.Repeat("A", n), strings.Repeat("ab", n/2), strings.Repeat("0", n))
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(words[rng.IntN(len(words))])
		}
		out = append(out, b.String())
		raw := make([]byte, n)
		for i := range raw {
			raw[i] = byte(rng.IntN(256))
		}
		out = append(out, string(raw))
	}
	return out
}

// TestCountLongIsCountShort: the heap merge of long pieces leaves as many
// tokens as the pairs' scan, which follows tiktoken's merge step by step.
func TestCountLongIsCountShort(t *testing.T) {
	if _, err := Count(""); err != nil {
		t.Fatal(err)
	}
	for i, p := range longPieces() {
		if short, long := enc.countShort(p), enc.countLong(p); short != long {
			t.Errorf("piece %d (%d bytes, %.20q…): countShort %d, countLong %d", i, len(p), p, short, long)
		}
	}
}

// FuzzCountLong: on any piece, the heap merge agrees with the scan.
func FuzzCountLong(f *testing.F) {
	if _, err := Count(""); err != nil {
		f.Fatal(err)
	}
	f.Add("AAAAAAAAAAAAAAAAAAAAAAAA")
	f.Add("transferthebalanceoftheaccount")
	f.Add("\xff\xfe漢字🙂abc")
	f.Fuzz(func(t *testing.T, p string) {
		if len(p) < 2 || len(p) > 4096 {
			return
		}
		if short, long := enc.countShort(p), enc.countLong(p); short != long {
			t.Fatalf("%q: countShort %d, countLong %d", p, short, long)
		}
	})
}

// BenchmarkCountLongPiece: one piece of 64 KiB of one letter (a giant
// argument string): quadratic before the heap merge.
func BenchmarkCountLongPiece(b *testing.B) {
	text := strings.Repeat("A", 64<<10)
	MustCount(text)
	for b.Loop() {
		MustCount(text)
	}
}
