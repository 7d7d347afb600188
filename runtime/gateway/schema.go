package gateway

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/tools"
)

var printer = message.NewPrinter(language.English)

// maxToolCache bounds the tool-pointer cache; replaced tools leave stale
// entries behind, so it is cleared when it grows past this.
const maxToolCache = 4096

// schemaFor returns the compiled schema of t: by tool pointer (tools are
// immutable in a snapshot) without hashing, else by the schema's hash.
func (g *Gateway) schemaFor(t *tools.Tool) (*compiledSchema, error) {
	if v, ok := g.byTool.Load(t); ok {
		return v.(*compiledSchema), nil
	}
	s, err := g.schemas.get(t.InputSchema, !g.opts.AllowUndeclared)
	if err != nil {
		return nil, err
	}
	if g.byToolN.Add(1) > maxToolCache {
		g.byTool.Clear()
		g.byToolN.Store(0)
	}
	g.byTool.Store(t, s)
	return s, nil
}

// compiledSchema is a tool's input schema, compiled once.
type compiledSchema struct {
	schema *jsonschema.Schema
}

// schemaCache compiles each distinct schema once, keyed by the sha256 of
// its bytes and the closing policy. Safe for concurrent use.
type schemaCache struct {
	m sync.Map // [33]byte -> *cacheEntry
}

type cacheEntry struct {
	once sync.Once
	s    *compiledSchema
	err  error
}

func (c *schemaCache) get(raw json.RawMessage, closeObjects bool) (*compiledSchema, error) {
	var k [33]byte
	sum := sha256.Sum256(raw)
	copy(k[:32], sum[:])
	if closeObjects {
		k[32] = 1
	}
	v, _ := c.m.LoadOrStore(k, &cacheEntry{})
	e := v.(*cacheEntry)
	e.once.Do(func() { e.s, e.err = compileSchema(raw, closeObjects) })
	return e.s, e.err
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("gateway: schema reference %q: external references are not loaded", url)
}

// compileSchema compiles a tool's input schema (nil: an object with no
// declared properties) with draft 2020-12 as the default, ECMA-262
// patterns, asserted formats and no external references.
func compileSchema(raw json.RawMessage, closeObjects bool) (*compiledSchema, error) {
	if len(raw) == 0 {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	doc, err := jcs.Parse(raw)
	if err != nil {
		return nil, err
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("schema is not an object")
	}
	if closeObjects {
		closeSchema(obj)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	c.UseRegexpEngine(compileECMA)
	c.AssertFormat()
	const loc = "toolgate:input-schema.json"
	if err := c.AddResource(loc, obj); err != nil {
		return nil, err
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, err
	}
	return &compiledSchema{schema: s}, nil
}

// closeSchema sets additionalProperties: false on every object schema that
// declares properties and says nothing else about other members, walking
// properties, items and $defs. Schemas that combine (allOf, anyOf, oneOf,
// $ref, if) are left open: closing them would reject valid instances.
func closeSchema(s map[string]any) {
	_, hasProps := s["properties"].(map[string]any)
	open := false
	for _, k := range []string{"additionalProperties", "patternProperties", "unevaluatedProperties",
		"allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if", "dependentSchemas"} {
		if _, ok := s[k]; ok {
			open = true
		}
	}
	if hasProps && !open {
		s["additionalProperties"] = false
	}
	for _, k := range []string{"properties", "$defs", "definitions"} {
		if m, ok := s[k].(map[string]any); ok {
			for _, sub := range m {
				if sm, ok := sub.(map[string]any); ok {
					closeSchema(sm)
				}
			}
		}
	}
	if sm, ok := s["items"].(map[string]any); ok {
		closeSchema(sm)
	}
}

// check validates a parsed instance and returns its violations, leaves
// first, at most 20.
func (s *compiledSchema) check(instance any) []Violation {
	err := s.schema.Validate(instance)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Pointer: "", Message: err.Error()}}
	}
	var out []Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(out) >= 20 {
			return
		}
		if len(e.Causes) == 0 {
			out = append(out, Violation{Pointer: jsonPointer(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(printer)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}

func jsonPointer(path []string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1"))
	}
	return b.String()
}
