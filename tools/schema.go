package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolgate/toolgate/internal/jcs"
	ijs "github.com/toolgate/toolgate/internal/jsonschema"
)

// ErrInvalidSchema is wrapped by every error [CheckInputSchema] returns.
var ErrInvalidSchema = errors.New("tools: invalid input schema")

// MaxSchemaDepth bounds the nesting of objects and arrays in an input
// schema. Compiling a schema costs time quadratic in its depth (the JSON
// Schema library builds each keyword's location string by concatenation,
// and meta-validation walks the same path again), so a hostile catalog
// nesting 2,000 levels took half a minute; real tools' schemas nest fewer
// than 10 levels.
const MaxSchemaDepth = 64

// CheckInputSchema reports whether schema is acceptable as a tool's input
// schema: one strict JSON object (no duplicate member names at any depth,
// valid UTF-8, nesting at most [MaxSchemaDepth]) that compiles as a JSON
// Schema under the draft its "$schema" names (2020-12 when absent), whose
// "type", when present, is "object" (arguments are always an object).
// The compiler is toolgate's one JSON Schema setup (internal/jsonschema,
// shared with the gateway): patterns are ECMA-262 regular expressions, as
// JSON Schema specifies; references to other documents are never fetched,
// so a schema that needs one is invalid. The error wraps [ErrInvalidSchema]
// and reads as one line.
func CheckInputSchema(schema json.RawMessage) error {
	return (*schemaChecker)(nil).check(schema)
}

// schemaChecker checks many input schemas with one compiler, so that the
// meta-schemas are compiled once rather than once per tool (a quarter less
// CPU). A schema that could see another tool's schema through the shared
// compiler (it declares an identifier, "$id", "id", "$anchor",
// "$dynamicAnchor", "$recursiveAnchor", or names the shared compiler's
// URLs) is checked alone, and so is one that fails, so that a failure is
// never an artifact of sharing. A nil *schemaChecker checks every schema
// alone. Not safe for concurrent use.
//
// The shared compiler keeps every schema it compiled, so it is replaced
// after [sharedSchemas] of them: at 100,000 tools it held 1.8 GB. A schema
// byte-identical to one that passed before passes without a compile
// (checking is a function of the bytes alone): the tools of one server
// often share a schema, and a server's tools repeat across namespaces.
// Such a schema's compact form is kept once and shared by its tools
// (compact): at 100,000 tools grown from 3,000 a copy each held 42 MB.
type schemaChecker struct {
	c      *jsonschema.Compiler
	n      int
	passed map[string]json.RawMessage // schema -> its compact form
	// byAddr is passed by the address of the schema's bytes: a catalog's
	// parser gives the tools of one schema one slice, whose bytes then
	// need no hashing (100,000 tools hashed 60 MB).
	byAddr map[schemaAddr]json.RawMessage
	// buf is where a schema is compacted; copies holds the compact forms
	// compact returns (see chunks).
	buf    bytes.Buffer
	copies chunks
}

// sharedSchemas is how many schemas one shared compiler compiles before it
// is replaced; compiling the meta-schemas again costs about as much as a
// few dozen tools' schemas.
const sharedSchemas = 512

// aloneMarkers are byte strings that make a schema be checked alone: the
// keywords that identify a schema resource, and the URL prefix under which
// the shared compiler files the other tools' schemas.
var aloneMarkers = [][]byte{[]byte(`"$id"`), []byte(`"id"`), []byte(`"$anchor"`), []byte(`"$dynamicAnchor"`), []byte(`"$recursiveAnchor"`), []byte(schemaURL)}

// parseSchema parses schema strictly into the tree the compiler takes
// ([jcs.Parse] keeps numbers as [json.Number], as jsonschema.UnmarshalJSON does).
func parseSchema(schema json.RawMessage) (map[string]any, error) {
	doc, err := jcs.Parse(schema)
	if err != nil {
		var se *jcs.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w: not valid JSON: %s", ErrInvalidSchema, se.Msg)
		}
		return nil, fmt.Errorf("%w: not valid JSON: %v", ErrInvalidSchema, err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: not a JSON object", ErrInvalidSchema)
	}
	if deeper(obj, MaxSchemaDepth) {
		return nil, fmt.Errorf("%w: nested deeper than %d levels", ErrInvalidSchema, MaxSchemaDepth)
	}
	return obj, nil
}

