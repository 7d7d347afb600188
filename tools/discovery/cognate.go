package discovery

import (
	"cmp"
	"slices"
	"strings"
)

// Cognates: a Spanish or Polish word that the lexicon does not translate is
// often an international word spelt the language's way ("kolekcje",
// "indeks", "migraciones", "rekordow", "sesion"), and the catalog's English
// says the same word ("collection", "index", "migration", "record",
// "session"). cognateTerms finds the catalog's terms such a word spells:
// both are reduced to a skeleton (skeleton) and compared by their common
// prefix, which must cover the English stem and be at least
// cognateMinPrefix bytes, or be at least cognateLongPrefix bytes.
const (
	cognateMinPrefix  = 5
	cognateLongPrefix = 6
	// cognateMinWord is the shortest request word looked up: shorter
	// words share prefixes with too many English ones.
	cognateMinWord = 5
)

// skeleton appends to dst the folded word w with the spellings that
// Spanish, Polish and English write differently for one sound made one:
// Polish "cj" and Spanish "ci" before "on" as English "ti" ("-cion":
// "-tion"; a Polish noun's "-cja" in any case as "-tion": "sekcje",
// "section"), Spanish "xion" as "ction", "ks" as "x", "k" and "q" as "c",
// "w" as "v", "z" as "s" ("depozyt", "deposit"; "organizar",
// "organise"), "y" and "j" as "i", "ph" as "f", "th" as "t", and doubled
// letters once.
func skeleton(dst []byte, w string) []byte {
	for i := 0; i < len(w); i++ {
		c := w[i]
		rest := w[i:]
		switch {
		case strings.HasPrefix(rest, "cj") && polishCaseEnding(rest[2:]):
			return append(appendOnce(dst, 't'), "ion"...)
		case strings.HasPrefix(rest, "cj"):
			dst = appendOnce(dst, 't')
			c = 'i'
			i++
		case strings.HasPrefix(rest, "cion"):
			c = 't'
		case strings.HasPrefix(rest, "xion"):
			dst = appendOnce(dst, 'c')
			c = 't'
		case strings.HasPrefix(rest, "ks"):
			c = 'x'
			i++
		case strings.HasPrefix(rest, "ph"):
			c = 'f'
			i++
		case strings.HasPrefix(rest, "th"):
			c = 't'
			i++
		case c == 'k' || c == 'q':
			c = 'c'
		case c == 'w':
			c = 'v'
		case c == 'z':
			c = 's'
		case c == 'y' || c == 'j':
			c = 'i'
		}
		dst = appendOnce(dst, c)
	}
	return dst
}

// polishCaseEnding reports whether s, what follows "cj" in a word, is the
// case ending of a Polish noun in "-cja" (sekcja, sekcji, sekcje,
// sekcjach, sekcjami, sekcjom): the noun is then English "-tion" whatever
// its case.
func polishCaseEnding(s string) bool {
	switch s {
	case "a", "e", "i", "o", "ach", "ami", "om":
		return true
	}
	return false
}

// appendOnce appends c unless dst already ends in it.
func appendOnce(dst []byte, c byte) []byte {
	if n := len(dst); n > 0 && dst[n-1] == c {
		return dst
	}
	return append(dst, c)
}

// cognateIndex maps the first cognateMinPrefix bytes of the skeleton of
// every term the cards use to those terms and their skeletons.
type cognateIndex map[string][]cognateTerm

type cognateTerm struct {
	id   uint32
	skel string
}

// buildCognates sets x.cognates from x's terms and postings. It is built
// with the index, not on the first Spanish or Polish request: at 100,000
// tools it takes 8–23 ms and 0.3 MB, a request's latency but not a
// build's.
func (x *Index) buildCognates() {
	c := cognateIndex{}
	var buf []byte
	for t, id := range x.terms {
		if len(x.postings[id]) == 0 || len(t) < cognateMinPrefix || isDigits(t) {
			continue
		}
		buf = skeleton(buf[:0], t)
		if len(buf) < cognateMinPrefix {
			continue
		}
		k := string(buf[:cognateMinPrefix])
		c[k] = append(c[k], cognateTerm{id, string(buf)})
	}
	// In term order, not the map's: a request's terms are summed in
	// the order they come, and floating-point sums in another order
	// differ in the last bits (rankings must not vary run to run).
	for _, ts := range c {
		slices.SortFunc(ts, func(a, b cognateTerm) int { return cmp.Compare(a.id, b.id) })
	}
	x.cognates = c
}

// cognateTerms appends to dst the catalog terms that the untranslated
// words of a Spanish or Polish request (translate's unknown) spell as
// cognates, and returns dst. A word whose English reading the cards use
// already reaches them.
func (x *Index) cognateTerms(dst []uint32, unknown []unknownWord) []uint32 {
	var buf [64]byte
	for _, u := range unknown {
		if len(u.word) < cognateMinWord || len(u.word) > len(buf) || isDigits(u.word) || slices.ContainsFunc(u.english, x.uses) {
			continue
		}
		skel := skeleton(buf[:0], u.word)
		if len(skel) < cognateMinPrefix {
			continue
		}
		for _, ct := range x.cognates[string(skel[:cognateMinPrefix])] {
			n := commonPrefix(skel, ct.skel)
			if n >= cognateLongPrefix || (n == len(ct.skel) && n >= cognateMinPrefix) {
				dst = append(dst, ct.id)
			}
		}
	}
	return dst
}

func commonPrefix(a []byte, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
