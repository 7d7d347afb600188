package gateway

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/jsonschema"
	"github.com/toolgate/toolgate/tools"
)

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
type compiledSchema = jsonschema.Schema

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

// compileSchema compiles a tool's input schema (nil: an object with no
// declared properties) with the shared setup (internal/jsonschema: draft
// 2020-12 as the default, ECMA-262 patterns, no external references) and
// asserted formats.
func compileSchema(raw json.RawMessage, closeObjects bool) (*compiledSchema, error) {
	if len(raw) == 0 {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	doc, err := jsonschema.ParseDocument(raw)
	if err != nil {
		return nil, err
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, errors.New("schema is not an object")
	}
	return jsonschema.Compile(doc, &jsonschema.Options{AssertFormat: true, CloseObjects: closeObjects})
}

// checkSchema validates a parsed instance against s before deadline and
// returns its violations (leaves first, at most [jsonschema.MaxViolations]),
// or [jsonschema.ErrDeadline].
func checkSchema(s *compiledSchema, instance any, deadline time.Time) ([]Violation, error) {
	vs, err := s.Validate(instance, deadline)
	if err != nil {
		return nil, err
	}
	out := make([]Violation, len(vs))
	for i, v := range vs {
		out[i] = Violation{Pointer: v.Pointer, Message: v.Message}
	}
	return out, nil
}

func jsonPointer(path []string) string { return jsonschema.Pointer(path) }
