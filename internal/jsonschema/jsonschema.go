// Package jsonschema is toolgate's one JSON [Schema] setup, shared by the
// catalog loader (tools) and the gateway, so that a schema means the same
// thing wherever it is validated (package grammar compiles schemas to
// grammars on its own and does not import this package):
//
//   - the compiler: github.com/santhosh-tekuri/jsonschema/v6 (drafts 4 to
//     2020-12, passes the official test suite), draft 2020-12 when a schema
//     names none, no external references (a $ref to a URL is an error, never
//     a fetch), and formats asserted where asked;
//   - documents parsed strictly (ParseDocument: duplicate members, invalid
//     UTF-8 and lone surrogates are errors; numbers keep their text, so
//     `multipleOf` and `maximum` compare exact decimals, never doubles);
//   - ECMA-262 `pattern` semantics (CompileRegexp): Go's linear-time regexp
//     where the pattern is in the subset where ECMA-262 and RE2 provably
//     agree (Portable), github.com/dlclark/regexp2 in ECMAScript mode
//     otherwise;
//   - OpenAPI's `nullable: true` beside `type` adds null to the type
//     (OpenNullable), as package grammar reads it, so that a call the
//     grammar lets a model write is not refused here;
//   - a deadline for one whole validation (Schema.Validate), not per match:
//     a backtracking pattern gets what is left of it, and a validation that
//     runs past it fails with ErrDeadline instead of an answer.
//
// Usage:
//
//	doc, err := jsonschema.ParseDocument(raw)
//	s, err := jsonschema.Compile(doc, &jsonschema.Options{AssertFormat: true})
//	vs, err := s.Validate(instance, time.Now().Add(250*time.Millisecond))
//	// err: ErrDeadline; vs: the violations, leaves first
package jsonschema

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	sj "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/internal/textcut"
)

// ErrDeadline is returned when a validation (or a [Regexp] match) runs past
// its deadline: the instance is neither valid nor invalid, and a caller
// must refuse it rather than guess.
var ErrDeadline = errors.New("jsonschema: validation exceeded its deadline")

// ErrInvalidSchema wraps every error of [ParseDocument] and [Compile].
var ErrInvalidSchema = errors.New("jsonschema: invalid schema")

// MaxViolations bounds the violations Validate returns.
const MaxViolations = 20

// maxMessageBytes bounds a violation's message: it goes back to the
// caller, a model's context, on every refused call.
const maxMessageBytes = 1024

// ResourceURL names a schema compiled alone inside its compiler. It is
// hierarchical so that a subschema's relative $id (draft-04's id: "item",
// as real schemas write it) names a resource of its own beside it: under
// an opaque URN every relative reference resolves to the URN itself, so
// such a schema was refused as a "duplicate id".
const ResourceURL = "toolgate:///input-schema"

// SharedURL prefixes the names of schemas that share one compiler
// (tools' DefineAll). It is opaque, so that no relative reference of one
// schema reaches another's; a schema with a $id is compiled alone.
const SharedURL = "urn:toolgate:input-schema"

var printer = message.NewPrinter(language.English)

// ParseDocument parses a schema (or an instance) strictly into the tree the
// compiler and the validator take: map[string]any, []any, string,
// [json.Number], bool and nil. Duplicate members, invalid UTF-8, lone
// surrogates and nesting deeper than [jcs.MaxDepth] are errors (wrapping
// [ErrInvalidSchema]) that give the offset. Numbers keep their text
// whatever their size: one a double cannot hold is refused where it is
// used, by canonicalization ([jcs.Append]) and, past an exponent of
// ±10,000, by [Schema.Validate].
func ParseDocument(data []byte) (any, error) {
	v, err := jcs.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	return v, nil
}

// NewCompiler returns a compiler with toolgate's setup: draft 2020-12 by
// default, no loader (an external reference is an error), ECMA-262
// patterns ([CompileRegexp]). Formats are annotations unless the caller
// calls AssertFormat. For checking that schemas compile (a catalog
// loader); a schema that validates instances under a deadline comes from
// Compile.
func NewCompiler() *sj.Compiler {
	c := sj.NewCompiler()
	c.DefaultDraft(sj.Draft2020)
	c.UseLoader(noLoader{})
	c.UseRegexpEngine(func(p string) (sj.Regexp, error) {
		r, err := CompileRegexp(p)
		if err != nil {
			return nil, err
		}
		return matchAdapter{r}, nil
	})
	return c
}

