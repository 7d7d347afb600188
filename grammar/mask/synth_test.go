package mask

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// synthWords are the seeds of a synthesized vocabulary: English and JSON
// fragments of the kind a tool call is made of.
var synthWords = strings.Fields(`the of and to in is for on that with as it by at from this be are or an was
not have but all can will one has more about which their if out up so what when your new use get set list name
id type value key data file path user account amount source target transfer balance transaction query text
action call answer tool arguments owner repo title body issue pull request search limit page sort order
message channel content url http https www com json string number true false null error result status
create update delete read write open close start end time date day year first last next prev count total
ACC USD EUR ing ed er ly tion ment ness able ize ous ive al ic ful less est`)

// synthVocab returns a vocabulary of n tokens grown like a BPE
// vocabulary: every byte (as byte-fallback tokens), JSON punctuation,
// digits, words with and without a leading space and capitalised, a few
// multi-byte characters, then merges of random pairs of tokens (short
// ones more often) until there are n. Token 0 is <unk> and 1 <s>
// (control), 2 </s> (end), 3 the empty token.
func synthVocab(tb testing.TB, seed uint64, n int) *Vocabulary {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	var pieces []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] && len(pieces) < n {
			seen[p] = true
			pieces = append(pieces, p)
		}
	}
	pieces = append(pieces, "<unk>", "<s>", "</s>", "")
	for b := 0; b < 256; b++ {
		add(string([]byte{byte(b)}))
	}
	for _, p := range strings.Fields(`{" ": ", "} "} { } [ ] [" "] \" \\ \n \u , : ": ",  ," ", ":"`) {
		add(p)
	}
	add(" ")
	add("  ")
	add("    ")
	add("\n")
	add("\n  ")
	add(` "`)
	add(`": "`)
	add(`", "`)
	for i := 0; i < 100; i++ {
		add(strings.Repeat("0123456789"[i%10:i%10+1], 1) + string(rune('0'+i/10)))
	}
	for _, r := range "éüñ中文日本語😀─•€" {
		add(string(r))
		add(" " + string(r))
	}
	for _, w := range synthWords {
		add(w)
		add(" " + w)
		add(strings.ToUpper(w[:1]) + w[1:])
		add(" " + strings.ToUpper(w[:1]) + w[1:])
	}
	base := len(pieces)
	for len(pieces) < n {
		pick := func() string {
			i := rng.IntN(len(pieces)-4) + 4
			if rng.IntN(3) > 0 { // short tokens more often
				i = 4 + rng.IntN(min(base, len(pieces))-4)
			}
			return pieces[i]
		}
		a, b := pick(), pick()
		if len(a)+len(b) > 16 || a == "" || b == "" {
			continue
		}
		// mostly merge text with text, as BPE over real text does
		if !utf8.ValidString(a+b) && rng.IntN(8) > 0 {
			continue
		}
		add(a + b)
	}
	bs := make([][]byte, len(pieces))
	kinds := make([]Kind, len(pieces))
	for i, p := range pieces {
		bs[i] = []byte(p)
	}
	kinds[0], kinds[1], kinds[2] = KindControl, KindControl, KindEnd
	v, err := NewVocabulary(bs, kinds)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// grownVocab extends v to n tokens by merging pairs of its text tokens
// (as a larger BPE vocabulary would): a 128k-class vocabulary with v's
// byte statistics.
func grownVocab(tb testing.TB, v *Vocabulary, seed uint64, n int) *Vocabulary {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 9))
	var pieces [][]byte
	var kinds []Kind
	seen := map[string]bool{}
	var text []int
	for id := range v.Len() {
		pieces = append(pieces, v.Piece(id))
		kinds = append(kinds, v.Kind(id))
		seen[string(v.Piece(id))] = true
		if v.textual(id) {
			text = append(text, id)
		}
	}
	for len(pieces) < n {
		a, b := v.Piece(text[rng.IntN(len(text))]), v.Piece(text[rng.IntN(len(text))])
		if len(a)+len(b) > 24 {
			continue
		}
		p := append(append([]byte(nil), a...), b...)
		if seen[string(p)] || !utf8.Valid(p) && rng.IntN(8) > 0 {
			continue
		}
		seen[string(p)] = true
		pieces = append(pieces, p)
		kinds = append(kinds, KindText)
	}
	out, err := NewVocabulary(pieces, kinds)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
