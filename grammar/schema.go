package grammar

import (
	"fmt"

	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/internal/envbounds"
)

// Options configure schema compilation. A nil *Options means the zero value.
type Options struct {
	// Strict makes any relaxation an error ([*RelaxationError], wrapping
	// [ErrRelaxed]) instead of a report. Zero: relaxations are reported.
	Strict bool
	// Compact removes all whitespace between JSON tokens from the grammar.
	// Zero: between two tokens the grammar admits nothing, one space, or one
	// newline followed by at most 20 spaces or tabs, so a model can never
	// loop on whitespace.
	Compact bool
	// OpenObjects makes an object schema without additionalProperties (or
	// unevaluatedProperties) admit undeclared properties, as JSON Schema
	// specifies. Zero: such objects are closed, so a model cannot invent a
	// parameter (DESIGN invariant 7). An explicit additionalProperties: true
	// or a schema always admits undeclared properties, after the declared
	// ones.
	OpenObjects bool
	// NoAnswer removes the answer branch from [Envelope] and [EnvelopeSchema].
	// Zero: the model may answer in text.
	NoAnswer bool
	// NoFindTools removes the find_tools branch from [Envelope] and
	// [EnvelopeSchema]. Zero: the model may ask for other tools.
	NoFindTools bool
	// Cache keeps compiled results for reuse (see Cache); it may be
	// shared by goroutines and Options values. Zero: nothing is cached,
	// every call compiles.
	Cache *Cache

	// MaxStringLength bounds, in code points, every string whose length
	// the schema leaves unbounded (no maxLength and no enum, const, format
	// or pattern that fixes it), so that a model cannot write one without
	// end; the grammar is then stricter than the schema, and each bound is
	// listed in [Result.Bounds]. A schema's own maxLength is never lowered.
	// Zero: unbounded in [FromSchema] (whose grammars are checked against
	// the JSON Schema test suites), [DefaultMaxStringLength] in [Envelope]
	// (the turn a model writes). Negative: unbounded everywhere.
	MaxStringLength int
	// MaxItems bounds the items of every array the schema leaves unbounded
	// (no maxItems, no prefixItems-only form), like [Options.MaxStringLength].
	// Zero: unbounded in [FromSchema], [DefaultMaxItems] in [Envelope].
	// Negative: unbounded everywhere.
	MaxItems int
	// MaxAnswerLength bounds the text of the envelope's answer branch, in
	// code points ([Envelope], and [EnvelopeSchema] as maxLength). Zero:
	// [DefaultMaxAnswerLength]. Negative: unbounded.
	MaxAnswerLength int
	// MaxQueryLength bounds the query of the envelope's find_tools branch,
	// in code points. Zero: [DefaultMaxQueryLength]. Negative: unbounded.
	MaxQueryLength int
}

// Defaults of the bounds in [Options], for the turn envelope: the bounds the
// agent compiles every turn with (llm.DefaultBounds names the same
// constants), so that toolgate grammar prints the agent's envelope.
const (
	DefaultMaxStringLength = envbounds.String
	DefaultMaxItems        = envbounds.Items
	DefaultMaxAnswerLength = envbounds.Answer
	DefaultMaxQueryLength  = envbounds.Query
)

func (o *Options) orZero() Options {
	if o == nil {
		return Options{}
	}
	return *o
}

// Result is a compiled schema. It is immutable and may be shared.
type Result struct {
	// GBNF is the llama.cpp grammar, with root rule "root".
	GBNF string
	// Relaxations lists the constraints the grammar does not enforce, in
	// schema order. Callers must not modify it.
	Relaxations []Relaxation
	// Bounds lists the limits the grammar adds where the schema sets none
	// ([Options.MaxStringLength], [Options.MaxItems]), in schema order.
	// Callers must not modify it.
	Bounds []Bound
	root   *grule
}

// compiled is a cache entry.
type compiled struct {
	res *Result
	err error
}

// FromSchema compiles a JSON Schema (draft 2020-12; draft-07 forms such as
// definitions and array-form items are accepted) into a llama.cpp GBNF
// grammar whose sentences are JSON values the schema admits, written
// compactly or with bounded whitespace, object members in declaration
// order. Every constraint the grammar cannot express is listed in
// [Result.Relaxations] (or, with [Options.Strict], fails the compilation).
//
// Errors wrap [ErrInvalidSchema] (not JSON, or not a schema),
// [ErrUnsatisfiable] (no value satisfies it), [ErrUnsupported] or [ErrRelaxed].
// With [Options.Cache] set, results are cached by the schema and options, so
// compiling the same schema again costs a hash; FromSchema is safe for
// concurrent use.
func FromSchema(schema []byte, opts *Options) (*Result, error) {
	o := opts.orZero()
	if err := o.validate(); err != nil {
		return nil, err
	}
	// Zero means no bound here (negative too).
	o.MaxStringLength, o.MaxItems = max(o.MaxStringLength, 0), max(o.MaxItems, 0)
	return compileBytes(schema, o, true)
}

// validate checks the options once, naming the field at fault.
func (o Options) validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"MaxStringLength", o.MaxStringLength}, {"MaxItems", o.MaxItems}, {"MaxAnswerLength", o.MaxAnswerLength}, {"MaxQueryLength", o.MaxQueryLength}} {
		if f.v > gbnf.MaxRepetition {
			return fmt.Errorf("%w: Options.%s %d is above the grammar's repetition limit %d", ErrOptions, f.name, f.v, gbnf.MaxRepetition)
		}
	}
	return nil
}

