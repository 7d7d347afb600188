package gbnf

import (
	"errors"
	"fmt"
)

// Grammar is a parsed GBNF grammar: its rules in declaration order. Parse
// returns one; a Grammar can also be built by hand and printed with String.
//
// A Grammar returned by [Parse] must not be modified: Parse validates and
// compiles it once, and [NewMatcher] and Match reuse that work. A Grammar is
// safe for concurrent use by several goroutines as long as nobody modifies
// it.
type Grammar struct {
	// Rules holds each rule once, in the order of its first definition.
	Rules []*Rule

	prog *gbnfProgram // compiled by Parse; nil for a Grammar built by hand
}

// Rule is one named rule: Name ::= Alts[0] | Alts[1] | ...
type Rule struct {
	// Name uses the characters [a-zA-Z0-9-] only.
	Name string
	// Alts are the alternatives; an empty Seq matches the empty string.
	// A rule has at least one alternative.
	Alts []Seq
}

// Seq is a sequence of expressions matched one after the other. The empty
// Seq matches the empty string.
type Seq []Expr

// Expr is one element of a sequence: Literal, [Class], Any, Ref, [Group],
// Repeat or [Token]. The set is closed.
type Expr interface {
	gbnfExpr()
}

// Literal matches its code points in order ("abc"). Chars is never empty in
// a parsed grammar: an empty literal "" matches the empty string and [Parse]
// leaves it out of the sequence.
type Literal struct {
	Chars []rune
}

// Class matches one code point in (or, when Negated, not in) its ranges
// ([a-z0-9_], [^"\\]). Ranges is never empty in a parsed grammar: llama.cpp
// reads [] and [^] as matching the empty string, and [Parse] leaves them out.
type Class struct {
	Negated bool
	Ranges  []CharRange
}

// CharRange is an inclusive range of code points; Lo == Hi is one code
// point. A range with Lo > Hi matches nothing (llama.cpp accepts [z-a]).
type CharRange struct {
	Lo, Hi rune
}

// Any matches any one code point (".").
type Any struct{}

// Ref refers to the rule named Name.
type Ref struct {
	Name string
}

// Group is a parenthesised list of alternatives: ( a | b c ).
type Group struct {
	Alts []Seq
}

// Unbounded is [Repeat.Max] for a repetition without an upper bound (*, +,
// {m,}).
const Unbounded = -1

// MaxRepetition is the largest repetition count llama.cpp accepts in {m},
// {m,} and {m,n} (its MAX_REPETITION_THRESHOLD).
const MaxRepetition = 2000

// Repeat matches [Expr] between Min and Max times (Max == [Unbounded]: no upper
// bound). "*" is {0,Unbounded}, "+" {1,Unbounded}, "?" {0,1}. Parse
// guarantees 0 <= Min <= Max <= [MaxRepetition] (or Max == Unbounded).
type Repeat struct {
	Expr     Expr
	Min, Max int
}

// Token is a llama.cpp token reference: <[ID]>, or !<[ID]> when Negated.
// It parses, but no text matches it: a [Matcher] works on bytes, not tokens.
type Token struct {
	ID      uint32
	Negated bool
}

func (Literal) gbnfExpr() {}
func (Class) gbnfExpr()   {}
func (Any) gbnfExpr()     {}
func (Ref) gbnfExpr()     {}
func (Group) gbnfExpr()   {}
func (Repeat) gbnfExpr()  {}
func (Token) gbnfExpr()   {}

// Errors that a *[ParseError] wraps (test with [errors.Is]). Each is a class of
// grammar that llama.cpp also refuses, except [ErrEmptyLoop] and [ErrTooLarge],
// which guard against grammars llama.cpp crashes or hangs on.
var (
	// ErrSyntax: the text is not GBNF (llama.cpp's parser throws).
	ErrSyntax = errors.New("gbnf: syntax error")
	// ErrRepetition: a repetition count above [MaxRepetition], or {m,n}
	// with n < m.
	ErrRepetition = errors.New("gbnf: bad repetition count")
	// ErrUndefinedRule: a rule is referenced but not defined.
	ErrUndefinedRule = errors.New("gbnf: undefined rule")
	// ErrEmptyGrammar: the text defines no rule.
	ErrEmptyGrammar = errors.New("gbnf: empty grammar")
	// ErrNoRoot: there is no rule named root.
	ErrNoRoot = errors.New("gbnf: no root rule")
	// ErrLeftRecursion: llama.cpp's left-recursion check fails.
	ErrLeftRecursion = errors.New("gbnf: left recursion")
	// ErrEmptyLoop: a rule can reach itself without consuming input
	// through parts that match the empty string, typically a repetition
	// of something that can match empty such as ( [x]* )*. llama.cpp
	// does not detect this and overflows its stack when it gets there.
	ErrEmptyLoop = errors.New("gbnf: rule can recurse without consuming input")
	// ErrTooLarge: expanding the repetitions would need more than
	// [MaxGrammarElements] elements.
	ErrTooLarge = errors.New("gbnf: grammar too large")
)

// MaxGrammarElements bounds the size of a compiled grammar: llama.cpp (and
// this package) expand {m,n} into copies of the repeated part, so nested
// counts multiply.
const MaxGrammarElements = 1 << 23

// ParseError is the error [Parse] (and [NewMatcher], for a [Grammar] built by
// hand) returns for a grammar it refuses.
type ParseError struct {
	// Offset is the 0-based byte offset in the source where the problem
	// was found; -1 when there is no source position (a Grammar built by
	// hand).
	Offset int
	// Line and Col are 1-based; Col counts bytes, as gbnf-check does.
	// Both are 0 when Offset is -1.
	Line, Col int
	// Msg describes the problem; for syntax errors it is llama.cpp's own
	// wording ("expecting ::=", "unknown escape", ...).
	Msg string
	// Err is the class of the problem: [ErrSyntax], [ErrRepetition],
	// [ErrUndefinedRule], [ErrEmptyGrammar], [ErrNoRoot], [ErrLeftRecursion],
	// [ErrEmptyLoop] or [ErrTooLarge].
	Err error
}

// Error formats the problem with its position.
func (e *ParseError) Error() string {
	if e.Offset < 0 {
		return "gbnf: " + e.Msg
	}
	return fmt.Sprintf("gbnf: line %d col %d (byte %d): %s", e.Line, e.Col, e.Offset, e.Msg)
}

// Unwrap returns Err.
func (e *ParseError) Unwrap() error { return e.Err }
