package grammar

import (
	"encoding/json"
	"strconv"
	"strings"
)

// EnvelopeSchema returns the turn envelope (see [Envelope]) as a JSON Schema,
// for backends that take a schema instead of a grammar: Ollama's `format`,
// or (through [OpenAIStrict]) OpenAI's response_format. It is an anyOf over
// one branch per tool, with "tool" as a const so that the arguments bind to
// the named tool, plus the answer and find_tools branches. Each tool's
// schema moves under $defs/<name> with its local references rewritten, so
// definitions of different tools cannot collide.
//
// Tools whose schema is not valid JSON are left out and reported as
// relaxations with Keyword "tool"; the error wraps [ErrNoTools] when no
// branch is left, [ErrInvalidSchema] for a bad tool name.
func EnvelopeSchema(tools []EnvelopeTool, opts *Options) (json.RawMessage, []Relaxation, error) {
	o := opts.orZero()
	if err := o.validate(); err != nil {
		return nil, nil, err
	}
	if err := checkToolNames(tools); err != nil {
		return nil, nil, err
	}
	var relax []Relaxation
	defs := newObject()
	branches := &jsonValue{kind: jsonArray}
	obj := func(props [][2]any) *jsonValue {
		v := newObject()
		v.set("type", newString("object"))
		p := newObject()
		req := &jsonValue{kind: jsonArray}
		for _, kv := range props {
			p.set(kv[0].(string), kv[1].(*jsonValue))
			req.arr = append(req.arr, newString(kv[0].(string)))
		}
		v.set("properties", p)
		v.set("required", req)
		v.set("additionalProperties", newBool(false))
		return v
	}
	constStr := func(s string) *jsonValue {
		v := newObject()
		v.set("const", newString(s))
		return v
	}
	strType := func(maxLen int) *jsonValue {
		v := newObject()
		v.set("type", newString("string"))
		if maxLen > 0 {
			v.set("maxLength", &jsonValue{kind: jsonNumber, s: strconv.Itoa(maxLen)})
		}
		return v
	}
	for _, t := range tools {
		raw := t.Schema
		if len(strings.TrimSpace(string(raw))) == 0 {
			raw = json.RawMessage(`{"type":"object"}`)
		}
		doc, err := decodeJSON(raw)
		if err != nil || (doc.kind != jsonObject && doc.kind != jsonBool) {
			relax = append(relax, Relaxation{Pointer: "/$defs/" + t.Name, Keyword: "tool", Reason: "schema is not a JSON Schema; tool left out"})
			continue
		}
		defs.set(t.Name, rebaseRefs(doc, "#/$defs/"+t.Name))
		argRef := newObject()
		argRef.set("$ref", newString("#/$defs/"+t.Name))
		branches.arr = append(branches.arr, obj([][2]any{{"action", constStr("call")}, {"tool", constStr(t.Name)}, {"arguments", argRef}}))
	}
	if !o.NoAnswer {
		branches.arr = append(branches.arr, obj([][2]any{{"action", constStr("answer")}, {"text", strType(envelopeBound(o.MaxAnswerLength, DefaultMaxAnswerLength))}}))
	}
	if !o.NoFindTools {
		branches.arr = append(branches.arr, obj([][2]any{{"action", constStr("find_tools")}, {"query", strType(envelopeBound(o.MaxQueryLength, DefaultMaxQueryLength))}}))
	}
	if len(branches.arr) == 0 {
		return nil, relax, ErrNoTools
	}
	root := newObject()
	root.set("anyOf", branches)
	if len(defs.keys) > 0 {
		root.set("$defs", defs)
	}
	return json.RawMessage(canonicalJSON(root)), relax, nil
}

// rebaseRefs copies a schema placed at base (a "#/…" pointer), rewriting
// its document-local references: "#" and "#/x" become base and base+"/x",
// and draft-07 "definitions" stay where they are (under base).
func rebaseRefs(v *jsonValue, base string) *jsonValue {
	switch v.kind {
	case jsonArray:
		c := &jsonValue{kind: jsonArray}
		for _, e := range v.arr {
			c.arr = append(c.arr, rebaseRefs(e, base))
		}
		return c
	case jsonObject:
		c := newObject()
		for i, k := range v.keys {
			val := v.vals[i]
			switch {
			case k == "$ref" && val.kind == jsonString && (val.s == "#" || strings.HasPrefix(val.s, "#/")):
				c.set(k, newString(base+strings.TrimPrefix(val.s, "#")))
			case k == "enum" || k == "const" || k == "default" || k == "examples":
				c.set(k, val)
			default:
				c.set(k, rebaseRefs(val, base))
			}
		}
		return c
	}
	return v
}