// matchAdapter answers "no match" when a match runs past its timeout.
type matchAdapter struct{ r *Regexp }

func (m matchAdapter) MatchString(s string) bool {
	ok, err := m.r.MatchString(s)
	return ok && err == nil
}

func (m matchAdapter) String() string { return m.r.String() }

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("reference to %s is not fetched: external references are not loaded", url)
}

// Options configures [Compile]. A nil *Options means the zero value.
type Options struct {
	// AssertFormat makes `format` an assertion ("format": "email" refuses
	// a string that is not one). False leaves formats as annotations.
	AssertFormat bool
	// CloseObjects sets additionalProperties: false on every object schema
	// that declares properties and says nothing else about other members
	// (see CloseObjects). False compiles the schema as written.
	CloseObjects bool
}

// Schema is a compiled schema that validates instances under a deadline.
// Safe for concurrent use.
type Schema struct {
	doc  any
	opts Options
	// shared is the one instance when no pattern backtracks (nothing in a
	// validation then depends on the deadline, so every goroutine can use it).
	shared *instance
	// pool holds instances with backtracking patterns: each has its own
	// budget, used by one validation at a time.
	pool sync.Pool
	// fast proves common instances valid without the general validator
	// (fast.go); nil when the schema's root is outside its shapes.
	fast *fastNode
}

// instance is one compilation of a schema, with the budget its
// backtracking patterns read.
type instance struct {
	s            *sj.Schema
	b            budget
	backtracking bool // a pattern runs on regexp2
}

// budget is the deadline of the validation now using an instance.
type budget struct {
	deadline time.Time
	exceeded bool
}

// Compile compiles doc (from [ParseDocument], or any tree of the same types).
// A nil or empty doc is an object with no declared properties. Errors wrap
// [ErrInvalidSchema] and say, in one line, which keyword fails.
func Compile(doc any, opts *Options) (*Schema, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if doc == nil {
		doc = map[string]any{"type": "object"}
	}
	if o.CloseObjects {
		obj, ok := doc.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: not a JSON object", ErrInvalidSchema)
		}
		doc = CloseObjects(obj)
	}
	doc = OpenNullable(doc)
	s := &Schema{doc: doc, opts: o, fast: compileFast(doc)}
	in, err := s.compile()
	if err != nil {
		return nil, err
	}
	if !in.backtracking {
		s.shared = in
	} else {
		s.pool.Put(in)
	}
	return s, nil
}

// compile compiles one instance of the schema.
func (s *Schema) compile() (*instance, error) {
	in := &instance{}
	compiling := true
	c := sj.NewCompiler()
	c.DefaultDraft(sj.Draft2020)
	c.UseLoader(noLoader{})
	if s.opts.AssertFormat {
		c.AssertFormat()
		for _, f := range formats {
			c.RegisterFormat(f)
		}
	}
	c.UseRegexpEngine(func(p string) (sj.Regexp, error) {
		r, err := CompileRegexp(p)
		if err != nil {
			return nil, err
		}
		if r.Linear() {
			return r.re2, nil
		}
		if !compiling {
			// format "regex" compiles instance strings while validating:
			// only whether they compile matters then.
			return matchAdapter{r}, nil
		}
		in.backtracking = true
		return &budgetRegexp{re: r.ecma, b: &in.b}, nil
	})
	if err := c.AddResource(ResourceURL, s.doc); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidSchema, Reason(err))
	}
	cs, err := c.Compile(ResourceURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidSchema, Reason(err))
	}
	compiling = false
	in.s = cs
	return in, nil
}

// Violation is one reason an instance is invalid: a JSON pointer into the
// instance ("" for the whole of it) and an English message.
type Violation struct {
	Pointer string
	Message string
}

// Validate validates v (a tree of ParseDocument's types; numbers as
// [json.Number] are compared exactly) and returns its violations, leaves
// first, at most [MaxViolations]; none means valid. Backtracking patterns
// share the time left until deadline (zero: [DefaultMatchTimeout] per
// match); when it passes, Validate returns [ErrDeadline] and the instance
// must be refused. An instance that reaches $refs looping without
// consuming input gets an error wrapping [ErrInvalidSchema]: the schema,
// not the instance, is at fault. Safe for concurrent use.
func (s *Schema) Validate(v any, deadline time.Time) ([]Violation, error) {
	if s.fast.valid(v) {
		return nil, nil
	}
	return s.validate(v, deadline)
}

