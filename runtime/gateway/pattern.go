package gateway

import (
	"regexp"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// patternTimeout bounds one ECMA-262 pattern match (regexp2 backtracks), so
// a hostile argument cannot pin a CPU.
const patternTimeout = 100 * time.Millisecond

type ecmaRegexp regexp2.Regexp

func (re *ecmaRegexp) MatchString(s string) bool {
	ok, err := (*regexp2.Regexp)(re).MatchString(s)
	return err == nil && ok
}

func (re *ecmaRegexp) String() string { return (*regexp2.Regexp)(re).String() }

// compileECMA compiles a JSON Schema pattern with ECMA-262 semantics. A
// pattern in the subset where ECMA-262 and RE2 provably agree (rePortable)
// runs on Go's linear-time regexp; every other pattern (lookarounds,
// backreferences, '.', negated classes, \s, Unicode) on regexp2 in
// ECMAScript mode, with a match timeout.
func compileECMA(s string) (jsonschema.Regexp, error) {
	if rePortable(s) {
		if re, err := regexp.Compile(s); err == nil {
			return re, nil
		}
	}
	re, err := regexp2.Compile(s, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = patternTimeout
	return (*ecmaRegexp)(re), nil
}

// rePortable reports whether pattern p means the same in ECMA-262 (without
// flags) and in RE2 for every input string, so MatchString agrees. The
// subset: printable ASCII only; literals; ^ and $ (both anchor at the ends
// of the input without a multiline flag); groups ( ) and (?: ); | ; the
// quantifiers * + ? and {n} {n,} {n,m} (lazy or not: a boolean match does
// not depend on it); positive classes [...] of ASCII literals and ranges;
// \d and \w (ASCII in both); escaped punctuation. Every atom then matches
// ASCII characters only, so the engines' different units (UTF-16 code units
// versus runes) cannot change whether a match exists. Excluded: '.' (line
// terminators differ), negated classes, \s \S \D \W \b \B (Unicode or
// boundary differences), backreferences, lookarounds and other (? forms,
// \u \x \c escapes, POSIX [: classes, and a '{' that is not a quantifier
// (a literal in ECMA-262 Annex B, an error or literal in RE2).
func rePortable(p string) bool {
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < 0x20 || c > 0x7e {
			return false
		}
		switch {
		case c == '\\':
			if i+1 >= len(p) {
				return false
			}
			i++
			switch e := p[i]; {
			case e == 'd' || e == 'w':
			case isPunct(e):
			default:
				return false
			}
		case inClass:
			switch c {
			case ']':
				inClass = false
			case '[':
				return false
			}
		case c == '[':
			if i+1 < len(p) && (p[i+1] == '^' || p[i+1] == ']') {
				return false
			}
			inClass = true
		case c == '.':
			return false
		case c == '(':
			if i+1 < len(p) && p[i+1] == '?' {
				if i+2 >= len(p) || p[i+2] != ':' {
					return false
				}
				i += 2
			}
		case c == '{':
			j := quantifierEnd(p, i)
			if j < 0 {
				return false
			}
			i = j
		case c == '}' || c == ']':
			return false
		}
	}
	return !inClass
}

func isPunct(c byte) bool {
	switch c {
	case '\\', '^', '$', '.', '|', '?', '*', '+', '(', ')', '[', ']', '{', '}', '/', '-':
		return true
	}
	return false
}

// quantifierEnd returns the index of the '}' closing a {n}, {n,} or {n,m}
// quantifier that starts at p[i] == '{', or -1.
func quantifierEnd(p string, i int) int {
	j := i + 1
	digits := func() int {
		n := 0
		for j < len(p) && p[j] >= '0' && p[j] <= '9' {
			j++
			n++
		}
		return n
	}
	if digits() == 0 {
		return -1
	}
	if j < len(p) && p[j] == ',' {
		j++
		digits()
	}
	if j < len(p) && p[j] == '}' {
		return j
	}
	return -1
}
