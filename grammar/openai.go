package grammar

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// OpenAI's documented limits for Structured Outputs (strict mode).
const (
	OpenAIMaxProperties  = 5000
	OpenAIMaxDepth       = 10
	OpenAIMaxEnumValues  = 1000
	OpenAIMaxStringChars = 120000
)

// openAIKeywords are the keywords OpenAI strict mode accepts, by where they
// apply; other validation keywords move into the description.
var openAIKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true, "items": true,
	"enum": true, "const": true, "anyOf": true, "$ref": true, "$defs": true, "description": true, "title": true,
	"pattern": true, "format": true, "minimum": true, "maximum": true, "exclusiveMinimum": true,
	"exclusiveMaximum": true, "multipleOf": true, "minItems": true, "maxItems": true,
}

// openAIFormats are the string formats strict mode accepts.
var openAIFormats = map[string]bool{"date-time": true, "time": true, "date": true, "duration": true, "email": true,
	"hostname": true, "ipv4": true, "ipv6": true, "uuid": true}

// OpenAIStrict transforms a JSON Schema into the form OpenAI's strict mode
// (strict function tools, response_format json_schema) accepts: every
// object lists all its properties as required, with the optional ones made
// nullable (a model then writes null for an omitted optional property; the
// caller drops those nulls before validation), additionalProperties is
// false on every object, oneOf becomes anyOf, allOf is merged, draft-07
// definitions become $defs, and the root is an object (a root anyOf of
// objects is merged into one object). Keywords strict mode does not accept
// move into the description and are returned as relaxations, as is every
// other change that admits more or fewer values than the original schema.
//
// The result is checked against OpenAI's limits (5,000 properties, 10
// levels of object nesting, 1,000 enum values, 120,000 characters of
// names, enum and const values); exceeding one is an error wrapping
// [ErrLimit]. A schema that is not JSON or not an object is an error wrapping
// [ErrInvalidSchema].
func OpenAIStrict(schema []byte) (json.RawMessage, []Relaxation, error) {
	doc, err := decodeJSON(schema)
	if err != nil {
		return nil, nil, &SchemaError{Msg: err.Error(), Err: ErrInvalidSchema}
	}
	if doc.kind != jsonObject {
		return nil, nil, &SchemaError{Msg: "the root of a strict schema must be an object schema", Err: ErrInvalidSchema}
	}
	t := &strictTransform{c: newCompiler(doc, Options{})}
	root := t.rootObject(doc)
	out := t.schema(root, "", 0, true)
	if defs := doc.get("$defs"); defs != nil && defs.kind == jsonObject {
		out.set("$defs", t.defs(defs, "/$defs"))
	}
	if defs := doc.get("definitions"); defs != nil && defs.kind == jsonObject {
		d := out.get("$defs")
		if d == nil {
			d = newObject()
		}
		nd := t.defs(defs, "/definitions")
		for i, k := range nd.keys {
			d.set(k, nd.vals[i])
		}
		out.set("$defs", d)
	}
	if err := t.checkLimits(out); err != nil {
		return nil, t.c.relax, err
	}
	return json.RawMessage(canonicalJSON(out)), t.c.relax, nil
}

type strictTransform struct {
	c *compiler
}

func (t *strictTransform) relaxf(ptr, kw, format string, args ...any) {
	t.c.relaxf(ptr, kw, format, args...)
}

// rootObject turns a root anyOf/oneOf of objects into one object.
func (t *strictTransform) rootObject(doc *jsonValue) *jsonValue {
	for _, k := range []string{"anyOf", "oneOf"} {
		br := doc.get(k)
		if br == nil || br.kind != jsonArray || doc.has("properties") {
			continue
		}
		merged := newObject()
		merged.set("type", newString("object"))
		props := newObject()
		for _, b := range br.arr {
			if r := b.get("$ref"); r != nil && r.kind == jsonString {
				if tgt, ok := t.c.resolve(b, r.s); ok {
					b = tgt
				}
			}
			p := b.get("properties")
			if p == nil || p.kind != jsonObject {
				continue
			}
			for i, name := range p.keys {
				if x := props.get(name); x != nil {
					if canonicalJSON(x) != canonicalJSON(p.vals[i]) {
						alt := newObject()
						alt.set("anyOf", &jsonValue{kind: jsonArray, arr: []*jsonValue{x, p.vals[i]}})
						props.set(name, alt)
					}
					continue
				}
				props.set(name, p.vals[i])
			}
		}
		merged.set("properties", props)
		if d := doc.get("description"); d != nil {
			merged.set("description", d)
		}
		t.relaxf("", k, "a strict root must be an object: the %d branches are merged into one object whose properties are all optional (nullable); which combinations are allowed is not enforced", len(br.arr))
		return merged
	}
	return doc
}

func (t *strictTransform) defs(defs *jsonValue, ptr string) *jsonValue {
	out := newObject()
	for i, k := range defs.keys {
		out.set(k, t.schema(defs.vals[i], pointerJoin(ptr, k), 0, false))
	}
	return out
}