// validate is Validate without the fast path: the general validator.
func (s *Schema) validate(v any, deadline time.Time) ([]Violation, error) {
	in := s.shared
	if in == nil {
		if got := s.pool.Get(); got != nil {
			in = got.(*instance)
		} else {
			var err error
			if in, err = s.compile(); err != nil {
				return nil, err
			}
		}
		in.b = budget{deadline: deadline}
		defer func() {
			in.b = budget{}
			s.pool.Put(in)
		}()
	}
	if ptr, bad := hugeNumber(v, nil); bad {
		return []Violation{{Pointer: ptr, Message: fmt.Sprintf("number out of range: exponent beyond ±%d", maxExponent)}}, nil
	}
	err := in.s.Validate(v)
	if in.b.exceeded {
		return nil, ErrDeadline
	}
	if err == nil {
		return nil, nil
	}
	var ve *sj.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Pointer: "", Message: err.Error()}}, nil
	}
	// The validator visits an object's members in map order, so the
	// leaves are sorted (by pointer, then message) before the first
	// [MaxViolations] are kept: the same instance always gets the same
	// violations in the same order. Leaves alike (the branches of an
	// anyOf failing the same way) are kept once. The tree is the
	// validator's own, already bounded by the schema and the instance.
	var out []Violation
	var cycle *kind.RefCycle
	var walk func(e *sj.ValidationError)
	walk = func(e *sj.ValidationError) {
		if len(e.Causes) == 0 {
			if k, ok := e.ErrorKind.(*kind.RefCycle); ok {
				cycle = k
				return
			}
			out = append(out, Violation{Pointer: Pointer(e.InstanceLocation), Message: violationText(e.ErrorKind)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if cycle != nil {
		// $refs that loop without consuming input (a -> b -> a): the
		// schema cannot judge this instance, which is no fault of the
		// caller's, so no violation it could correct.
		return nil, fmt.Errorf("%w: at %s: reference cycle through %s consumes no input",
			ErrInvalidSchema, cmp.Or(cycle.KeywordLocation2, "/"), strings.TrimPrefix(cycle.URL, ResourceURL))
	}
	slices.SortFunc(out, func(a, b Violation) int {
		return cmp.Or(strings.Compare(a.Pointer, b.Pointer), strings.Compare(a.Message, b.Message))
	})
	out = slices.Compact(out)
	return out[:min(len(out), MaxViolations)], nil
}

// maxExponent bounds the decimal exponent of an instance's numbers. The
// library compares numbers as big.Rat: past about ±10^9 its SetString
// fails and the validator dereferenced the nil (1e1000000000 against a
// minimum crashed Validate), and below that it allocates every digit. No
// double comes near ±10,000.
const maxExponent = 10000

// hugeNumber returns the pointer of the first number in v (members in name
// order) whose exponent is beyond ±maxExponent. It walks v once without
// allocating; only an instance that holds such a number is walked again,
// in order, for the pointer.
func hugeNumber(v any, path []string) (string, bool) {
	if !hasHugeNumber(v) {
		return "", false
	}
	return hugePointer(v, path)
}

func hasHugeNumber(v any) bool {
	switch v := v.(type) {
	case json.Number:
		return hugeExponent(string(v))
	case []any:
		for _, x := range v {
			if hasHugeNumber(x) {
				return true
			}
		}
	case map[string]any:
		for _, x := range v {
			if hasHugeNumber(x) {
				return true
			}
		}
	}
	return false
}

func hugePointer(v any, path []string) (string, bool) {
	switch v := v.(type) {
	case json.Number:
		if hugeExponent(string(v)) {
			return Pointer(path), true
		}
	case []any:
		for i, x := range v {
			if p, bad := hugePointer(x, append(path, strconv.Itoa(i))); bad {
				return p, true
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) { // the same pointer every time
			if p, bad := hugePointer(v[k], append(path, k)); bad {
				return p, true
			}
		}
	}
	return "", false
}

// hugeExponent reports whether the number literal s has an exponent
// beyond ±maxExponent.
func hugeExponent(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return false
	}
	e := strings.TrimLeft(strings.TrimLeft(s[i+1:], "+-"), "0")
	n, err := strconv.Atoi(e)
	return len(e) > 6 || (err == nil && n > maxExponent)
}

// violationText is the text of a violation: the library's, except for the
// exclusive bounds, whose "exclusiveMinimum: got 0, want 0" contradicts
// itself; they say "want more than 0" ("want less than 0"), in words,
// since an error body is JSON and encoding/json escapes < and >.
func violationText(k sj.ErrorKind) string {
	switch k := k.(type) {
	case *kind.ExclusiveMinimum:
		got, _ := k.Got.Float64()
		want, _ := k.Want.Float64()
		return fmt.Sprintf("exclusiveMinimum: got %v, want more than %v", got, want)
	case *kind.ExclusiveMaximum:
		got, _ := k.Got.Float64()
		want, _ := k.Want.Float64()
		return fmt.Sprintf("exclusiveMaximum: got %v, want less than %v", got, want)
	case *kind.Enum:
		return enumText(k)
	}
	return textcut.Shorten(k.LocalizedString(printer), maxMessageBytes-len("…"))
}

// maxEnumShown bounds the values an enum's violation names; the rest are
// counted ("value must be one of 'a', 'b', … and 99980 more").
const maxEnumShown = 20

// enumText is the library's enum message, naming at most maxEnumShown of
// the allowed values: a schema's enum of 100,000 values made each refused
// call's error body a megabyte.
func enumText(k *kind.Enum) string {
	if len(k.Want) <= maxEnumShown || slices.ContainsFunc(k.Want, func(v any) bool {
		switch v.(type) {
		case []any, map[string]any:
			return true // the library says only "'enum' failed"
		}
		return false
	}) {
		return textcut.Shorten(k.LocalizedString(printer), maxMessageBytes-len("…"))
	}
	head := (&kind.Enum{Got: k.Got, Want: k.Want[:maxEnumShown]}).LocalizedString(printer)
	more := fmt.Sprintf(" and %d more", len(k.Want)-maxEnumShown)
	return textcut.Shorten(head, maxMessageBytes-len("…")-len(more)) + more
}

// Pointer returns the JSON pointer (RFC 6901) of a path of member names
// and array indexes.
func Pointer(path []string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// Reason turns a compiler error into one line that names the failing
// keyword and where it is ("at /properties/x/pattern: ..."), without the
// compiler's internal resource URLs.
func Reason(err error) string {
	var sve *sj.SchemaValidationError
	if errors.As(err, &sve) {
		if ve, ok := sve.Err.(*sj.ValidationError); ok {
			leaf := ve
			for len(leaf.Causes) > 0 {
				leaf = leaf.Causes[0]
			}
			return fmt.Sprintf("at %s: %s", cmp.Or(Pointer(leaf.InstanceLocation), "/"), oneLine(violationText(leaf.ErrorKind)))
		}
	}
	return strings.NewReplacer(ResourceURL, "schema", SharedURL, "schema").Replace(oneLine(err.Error()))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// OpenNullable returns doc with OpenAPI's nullable read into JSON Schema:
// every schema object whose "nullable" is true and which has a "type"
// gets "null" added to that type (a string becomes a list of two).
// JSON Schema itself ignores the keyword, but schemas made from OpenAPI
// documents (and MCP servers generated from them) use it, and package
// grammar widens the type the same way. The values of enum, const,
// default and examples are data, not schemas, and are left as they are;
// so is an enum without null, which still refuses it. Objects are copied
// only where something changes: doc is not modified.
func OpenNullable(doc any) any {
	out, _ := openNullable(doc)
	return out
}

// openNullable is [OpenNullable], and whether it changed anything.
func openNullable(v any) (any, bool) {
	switch v := v.(type) {
	case []any:
		var out []any
		for i, e := range v {
			if ne, changed := openNullable(e); changed {
				if out == nil {
					out = slices.Clone(v)
				}
				out[i] = ne
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case map[string]any:
		var out map[string]any
		set := func(k string, val any) {
			if out == nil {
				out = maps.Clone(v)
			}
			out[k] = val
		}
		for k, e := range v {
			var ne any
			changed := false
			switch k {
			case "enum", "const", "default", "examples":
				continue // data
			case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies":
				// Names to schemas: a property may be named "enum".
				if m, ok := e.(map[string]any); ok {
					ne, changed = openNullableEach(m)
				}
			default:
				ne, changed = openNullable(e)
			}
			if changed {
				set(k, ne)
			}
		}
		if n, _ := v["nullable"].(bool); n {
			switch t := v["type"].(type) {
			case string:
				if t != "null" {
					set("type", []any{t, "null"})
				}
			case []any:
				if !slices.Contains(t, any("null")) {
					set("type", append(slices.Clone(t), "null"))
				}
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return v, false
}

// openNullableEach is openNullable of each value of m (names to schemas).
func openNullableEach(m map[string]any) (any, bool) {
	var out map[string]any
	for name, sub := range m {
		if ns, changed := openNullable(sub); changed {
			if out == nil {
				out = maps.Clone(m)
			}
			out[name] = ns
		}
	}
	if out == nil {
		return m, false
	}
	return out, true
}

// CloseObjects returns a copy of the schema s in which every object schema
// that declares properties and says nothing else about other members gets
// additionalProperties: false, walking properties, items, $defs and
// definitions — the reading the grammar compiler gives such a schema, so
// that what the grammar cannot emit the validator also refuses. Schemas
// that combine (allOf, anyOf, oneOf, $ref, if, dependentSchemas) or
// already speak of other members are left open: closing them would reject
// valid instances. s is not modified.
func CloseObjects(s map[string]any) map[string]any {
	merged, ok := mergedDefs(s)
	if !ok {
		merged = nil // a merged reference this walk cannot name: close no definition
	}
	return closeObjects(s, merged, ok, false)
}

// closeObjects is [CloseObjects] below the root. keep leaves the subtree as
// it is: the grammar compiler merges the properties of a combining
// schema's subschemas with its branches' (allOf, anyOf beside properties,
// $ref with siblings), so closing one of them would refuse what the merged
// grammar lets a model write. merged names the definitions ("$defs/x",
// "definitions/x") that a merge reaches; closeDefs is false when some
// merge could not be traced.
func closeObjects(s map[string]any, merged map[string]bool, closeDefs, keep bool) map[string]any {
	out := make(map[string]any, len(s)+1)
	for k, v := range s {
		out[k] = v
	}
	_, hasProps := s["properties"].(map[string]any)
	open := combines(s)
	for _, k := range []string{"additionalProperties", "patternProperties", "unevaluatedProperties"} {
		if _, ok := s[k]; ok {
			open = true
		}
	}
	if hasProps && !open && !keep {
		out["additionalProperties"] = false
	}
	below := keep || combines(s)
	for _, k := range []string{"properties", "$defs", "definitions"} {
		if m, ok := s[k].(map[string]any); ok {
			mm := make(map[string]any, len(m))
			for name, sub := range m {
				if sm, ok := sub.(map[string]any); ok {
					kp := below
					if k != "properties" {
						kp = !closeDefs || merged[k+"/"+name]
					}
					sub = closeObjects(sm, merged, closeDefs, kp)
				}
				mm[name] = sub
			}
			out[k] = mm
		}
	}
	if sm, ok := s["items"].(map[string]any); ok {
		out["items"] = closeObjects(sm, merged, closeDefs, below)
	}
	return out
}

// combines reports whether s combines with other subschemas.
func combines(s map[string]any) bool {
	for _, k := range []string{"allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if", "dependentSchemas"} {
		if _, ok := s[k]; ok {
			return true
		}
	}
	return false
}

// mergedDefs returns the root definitions ("$defs/x", "definitions/x")
// that the grammar compiler merges with other subschemas: the targets of a
// $ref in an allOf, anyOf or oneOf branch or beside other keywords, and
// what those reach through $ref in turn. ok is false when such a
// reference is not to a root definition.
func mergedDefs(root map[string]any) (map[string]bool, bool) {
	merged := map[string]bool{}
	var queue []string
	ok := true
	add := func(ref string) {
		name, found := strings.CutPrefix(ref, "#/")
		if !found || strings.Count(name, "/") != 1 || strings.Contains(name, "%") ||
			!(strings.HasPrefix(name, "$defs/") || strings.HasPrefix(name, "definitions/")) {
			if ref != "#" {
				ok = false
			}
			return
		}
		name = strings.NewReplacer("~1", "/", "~0", "~").Replace(name)
		if !merged[name] {
			merged[name] = true
			queue = append(queue, name)
		}
	}
	var walk func(v any, inBranch bool)
	walk = func(v any, inBranch bool) {
		switch v := v.(type) {
		case map[string]any:
			if ref, isStr := v["$ref"].(string); isStr && (inBranch || len(v) > 1) {
				add(ref)
			}
			for k, x := range v {
				walk(x, k == "allOf" || k == "anyOf" || k == "oneOf")
			}
		case []any:
			for _, x := range v {
				walk(x, inBranch)
			}
		}
	}
	walk(root, false)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		kind, def, _ := strings.Cut(name, "/")
		defs, _ := root[kind].(map[string]any)
		if d, isMap := defs[def].(map[string]any); isMap {
			if ref, isStr := d["$ref"].(string); isStr {
				add(ref)
			}
		}
	}
	return merged, ok
}
