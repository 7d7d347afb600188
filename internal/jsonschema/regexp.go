package jsonschema

import (
	"fmt"
	"regexp"
	"time"

	"github.com/dlclark/regexp2"
)

// DefaultMatchTimeout bounds one backtracking match of a [Regexp] used
// outside a Schema's validation deadline (a Schema's patterns share the
// deadline of the whole validation instead).
const DefaultMatchTimeout = 100 * time.Millisecond

// Regexp is a JSON [Schema] `pattern` compiled with ECMA-262 semantics: on
// Go's linear-time regexp when the pattern is in the subset where ECMA-262
// and RE2 provably agree ([Portable]), else on regexp2 in ECMAScript mode,
// whose backtracking is bounded by [DefaultMatchTimeout] per match. Safe for
// concurrent use.
type Regexp struct {
	pattern string
	re2     *regexp.Regexp  // set when the pattern is Portable
	ecma    *regexp2.Regexp // set otherwise
}

// CompileRegexp compiles pattern with ECMA-262 semantics. The error names
// the pattern.
func CompileRegexp(pattern string) (*Regexp, error) {
	r := &Regexp{pattern: pattern}
	if Portable(pattern) {
		if re, err := regexp.Compile(pattern); err == nil {
			r.re2 = re
			return r, nil
		}
	}
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript)
	if err != nil {
		return nil, fmt.Errorf("jsonschema: pattern %q: %v", pattern, err)
	}
	re.MatchTimeout = DefaultMatchTimeout
	r.ecma = re
	return r, nil
}

// Linear reports whether the pattern runs on RE2 (time linear in the input).
func (r *Regexp) Linear() bool { return r.re2 != nil }

// String returns the pattern.
func (r *Regexp) String() string { return r.pattern }

// MatchString reports whether s contains a match. A backtracking match that
// runs past [DefaultMatchTimeout] returns [ErrDeadline]: no answer, rather than
// a guess.
func (r *Regexp) MatchString(s string) (bool, error) {
	if r.re2 != nil {
		return r.re2.MatchString(s), nil
	}
	ok, err := r.ecma.MatchString(s)
	if err != nil {
		return false, fmt.Errorf("%w: pattern %q: %v", ErrDeadline, r.pattern, err)
	}
	return ok, nil
}

// budgetRegexp is a backtracking pattern of one schema instance: every
// match gets what is left of the instance's validation deadline. Only the
// goroutine holding the instance uses it.
type budgetRegexp struct {
	re *regexp2.Regexp
	b  *budget
}

func (r *budgetRegexp) String() string { return r.re.String() }

func (r *budgetRegexp) MatchString(s string) bool {
	if r.b.exceeded {
		return false
	}
	left := DefaultMatchTimeout
	if !r.b.deadline.IsZero() {
		left = time.Until(r.b.deadline)
		if left <= 0 {
			r.b.exceeded = true
			return false
		}
	}
	r.re.MatchTimeout = left
	ok, err := r.re.MatchString(s)
	if err != nil {
		r.b.exceeded = true
		return false
	}
	return ok
}

// Portable reports whether pattern p means the same in ECMA-262 (without
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
func Portable(p string) bool {
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