// schema transforms one schema; depth counts object nesting.
func (t *strictTransform) schema(s *jsonValue, ptr string, depth int, root bool) *jsonValue {
	if s.kind == jsonBool {
		if !s.b {
			t.relaxf(ptr, "false", "strict mode has no 'nothing' schema; replaced by null")
			n := newObject()
			n.set("type", newString("null"))
			return n
		}
		t.relaxf(ptr, "true", "strict mode needs a type; any JSON scalar or array admitted as a string, number, boolean or null")
		return anyScalar()
	}
	if s.kind != jsonObject {
		return anyScalar()
	}
	if depth > maxSchemaDepth {
		// Only a merged allOf that holds a $ref to itself goes this deep
		// (the decoder refuses deeper documents): stop inlining it.
		t.relaxf(ptr, "", "schema nested deeper than %d levels; any JSON scalar or array admitted below as a string, number, boolean or null", maxSchemaDepth)
		return anyScalar()
	}
	// allOf: merge when it yields one branch.
	if s.has("allOf") && !s.has("anyOf") && !s.has("oneOf") {
		if br := t.c.flatten(s, ptr); len(br) == 1 && !br[0].has("\x00ref") {
			s = br[0]
		} else {
			t.relaxf(ptr, "allOf", "allOf could not be merged; moved into the description")
		}
	}
	out := newObject()
	var notes []string
	types := s.get("type")
	isObject := (types != nil && typeIncludes(types, "object")) || (types == nil && s.has("properties")) || root
	if root && types == nil {
		out.set("type", newString("object"))
	}
	for i, k := range s.keys {
		v := s.vals[i]
		switch k {
		case "$defs", "definitions":
			// handled at the root
		case "$schema", "$id", "$comment", "default", "examples", "example", "readOnly", "writeOnly", "deprecated", "$anchor":
			// annotations strict mode does not take; no effect on validity
		case "nullable":
			if v.kind == jsonBool && v.b && types != nil {
				types = addNull(types)
			}
		case "type":
			out.set("type", types)
		case "properties":
			if v.kind != jsonObject {
				continue
			}
			props := newObject()
			for j, name := range v.keys {
				props.set(name, t.schema(v.vals[j], pointerJoin(ptr, "properties", name), depth+1, false))
			}
			out.set("properties", props)
		case "required", "additionalProperties":
			// rebuilt below
		case "items":
			if v.kind == jsonArray {
				t.relaxf(ptr, "items", "tuple items are not supported in strict mode; each item may match any of the listed schemas")
				a := newObject()
				var alts []*jsonValue
				for j, e := range v.arr {
					alts = append(alts, t.schema(e, pointerJoin(ptr, "items", strconv.Itoa(j)), depth+1, false))
				}
				a.set("anyOf", &jsonValue{kind: jsonArray, arr: alts})
				out.set("items", a)
				continue
			}
			out.set("items", t.schema(v, pointerJoin(ptr, "items"), depth+1, false))
		case "anyOf", "oneOf":
			if v.kind != jsonArray {
				continue
			}
			if k == "oneOf" {
				t.relaxf(ptr, "oneOf", "strict mode has no oneOf; exclusivity is not enforced (anyOf)")
			}
			var alts []*jsonValue
			for j, e := range v.arr {
				alts = append(alts, t.schema(e, pointerJoin(ptr, k, strconv.Itoa(j)), depth, false))
			}
			if prev := out.get("anyOf"); prev != nil {
				alts = append(prev.arr, alts...)
			}
			out.set("anyOf", &jsonValue{kind: jsonArray, arr: alts})
		case "$ref":
			if v.kind == jsonString && strings.HasPrefix(v.s, "#/definitions/") {
				v = newString("#/$defs/" + strings.TrimPrefix(v.s, "#/definitions/"))
			}
			out.set("$ref", v)
		case "format":
			if v.kind == jsonString && openAIFormats[v.s] {
				out.set(k, v)
			} else {
				notes = append(notes, k+": "+canonicalJSON(v))
				t.relaxf(ptr, k, "format %s is not supported in strict mode; moved into the description", canonicalJSON(v))
			}
		case "description", "title":
			out.set(k, v)
		default:
			if openAIKeywords[k] {
				out.set(k, v)
				continue
			}
			if strings.HasPrefix(k, "x-") {
				continue
			}
			notes = append(notes, k+": "+canonicalJSON(v))
			t.relaxf(ptr, k, "not supported in strict mode; moved into the description")
		}
	}
	if len(notes) > 0 {
		d := strings.Join(notes, "; ")
		if old := out.get("description"); old != nil && old.kind == jsonString && old.s != "" {
			d = old.s + " (" + d + ")"
		}
		out.set("description", newString(d))
	}
	if isObject {
		t.closeObject(s, out, ptr)
	}
	return out
}

