package grammar

import (
	"crypto/sha256"
	"sync"
)

// Options configure schema compilation. A nil *Options means the zero value.
type Options struct {
	// Strict makes any relaxation an error (*RelaxationError, wrapping
	// ErrRelaxed) instead of a report. Zero: relaxations are reported.
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
	// NoAnswer removes the answer branch from Envelope and EnvelopeSchema.
	// Zero: the model may answer in text.
	NoAnswer bool
	// NoFindTools removes the find_tools branch from Envelope and
	// EnvelopeSchema. Zero: the model may ask for other tools.
	NoFindTools bool
}

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
	root        *grule
}

// compiled is a cache entry.
type compiled struct {
	res *Result
	err error
}

// cacheLimit bounds the compile cache; when it is full it starts over.
const cacheLimit = 4096

var cache = struct {
	sync.Mutex
	m map[[32]byte]*compiled
}{m: map[[32]byte]*compiled{}}

// cacheKey is sha256 over the options and the canonical bytes of the
// schema (compact, member order kept: order is meaningful to the grammar).
func cacheKey(doc *jsonValue, o Options, kind byte) [32]byte {
	h := sha256.New()
	flags := []byte{kind, b2b(o.Strict), b2b(o.Compact), b2b(o.OpenObjects)}
	h.Write(flags)
	h.Write([]byte(canonicalJSON(doc)))
	var k [32]byte
	h.Sum(k[:0])
	return k
}

func b2b(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// FromSchema compiles a JSON Schema (draft 2020-12; draft-07 forms such as
// definitions and array-form items are accepted) into a llama.cpp GBNF
// grammar whose sentences are JSON values the schema admits, written
// compactly or with bounded whitespace, object members in declaration
// order. Every constraint the grammar cannot express is listed in
// Result.Relaxations (or, with Options.Strict, fails the compilation).
//
// Errors wrap ErrInvalidSchema (not JSON, or not a schema),
// ErrUnsatisfiable (no value satisfies it), ErrUnsupported or ErrRelaxed.
// Results are cached by a hash of the schema and options, so compiling the
// same schema again costs a hash; FromSchema is safe for concurrent use.
func FromSchema(schema []byte, opts *Options) (*Result, error) {
	o := opts.orZero()
	// Fast path: the same bytes again cost one hash.
	rawKey := rawCacheKey(schema, o)
	cache.Lock()
	e, ok := cache.m[rawKey]
	cache.Unlock()
	if ok {
		return e.res, e.err
	}
	doc, err := decodeJSON(schema)
	if err != nil {
		return nil, &SchemaError{Msg: err.Error(), Err: ErrInvalidSchema}
	}
	res, err := compileDoc(doc, o)
	cache.Lock()
	cache.m[rawKey] = &compiled{res, err}
	cache.Unlock()
	return res, err
}

func rawCacheKey(schema []byte, o Options) [32]byte {
	h := sha256.New()
	h.Write([]byte{'r', b2b(o.Strict), b2b(o.Compact), b2b(o.OpenObjects)})
	h.Write(schema)
	var k [32]byte
	h.Sum(k[:0])
	return k
}

func compileDoc(doc *jsonValue, o Options) (*Result, error) {
	if doc.kind != jsonObject && doc.kind != jsonBool {
		return nil, &SchemaError{Msg: "a schema must be a JSON object or a boolean", Err: ErrInvalidSchema}
	}
	key := cacheKey(doc, o, 's')
	cache.Lock()
	e, ok := cache.m[key]
	cache.Unlock()
	if ok {
		return e.res, e.err
	}
	res, err := compileUncached(doc, o)
	cache.Lock()
	if len(cache.m) >= cacheLimit {
		cache.m = map[[32]byte]*compiled{}
	}
	cache.m[key] = &compiled{res, err}
	cache.Unlock()
	return res, err
}

func compileUncached(doc *jsonValue, o Options) (res *Result, err error) {
	c := newCompiler(doc, o)
	root := c.compileRoot()
	if c.fatal != nil {
		return nil, c.fatal
	}
	if root.body.op == gNone {
		return nil, &SchemaError{Msg: "no JSON value satisfies the schema", Err: ErrUnsatisfiable}
	}
	if name, bad := leftRecursion(root); bad {
		return nil, &SchemaError{Msg: "reference cycle through " + name + " consumes no input", Err: ErrUnsupported}
	}
	if o.Strict && len(c.relax) > 0 {
		return nil, &RelaxationError{Relaxations: c.relax}
	}
	return &Result{GBNF: toGBNF(root).String(), Relaxations: c.relax, root: root}, nil
}

// leftRecursion reports a rule that can reach itself without consuming
// input, which llama.cpp rejects.
func leftRecursion(root *grule) (string, bool) {
	state := map[*grule]uint8{} // 1 visiting, 2 done
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
		switch state[r] {
		case 1:
			bad = r.hint
			return true
		case 2:
			return false
		}
		state[r] = 1
		if r.body != nil && firsts(r.body, visitRule) {
			return true
		}
		state[r] = 2
		return false
	}
	// Visit every rule, not only those at the start of root.
	all := reachableRules(root)
	for _, r := range all {
		if visitRule(r) {
			return bad, true
		}
	}
	return "", false
}

// reachableRules lists the rules reachable from root in first-reached order.
func reachableRules(root *grule) []*grule {
	seen := map[*grule]bool{root: true}
	order := []*grule{root}
	var walk func(n *gnode)
	walk = func(n *gnode) {
		if n.op == gRef {
			if !seen[n.rule] {
				seen[n.rule] = true
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
	return order
}