// deeper reports whether v nests objects and arrays more than limit levels.
func deeper(v any, limit int) bool {
	switch v := v.(type) {
	case map[string]any:
		if limit == 0 {
			return true
		}
		for _, e := range v {
			if deeper(e, limit-1) {
				return true
			}
		}
	case []any:
		if limit == 0 {
			return true
		}
		for _, e := range v {
			if deeper(e, limit-1) {
				return true
			}
		}
	}
	return false
}

func (sc *schemaChecker) check(schema json.RawMessage) error {
	_, err := sc.compact(schema)
	return err
}

// compact checks schema and returns it compact ([json.Compact]: member
// order kept). Through a non-nil sc, byte-identical schemas get the same
// slice, which its holders never modify, cut from sc's blocks (chunks).
func (sc *schemaChecker) compact(schema json.RawMessage) (json.RawMessage, error) {
	if sc != nil {
		// An address names the same bytes only with the same length.
		if c, ok := sc.byAddr[addrOf(schema)]; ok {
			return c, nil
		}
		if c, ok := sc.passed[string(schema)]; ok {
			sc.remember(schema, c)
			return c, nil
		}
	}
	if err := checkSchema(sc, schema); err != nil {
		return nil, err
	}
	if sc == nil {
		var buf bytes.Buffer
		buf.Grow(len(schema)) // compact is never longer
		if err := json.Compact(&buf, schema); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
		}
		return json.RawMessage(slices.Clip(buf.Bytes())), nil
	}
	sc.buf.Reset()
	if err := json.Compact(&sc.buf, schema); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	c := json.RawMessage(sc.copies.bytes(sc.buf.Bytes()))
	if sc.passed == nil {
		sc.passed = make(map[string]json.RawMessage)
	}
	// The key aliases the caller's schema, read-only for the call (sc
	// lives no longer than [DefineAll]).
	sc.passed[unsafe.String(unsafe.SliceData(schema), len(schema))] = c
	sc.remember(schema, c)
	return c, nil
}

// remember files schema's compact form c by the address of its bytes.
// Like passed's keys, the address is the caller's, whose bytes are
// read-only for the checker's life (DefineAll's call).
func (sc *schemaChecker) remember(schema, c json.RawMessage) {
	if len(schema) == 0 {
		return
	}
	if sc.byAddr == nil {
		sc.byAddr = make(map[schemaAddr]json.RawMessage)
	}
	sc.byAddr[addrOf(schema)] = c
}

// checkSchema checks schema, with sc's shared compiler when sc is not nil.
func checkSchema(sc *schemaChecker, schema json.RawMessage) error {
	obj, err := parseSchema(schema)
	if err != nil {
		return err
	}
	if typ, ok := obj["type"]; ok && typ != "object" {
		return fmt.Errorf("%w: type is %s, want \"object\"", ErrInvalidSchema, compactJSON(typ))
	}
	if ijs.ProvablyValid(obj) {
		return nil // the shapes real tools use: no meta-validation or compile needed
	}
	shared := sc != nil
	for _, kw := range aloneMarkers {
		shared = shared && !bytes.Contains(schema, kw)
	}
	if shared {
		if sc.c == nil || sc.n%sharedSchemas == 0 {
			sc.c = ijs.NewCompiler()
		}
		sc.n++
		url := fmt.Sprintf("%s:%d", schemaURL, sc.n)
		if sc.c.AddResource(url, any(obj)) == nil {
			if _, err := sc.c.Compile(url); err == nil {
				return nil
			}
		}
		// Report the failure as the schema alone gives it. The shared
		// compiler may hold a half-compiled resource now; start afresh.
		sc.c = nil
		obj, _ = parseSchema(schema)
	}
	c := ijs.NewCompiler()
	if err := c.AddResource(ijs.ResourceURL, any(obj)); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidSchema, ijs.Reason(err))
	}
	if _, err := c.Compile(ijs.ResourceURL); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidSchema, ijs.Reason(err))
	}
	return nil
}

func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// schemaURL prefixes the names of the schemas in the shared compiler; it
// is the name internal/jsonschema.Reason replaces by "schema" in messages.
const schemaURL = ijs.SharedURL
