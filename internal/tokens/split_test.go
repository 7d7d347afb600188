package tokens

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dlclark/regexp2"
	tiktoken "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// reference is tiktoken-go's own o200k_base encoder, which Count must
// agree with.
var reference = sync.OnceValue(func() *tiktoken.Tiktoken {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	e, err := tiktoken.GetEncoding(Encoding)
	if err != nil {
		panic(err)
	}
	return e
})

// o200kPattern is tiktoken-go's o200k_base pattern, which split implements.
var o200kPattern = strings.Join([]string{
	`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
	`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
	`\p{N}{1,3}`,
	` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
	`\s*[\r\n]+`,
	`\s+(?!\S)`,
	`\s+`,
}, "|")

var o200kRegexp = regexp2.MustCompile(o200kPattern, regexp2.None)

// regexpPieces are the pieces of text as the expression finds them, by
// rune offsets.
func regexpPieces(t testing.TB, text string) [][2]int {
	var out [][2]int
	m, err := o200kRegexp.FindStringMatch(text)
	for ; m != nil && err == nil; m, err = o200kRegexp.FindNextMatch(m) {
		out = append(out, [2]int{m.Index, m.Index + m.Length})
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func splitPieces(text string) [][2]int {
	var out [][2]int
	split([]rune(text), func(s, e int) { out = append(out, [2]int{s, e}) })
	return out
}

// checkSplit fails t when split and the expression cut text differently,
// or Count differs from the encoder's own count.
func checkSplit(t *testing.T, text string) {
	t.Helper()
	want, got := regexpPieces(t, text), splitPieces(text)
	if len(want) != len(got) {
		t.Fatalf("%q: split found %d pieces %v, the expression %d %v", text, len(got), got, len(want), want)
	}
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("%q: piece %d is %v, the expression's %v", text, i, got[i], want[i])
		}
	}
	n, err := Count(text)
	if err != nil {
		t.Fatal(err)
	}
	if w := len(reference().EncodeOrdinary(text)); n != w {
		t.Fatalf("Count(%q) = %d, the encoder's %d", text, n, w)
	}
}

// trickyRunes are characters at the edges of the expression's classes:
// every case of letter, marks, digits in other scripts, the whitespace
// the classes tell apart, apostrophes, slashes, invalid UTF-8.
var trickyRunes = []string{
	"a", "Z", "é", "É", "ǅ", "ʰ", "中", "\u0301", "\u0903", "1", "٣", "Ⅻ", "½",
	" ", "  ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u2028", "\u0085", "\v",
	"'", "'s", "'S", "'re", "'LL", "'d", "'x", "/", "\\", "!", "{", "\"", "_", "-", ".", "€", "😀",
	"\xff", "\xe2\x82", "ſ", "K",
}

func TestSplitMatchesRegexp(t *testing.T) {
	t.Run("fixed", func(t *testing.T) {
		for _, s := range []string{
			"", "hello world", `{"type":"object"}`, "don't I'LL we've", "ABCdef", "abcDEF", "É\u0301a",
			"x  \n  y", "a   b", "a \t\n\n  b", "   ", "12345 6", "path/to/file\r\n//x", " !!\n/", "ǅǅa",
			"ʰʰʰ", "中文字", "a\u0301\u0301B", "'s'S", "\xff\xfeabc", "€100/月",
		} {
			checkSplit(t, s)
		}
	})
	t.Run("long pieces", func(t *testing.T) { // past count's buffer of 64 parts
		for _, s := range []string{
			strings.Repeat("ab", 100), strings.Repeat("x", 63), strings.Repeat("x", 64), strings.Repeat("€", 40),
			"Pneumonoultramicroscopicsilicovolcanoconiosis" + strings.Repeat("zq", 30), strings.Repeat("!?", 50),
		} {
			checkSplit(t, s)
		}
	})
	t.Run("random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for range 3000 {
			var sb strings.Builder
			for range r.IntN(24) {
				sb.WriteString(trickyRunes[r.IntN(len(trickyRunes))])
			}
			checkSplit(t, sb.String())
		}
	})
	t.Run("catalogs", func(t *testing.T) {
		files, _ := filepath.Glob("../../examples/transfer/catalog/*.json")
		if len(files) == 0 {
			t.Fatal("no catalogs in examples/transfer/catalog")
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			checkSplit(t, string(b))
		}
	})
}

func FuzzSplit(f *testing.F) {
	for _, s := range trickyRunes {
		f.Add(s + "ab " + s)
	}
	f.Add(`{"name":"create_issue","description":"Create a new issue"}`)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1<<10 {
			return
		}
		checkSplit(t, s)
	})
}

// BenchmarkCountRegexp is [BenchmarkCount] through the encoder alone (the
// expression and the encoding of every piece), for comparison.
func BenchmarkCountRegexp(b *testing.B) {
	text := `{"name":"create_issue","description":"Create a new issue in a GitHub repository","inputSchema":{"type":"object"}}`
	reference()
	b.ReportAllocs()
	for b.Loop() {
		_ = len(reference().EncodeOrdinary(text))
	}
}
