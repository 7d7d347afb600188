package grammar

import (
	"errors"
	"fmt"
	"strings"
)

// Relaxation is one constraint of a schema that a compiled artifact does
// not enforce: the artifact admits a superset of what the schema admits at
// that place. The gateway's validator still checks the full schema, so a
// relaxation costs a retry, never a wrong call.
type Relaxation struct {
	// Pointer is the RFC 6901 JSON pointer of the schema object holding the
	// keyword ("" is the root schema).
	Pointer string
	// Keyword is the JSON Schema keyword that is not (fully) enforced.
	Keyword string
	// Reason says what is and is not enforced, in one line.
	Reason string
}

// String formats the relaxation as the CLI prints it: pointer, keyword and
// reason separated by tabs, the pointer as a URI fragment ("#" is the root).
func (r Relaxation) String() string {
	return fmt.Sprintf("#%s\t%s\t%s", r.Pointer, r.Keyword, r.Reason)
}

// Sentinel errors. Errors returned by this package wrap one of them.
var (
	// ErrInvalidSchema: the input is not JSON or not a JSON Schema
	// (a schema is an object or a boolean).
	ErrInvalidSchema = errors.New("grammar: invalid schema")
	// ErrUnsatisfiable: no JSON value satisfies the schema, so no grammar
	// can be produced (a grammar must match something).
	ErrUnsatisfiable = errors.New("grammar: schema admits no value")
	// ErrRelaxed: [Options.Strict] was set and the schema needs relaxations.
	ErrRelaxed = errors.New("grammar: schema needs relaxations")
	// ErrUnsupported: the schema uses a construct the compiler cannot turn
	// into a grammar at all (such as a reference cycle that consumes no
	// input).
	ErrUnsupported = errors.New("grammar: unsupported schema")
	// ErrNoTools: an envelope was requested with no branch left (no tool
	// compiled and the answer and find_tools branches disabled).
	ErrNoTools = errors.New("grammar: envelope has no branch")
	// ErrLimit: a structured-output spec exceeds a provider's documented limit.
	ErrLimit = errors.New("grammar: provider limit exceeded")
	// ErrOptions: a field of Options is out of range (the error names it).
	ErrOptions = errors.New("grammar: invalid options")
)

// Bound is a limit the grammar sets where the schema sets none
// ([Options.MaxStringLength], MaxItems, the envelope's MaxAnswerLength and
// MaxQueryLength), so that a model cannot write a string or an array
// without end. The grammar is stricter than the schema there, by design;
// a Bound is reported so that callers see it (and can size a token
// budget), and it is not a [Relaxation]: [Options.Strict] does not refuse it.
type Bound struct {
	// Pointer is the JSON pointer of the bounded subschema (in the tool's
	// schema; for the envelope's own strings "/text" and "/query").
	Pointer string
	// Keyword is the keyword the bound stands in for: "maxLength" or
	// "maxItems".
	Keyword string
	// Limit is the bound: code points for maxLength, items for maxItems.
	Limit int
}

// String formats the bound as "#POINTER\tKEYWORD\tLIMIT".
func (b Bound) String() string {
	return fmt.Sprintf("#%s\t%s\t%d (bound set by the grammar; the schema sets none)", b.Pointer, b.Keyword, b.Limit)
}

// RelaxationError is returned in strict mode: it lists the relaxations and
// wraps [ErrRelaxed].
type RelaxationError struct {
	Relaxations []Relaxation
}

func (e *RelaxationError) Error() string {
	parts := make([]string, 0, len(e.Relaxations))
	for _, r := range e.Relaxations {
		parts = append(parts, fmt.Sprintf("#%s %s: %s", r.Pointer, r.Keyword, r.Reason))
	}
	n := len(parts)
	if n > 3 {
		parts = append(parts[:3], fmt.Sprintf("and %d more", n-3))
	}
	return fmt.Sprintf("grammar: schema needs %d relaxation(s): %s", n, strings.Join(parts, "; "))
}

func (e *RelaxationError) Unwrap() error { return ErrRelaxed }

// SchemaError is a schema the compiler rejects, with where and why; it
// wraps [ErrInvalidSchema], [ErrUnsatisfiable] or [ErrUnsupported].
type SchemaError struct {
	Pointer string
	Msg     string
	Err     error
}

func (e *SchemaError) Error() string {
	if e.Pointer != "" {
		return fmt.Sprintf("%v at #%s: %s", e.Err, e.Pointer, e.Msg)
	}
	return fmt.Sprintf("%v: %s", e.Err, e.Msg)
}

func (e *SchemaError) Unwrap() error { return e.Err }
