// Package masktest holds what the tests that compare grammar/mask's token
// masks with llama.cpp's grammar sampler share: the names of the
// differences by design (grammar/mask's package documentation), which of
// them explains a token one side allows and the other refuses, and the
// random walk's choice of the next token. It knows tokens only as
// [Token] values, so that grammar/mask's own tests can use it.
package masktest

import (
	"bytes"
	"math/rand/v2"
	"slices"

	"github.com/toolgate/toolgate/grammar/gbnf"
)

// The differences by design between llama.cpp's grammar sampler and
// grammar/mask: llama.cpp is the laxer one in each.
const (
	DivControl = "control token matched by its text"
	DivUTF8    = "invalid UTF-8 that llama.cpp's decoder takes"
	DivNUL     = "a NUL inside the piece (llama.cpp reads up to it)"
	DivEnd     = "end token inside an unfinished code point"
)

// Token is what the helpers need to know of a vocabulary's token.
type Token struct {
	Piece        []byte
	Control, End bool
}

// Divergence names the difference by design that explains tok being
// allowed by one side only after out (midCodePoint: out ends inside a
// code point), or "" when none does. Only llama.cpp may be the laxer one:
// ours (toolgate allows it) is never explained.
func Divergence(tok Token, out []byte, midCodePoint, ours bool) string {
	if ours {
		return ""
	}
	switch {
	case tok.Control:
		return DivControl
	case tok.End && midCodePoint:
		return DivEnd
	case bytes.IndexByte(tok.Piece, 0) > 0:
		return DivNUL
	case !ValidPrefix(append(slices.Clone(out), tok.Piece...)):
		return DivUTF8
	}
	return ""
}

var anyText = func() *gbnf.Grammar {
	g, err := gbnf.Parse(`root ::= .*`)
	if err != nil {
		panic(err)
	}
	return g
}()

// ValidPrefix reports whether b is valid UTF-8 by the gbnf matcher's
// rules, allowing an unfinished code point at the end: whether the
// grammar of any text takes it byte by byte.
func ValidPrefix(b []byte) bool {
	m, _ := gbnf.NewMatcher(anyText)
	_, err := m.Write(b)
	return err == nil
}

// Pick chooses the next token of a random walk among the n tokens, those
// allowed: the end when allowed, half the time; else a structural token
// (JSON punctuation or digits) half the time, so that walks get through
// objects; else any. false when none is allowed.
func Pick(n int, allowed func(id int) bool, token func(id int) Token, rng *rand.Rand) (int, bool) {
	var all, structural []int
	end := -1
	for id := range n {
		if !allowed(id) {
			continue
		}
		tok := token(id)
		if tok.End {
			end = id
			continue
		}
		all = append(all, id)
		if bytes.ContainsAny(tok.Piece, "\"{}[],:0123456789") {
			structural = append(structural, id)
		}
	}
	switch {
	case end >= 0 && (len(all) == 0 || rng.IntN(2) == 0):
		return end, true
	case len(structural) > 0 && rng.IntN(2) == 0:
		return structural[rng.IntN(len(structural))], true
	case len(all) > 0:
		return all[rng.IntN(len(all))], true
	}
	return 0, false
}