// closeObject makes every property required (optional ones nullable) and
// sets additionalProperties to false.
func (t *strictTransform) closeObject(s, out *jsonValue, ptr string) {
	req := map[string]bool{}
	if r := s.get("required"); r != nil && r.kind == jsonArray {
		for _, x := range r.arr {
			if x.kind == jsonString {
				req[x.s] = true
			}
		}
	}
	props := out.get("properties")
	if props == nil {
		props = newObject()
		out.set("properties", props)
	}
	all := &jsonValue{kind: jsonArray}
	for i, name := range props.keys {
		all.arr = append(all.arr, newString(name))
		if !req[name] {
			props.vals[i] = nullable(props.vals[i])
		}
	}
	out.set("required", all)
	if ap := s.get("additionalProperties"); ap != nil && !(ap.kind == jsonBool && !ap.b) {
		t.relaxf(ptr, "additionalProperties", "strict mode forbids undeclared properties; additionalProperties %s is dropped", canonicalJSON(ap))
	}
	if s.has("patternProperties") {
		t.relaxf(ptr, "patternProperties", "strict mode forbids undeclared properties; patternProperties is dropped")
	}
	out.set("additionalProperties", newBool(false))
}

func typeIncludes(types *jsonValue, name string) bool {
	if types.kind == jsonString {
		return types.s == name
	}
	for _, e := range types.arr {
		if e.kind == jsonString && e.s == name {
			return true
		}
	}
	return false
}

func addNull(types *jsonValue) *jsonValue {
	if typeIncludes(types, "null") {
		return types
	}
	arr := &jsonValue{kind: jsonArray}
	if types.kind == jsonString {
		arr.arr = append(arr.arr, types)
	} else {
		arr.arr = append(arr.arr, types.arr...)
	}
	arr.arr = append(arr.arr, newString("null"))
	return arr
}

// nullable admits null besides what s admits.
func nullable(s *jsonValue) *jsonValue {
	if tv := s.get("type"); tv != nil && !s.has("enum") && !s.has("const") && !s.has("anyOf") && !s.has("$ref") {
		c := s.clone()
		c.set("type", addNull(tv))
		return c
	}
	if ev := s.get("enum"); ev != nil && ev.kind == jsonArray && !s.has("type") {
		for _, e := range ev.arr {
			if e.kind == jsonNull {
				return s
			}
		}
	}
	n := newObject()
	n.set("type", newString("null"))
	if av := s.get("anyOf"); av != nil && len(s.keys) == 1 {
		c := s.clone()
		c.set("anyOf", &jsonValue{kind: jsonArray, arr: append(append([]*jsonValue(nil), av.arr...), n)})
		return c
	}
	out := newObject()
	out.set("anyOf", &jsonValue{kind: jsonArray, arr: []*jsonValue{s, n}})
	return out
}

func anyScalar() *jsonValue {
	v := newObject()
	v.set("type", &jsonValue{kind: jsonArray, arr: []*jsonValue{newString("string"), newString("number"), newString("boolean"), newString("null")}})
	return v
}

// checkLimits applies OpenAI's documented limits to a transformed schema.
func (t *strictTransform) checkLimits(s *jsonValue) error {
	var props, enums, chars, maxDepth int
	var walk func(v *jsonValue, depth int)
	walk = func(v *jsonValue, depth int) {
		if v.kind != jsonObject {
			return
		}
		if depth > maxDepth {
			maxDepth = depth
		}
		if p := v.get("properties"); p != nil && p.kind == jsonObject {
			props += len(p.keys)
			for i, name := range p.keys {
				chars += len([]rune(name))
				walk(p.vals[i], depth+1)
			}
		}
		if e := v.get("enum"); e != nil && e.kind == jsonArray {
			enums += len(e.arr)
			for _, x := range e.arr {
				if x.kind == jsonString {
					chars += len([]rune(x.s))
				} else {
					chars += len(canonicalJSON(x))
				}
			}
		}
		if c := v.get("const"); c != nil && c.kind == jsonString {
			chars += len([]rune(c.s))
		}
		for _, k := range []string{"items", "anyOf"} {
			x := v.get(k)
			if x == nil {
				continue
			}
			if x.kind == jsonArray {
				for _, e := range x.arr {
					walk(e, depth)
				}
			} else {
				walk(x, depth)
			}
		}
		if d := v.get("$defs"); d != nil && d.kind == jsonObject {
			for i, name := range d.keys {
				chars += len([]rune(name))
				walk(d.vals[i], 1)
			}
		}
	}
	walk(s, 1)
	switch {
	case props > OpenAIMaxProperties:
		return fmt.Errorf("%w: %d properties (OpenAI allows %d)", ErrLimit, props, OpenAIMaxProperties)
	case maxDepth > OpenAIMaxDepth:
		return fmt.Errorf("%w: %d levels of nesting (OpenAI allows %d)", ErrLimit, maxDepth, OpenAIMaxDepth)
	case enums > OpenAIMaxEnumValues:
		return fmt.Errorf("%w: %d enum values (OpenAI allows %d)", ErrLimit, enums, OpenAIMaxEnumValues)
	case chars > OpenAIMaxStringChars:
		return fmt.Errorf("%w: %d characters of names and values (OpenAI allows %d)", ErrLimit, chars, OpenAIMaxStringChars)
	}
	return nil
}
