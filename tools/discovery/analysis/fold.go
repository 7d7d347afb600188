package analysis

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// special maps letters that NFKD leaves whole to their folded spelling.
var special = map[rune]string{
	'ß': "ss", 'ẞ': "ss",
	'ł': "l", 'Ł': "l",
	'đ': "d", 'Đ': "d",
	'ø': "o", 'Ø': "o",
	'æ': "ae", 'Æ': "ae",
	'œ': "oe", 'Œ': "oe",
	'ı': "i",
	'þ': "th", 'Þ': "th",
	'ð': "d", 'Ð': "d",
	'ħ': "h", 'Ħ': "h",
	'ŀ': "l", 'Ŀ': "l",
}

// foldRanges are the blocks whose letters fold to something other than
// their plain lower case: Latin with diacritics, Greek and Cyrillic with
// accents, Latin Extended Additional, Greek Extended, ligatures and
// fullwidth forms. Letters elsewhere fold with [unicode.ToLower] alone.
var foldRanges = [][2]rune{
	{0x00C0, 0x0250}, {0x0370, 0x0530}, {0x1E00, 0x2000}, {0xFB00, 0xFB07}, {0xFF01, 0xFF5F},
}

var (
	foldOnce  sync.Once
	foldTable map[rune]string
)

// buildFoldTable precomputes, once, the folded spelling of every rune in
// foldRanges whose fold differs from [unicode.ToLower].
func buildFoldTable() {
	t := make(map[rune]string, 1500)
	var b strings.Builder
	for _, rg := range foldRanges {
		for r := rg[0]; r < rg[1]; r++ {
			if s, ok := special[r]; ok {
				t[r] = s
				continue
			}
			b.Reset()
			wordRune := unicode.IsLetter(r) || unicode.IsDigit(r)
			for _, d := range norm.NFKD.String(string(r)) {
				if unicode.Is(unicode.Mn, d) {
					continue
				}
				if wordRune && !unicode.IsLetter(d) && !unicode.IsDigit(d) {
					// A letter must not fold to a separator (U+037A
					// decomposes to a space and a combining mark).
					continue
				}
				if s, ok := special[d]; ok {
					b.WriteString(s)
					continue
				}
				b.WriteRune(unicode.ToLower(d))
			}
			if s := b.String(); s != string(unicode.ToLower(r)) {
				t[r] = s
			}
		}
	}
	foldTable = t
}

// appendFold appends the folded spelling of r to b.
func appendFold(b []byte, r rune) []byte {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(b, byte(r))
	}
	foldOnce.Do(buildFoldTable)
	if s, ok := foldTable[r]; ok {
		return append(b, s...)
	}
	if unicode.In(r, unicode.Mn, unicode.Me) {
		return b
	}
	return utf8.AppendRune(b, unicode.ToLower(r))
}

// Fold returns s folded for comparison: compatibility-decomposed (NFKD),
// combining marks removed, lower-cased, with ß → ss, ł → l, đ → d, ø → o,
// æ → ae, œ → oe, ı → i and þ → th. Characters other than letters keep their
// place, so Fold("Crème-Brûlée") is "creme-brulee". Fold returns s itself
// when s is already folded ASCII.
func Fold(s string) string {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			break
		}
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+4)
	b = append(b, s[:i]...)
	for _, r := range s[i:] {
		b = appendFold(b, r)
	}
	return string(b)
}
