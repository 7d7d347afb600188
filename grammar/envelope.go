package grammar

import (
	"encoding/json"
	"fmt"
	"strings"
)

// EnvelopeTool is one shortlisted tool: the name the model writes and the
// JSON Schema of its arguments.
type EnvelopeTool struct {
	// Name must match ^[a-zA-Z0-9_-]{1,64}$ (the name shown to the model).
	Name string
	// Schema is the tool's input schema (nil or empty means {} with closed
	// objects: an empty argument object).
	Schema json.RawMessage
}

// ExcludedTool is a tool left out of a turn because its schema does not
// compile.
type ExcludedTool struct {
	Name string
	Err  error
}

// EnvelopeResult is the grammar of one turn. It is immutable.
type EnvelopeResult struct {
	// GBNF is the llama.cpp grammar of the envelope, root rule "root".
	GBNF string
	// Tools lists the tools the call branch admits, in input order.
	Tools []string
	// Relaxations lists, per tool name, what the tool's grammar does not
	// enforce (absent: nothing).
	Relaxations map[string][]Relaxation
	// Excluded lists tools whose schema failed to compile, with the error;
	// they are not in the grammar.
	Excluded []ExcludedTool
	// Bounds lists, per tool name, the limits the grammar sets on the
	// tool's arguments where its schema sets none ([Options.MaxStringLength],
	// [Options.MaxItems]); the key "" holds the envelope's own: the answer
	// text ("/text") and the find_tools query ("/query").
	Bounds map[string][]Bound
}

// validToolName reports whether name matches ^[a-zA-Z0-9_-]{1,64}$.
func validToolName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Envelope compiles the turn envelope for a shortlist (docs/design.md):
//
//	{"action":"call","tool":"<one of the shortlist>","arguments":{...}}
//	{"action":"answer","text":"..."}
//	{"action":"find_tools","query":"..."}
//
// The arguments of a call are constrained by the named tool's schema. Each
// tool compiles on its own: a tool whose schema fails (or, with
// [Options.Strict], needs relaxations) is listed in Excluded and left out;
// when no tool compiles the call branch is absent, never unconstrained.
// [Options.NoAnswer] and [Options.NoFindTools] remove those branches; with no
// branch left the error wraps [ErrNoTools]. A name that does not fit the
// model-name rule, or a repeated name, is an error ([ErrInvalidSchema]).
// Envelope is safe for concurrent use. With [Options.Cache] set, a repeated
// shortlist (the same names, schema bytes and options) costs a hash of its
// inputs, and each tool's grammar is cached on its own, so a shortlist
// that changes by one tool compiles one schema.
func Envelope(tools []EnvelopeTool, opts *Options) (*EnvelopeResult, error) {
	o := opts.orZero()
	if err := o.validate(); err != nil {
		return nil, err
	}
	if err := checkToolNames(tools); err != nil {
		return nil, err
	}
	o.MaxStringLength = envelopeBound(o.MaxStringLength, DefaultMaxStringLength)
	o.MaxItems = envelopeBound(o.MaxItems, DefaultMaxItems)
	o.MaxAnswerLength = envelopeBound(o.MaxAnswerLength, DefaultMaxAnswerLength)
	o.MaxQueryLength = envelopeBound(o.MaxQueryLength, DefaultMaxQueryLength)
	var key *cacheKey
	if o.Cache != nil {
		key = o.Cache.key('e', o)
		for _, t := range tools {
			key.add([]byte(t.Name))
			key.add(t.Schema)
		}
		if v, ok := o.Cache.get(key); ok {
			return v.(*EnvelopeResult), nil
		}
	}

	p := spaced
	if o.Compact {
		p = compact
	}
	res := &EnvelopeResult{Relaxations: map[string][]Relaxation{}, Bounds: map[string][]Bound{}}
	var calls []*gnode
	toolOpts := o
	toolOpts.NoAnswer, toolOpts.NoFindTools = false, false
	for _, t := range tools {
		schema := t.Schema
		if len(strings.TrimSpace(string(schema))) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		r, err := compileBytes(schema, toolOpts, false)
		if err != nil {
			res.Excluded = append(res.Excluded, ExcludedTool{Name: t.Name, Err: err})
			continue
		}
		if len(r.Relaxations) > 0 {
			res.Relaxations[t.Name] = r.Relaxations
		}
		if len(r.Bounds) > 0 {
			res.Bounds[t.Name] = r.Bounds
		}
		res.Tools = append(res.Tools, t.Name)
		args := &grule{hint: t.Name + "-args", body: r.root.body}
		calls = append(calls, seq(lit(`"`+t.Name+`"`), p.ws, lit(","), p.ws, lit(`"arguments"`), p.ws, lit(":"), p.ws, ref(args)))
	}
	var branches []*gnode
	if len(calls) > 0 {
		call := &grule{hint: "call", body: seq(lit(`"call"`), p.ws, lit(","), p.ws, lit(`"tool"`), p.ws, lit(":"), p.ws, alt(calls...))}
		branches = append(branches, ref(call))
	}
	// text returns the answer's or the query's string, bounded unless n is 0.
	text := func(n int, hint, ptr string) *gnode {
		if n == 0 {
			return ref(p.str)
		}
		res.Bounds[""] = append(res.Bounds[""], Bound{Pointer: ptr, Keyword: "maxLength", Limit: n})
		return ref(&grule{hint: hint, body: seq(lit(`"`), rep(ref(p.jsonChar), 0, n), lit(`"`))})
	}
	if !o.NoAnswer {
		branches = append(branches, ref(&grule{hint: "answer", body: seq(lit(`"answer"`), p.ws, lit(","), p.ws, lit(`"text"`), p.ws, lit(":"), p.ws, text(o.MaxAnswerLength, "answer-text", "/text"))}))
	}
	if !o.NoFindTools {
		branches = append(branches, ref(&grule{hint: "find-tools", body: seq(lit(`"find_tools"`), p.ws, lit(","), p.ws, lit(`"query"`), p.ws, lit(":"), p.ws, text(o.MaxQueryLength, "query-text", "/query"))}))
	}
	if len(branches) == 0 {
		return nil, fmt.Errorf("%w: no tool compiled and the answer and find_tools branches are disabled", ErrNoTools)
	}
	root := &grule{hint: "root", body: seq(lit("{"), p.ws, lit(`"action"`), p.ws, lit(":"), p.ws, alt(branches...), p.ws, lit("}"))}
	res.GBNF = printGBNF(root)
	o.Cache.put(key, res)
	return res, nil
}

func checkToolNames(tools []EnvelopeTool) error {
	seen := map[string]bool{}
	for _, t := range tools {
		if !validToolName(t.Name) {
			return &SchemaError{Msg: fmt.Sprintf("tool name %q does not match ^[a-zA-Z0-9_-]{1,64}$", t.Name), Err: ErrInvalidSchema}
		}
		if seen[t.Name] {
			return &SchemaError{Msg: fmt.Sprintf("tool name %q appears twice", t.Name), Err: ErrInvalidSchema}
		}
		seen[t.Name] = true
	}
	return nil
}
