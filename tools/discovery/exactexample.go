package discovery

import (
	"unicode"
	"unicode/utf8"

	"github.com/toolgate/toolgate/tools"
)

// exactExample returns the place, after the first, of the first of ranked
// (best first) one of whose tool's examples is the request itself,
// compared word by word ([sameWords]), or 0 when there is none or the
// first has one too: an operator who wrote "open a pull request" as an
// example request of a tool (a card overlay, tools/cards, or one learned
// from the discovery log) has said which tool that request means, and the
// fused score, which also weighs the tool's description and the other
// tools' words, must not rank another above it. Only [tools.Card.Examples]
// count: a catalog file or an MCP server cannot write them, whereas a
// catalog's aliases are its author's, and an alias equal to a common
// request ("transfer funds") would give any catalog a rank-1 lever
// (security invariant 10; the stuffing tests of examples/transfer/finance).
// Only the ranking is looked in (ShortlistTo passes its first
// max(K, [Options.K]), so that a request's k does not decide it): a tool
// the principal may not use, or that the search did not rank, is never
// added. It allocates nothing.
func exactExample[T any](query string, ranked []T, tool func(T) *tools.Tool) int {
	for i := 1; i < len(ranked); i++ {
		for _, a := range tool(ranked[i]).Card.Examples {
			if !sameWords(query, a) {
				continue
			}
			for _, b := range tool(ranked[0]).Card.Examples {
				if sameWords(query, b) {
					return 0 // the first has the example too
				}
			}
			return i
		}
	}
	return 0
}

// moveFirst moves s[i] to the front of s, keeping the order of the rest.
func moveFirst[T any](s []T, i int) {
	v := s[i]
	copy(s[1:i+1], s[:i])
	s[0] = v
}

// sameWords reports whether a and b hold the same words: the same runs of
// letters and digits, case-folded, whatever separates them ("Open a
// pull-request!" and "open a pull request" do; "open a PR" and "open a pull
// request" do not). An empty text has no words and matches nothing.
func sameWords(a, b string) bool {
	i, j := 0, 0
	words := 0
	for {
		i, j = skipSeparators(a, i), skipSeparators(b, j)
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b) && words > 0
		}
		// Compare one word of each.
		for {
			ra, na := wordRune(a, i)
			rb, nb := wordRune(b, j)
			if na == 0 || nb == 0 {
				if na != nb {
					return false // one word ends before the other
				}
				break
			}
			if ra != rb && unicode.ToLower(ra) != unicode.ToLower(rb) {
				return false
			}
			i, j = i+na, j+nb
		}
		words++
	}
}

// skipSeparators returns the index of the first letter or digit of s at
// or after i (len(s) when none).
func skipSeparators(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return i
		}
		i += n
	}
	return i
}

// wordRune returns the letter or digit at s[i] and its length, or 0 for a
// separator or the end.
func wordRune(s string, i int) (rune, int) {
	if i >= len(s) {
		return 0, 0
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		return 0, 0
	}
	return r, n
}