// envelopeBound resolves an envelope bound: zero is the default, negative
// is none (0 inside the compiler).
func envelopeBound(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// compileBytes decodes and compiles a schema, through o.Cache when set.
// text says whether [Result.GBNF] is wanted; [Envelope] needs only the rules.
func compileBytes(schema []byte, o Options, text bool) (*Result, error) {
	kind := byte('r')
	if !text {
		kind = 't'
	}
	// Fast path: the same bytes again cost one hash.
	var rawKey *cacheKey
	if o.Cache != nil {
		rawKey = o.Cache.key(kind, o)
		rawKey.add(schema)
		if v, ok := o.Cache.get(rawKey); ok {
			e := v.(*compiled)
			return e.res, e.err
		}
	}
	doc, err := decodeJSON(schema)
	if err != nil {
		return nil, &SchemaError{Msg: err.Error(), Err: ErrInvalidSchema}
	}
	res, err := compileDoc(doc, o, text)
	o.Cache.put(rawKey, &compiled{res, err})
	return res, err
}

// compileDoc compiles a decoded schema; with text and a [Cache], a schema
// that differs from a cached one only in spacing is a hit.
func compileDoc(doc *jsonValue, o Options, text bool) (*Result, error) {
	if doc.kind != jsonObject && doc.kind != jsonBool {
		return nil, &SchemaError{Msg: "a schema must be a JSON object or a boolean", Err: ErrInvalidSchema}
	}
	if !text {
		return compileTree(doc, o)
	}
	var key *cacheKey
	if o.Cache != nil {
		key = o.Cache.key('s', o)
		key.add([]byte(canonicalJSON(doc)))
		if v, ok := o.Cache.get(key); ok {
			e := v.(*compiled)
			return e.res, e.err
		}
	}
	res, err := compileUncached(doc, o)
	o.Cache.put(key, &compiled{res, err})
	return res, err
}

// compileUncached compiles and prints.
func compileUncached(doc *jsonValue, o Options) (*Result, error) {
	res, err := compileTree(doc, o)
	if err != nil {
		return nil, err
	}
	return &Result{GBNF: printGBNF(res.root), Relaxations: res.Relaxations, Bounds: res.Bounds, root: res.root}, nil
}

// compileTree compiles into rules without printing them (GBNF is empty).
func compileTree(doc *jsonValue, o Options) (*Result, error) {
	c := newCompiler(doc, o)
	root := c.compileRoot()
	if c.fatal != nil {
		return nil, c.fatal
	}
	if root.body.op == gNone {
		if c.closed != "" {
			// JSON Schema admits undeclared properties; a grammar never does.
			return nil, &SchemaError{Msg: "no JSON value with only declared properties satisfies the schema (a grammar admits no other): " + c.closed, Err: ErrUnsatisfiable}
		}
		return nil, &SchemaError{Msg: "no JSON value satisfies the schema", Err: ErrUnsatisfiable}
	}
	if c.deferredRules() {
		if name, bad := leftRecursion(root); bad {
			return nil, &SchemaError{Msg: "reference cycle through " + name + " consumes no input", Err: ErrUnsupported}
		}
	}
	if o.Strict && len(c.relax) > 0 {
		return nil, &RelaxationError{Relaxations: c.relax}
	}
	return &Result{Relaxations: c.relax, Bounds: c.bounds, root: root}, nil
}

// deferredRules reports whether the compilation made a rule before its
// body (a $ref target, a recursive allOf merge): only such a rule can be
// reached from its own body, so without one the grammar has no cycle but
// the package's fixed rules (which consume input first) and leftRecursion
// has nothing to find (TestLeftRecursionNeedsDeferredRules).
func (c *compiler) deferredRules() bool { return len(c.refRules) > 0 || len(c.synthRules) > 0 }

// leftRecursion reports a rule that can reach itself without consuming
// input, which llama.cpp rejects.
func leftRecursion(root *grule) (string, bool) {
	all, at := reachableRules(root)
	state := make([]uint8, len(all)) // by position in all: 1 visiting, 2 done
	var bad string
	var visitRule func(r *grule) bool
	var firsts func(n *gnode, f func(*grule) bool) bool
	// firsts calls f for every rule reachable at the start of n; it returns
	// true when f does (a cycle was found).
	firsts = func(n *gnode, f func(*grule) bool) bool {
		switch n.op {
		case gRef:
			return f(n.rule)
		case gSeq:
			for _, s := range n.subs {
				if firsts(s, f) {
					return true
				}
				if !s.nullable() {
					return false
				}
			}
		case gAlt:
			for _, s := range n.subs {
				if firsts(s, f) {
					return true
				}
			}
		case gRep:
			return firsts(n.subs[0], f)
		}
		return false
	}
	visitRule = func(r *grule) bool {
		i := at[r]
		switch state[i] {
		case 1:
			bad = r.hint
			return true
		case 2:
			return false
		}
		state[i] = 1
		if r.body != nil && firsts(r.body, visitRule) {
			return true
		}
		state[i] = 2
		return false
	}
	// Visit every rule, not only those at the start of root.
	for _, r := range all {
		if visitRule(r) {
			return bad, true
		}
	}
	return "", false
}

// reachableRules lists the rules reachable from root in first-reached
// order, and the position of each in the list.
func reachableRules(root *grule) ([]*grule, map[*grule]int) {
	at := map[*grule]int{root: 0}
	order := []*grule{root}
	var walk func(n *gnode)
	walk = func(n *gnode) {
		if n.op == gRef {
			if _, ok := at[n.rule]; !ok {
				at[n.rule] = len(order)
				order = append(order, n.rule)
			}
			return
		}
		for _, s := range n.subs {
			walk(s)
		}
	}
	for i := 0; i < len(order); i++ {
		if order[i].body != nil {
			walk(order[i].body)
		}
	}
	return order, at
}
