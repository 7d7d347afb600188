package jsonschema

import (
	"encoding/json"
	"regexp"
	"strings"
)

// ProvablyValid reports whether the compiler of [NewCompiler] accepts doc
// (a tree from [ParseDocument]) as a schema, where that can be told
// without compiling. True is certain; false means "not known", and the
// caller compiles. Like the instance fast path (fast.go), it decides the
// shapes tool schemas use and steps aside for everything else:
//
//   - the draft is the default one or names 2020-12, 2019-09 or draft-07,
//     whose meta-schemas constrain the keywords below alike;
//   - every keyword the compiler knows is one of: the annotations, type,
//     enum, const, format, the numeric bounds and multipleOf, the lengths
//     and sizes, uniqueItems, required, dependentRequired, the keywords
//     whose values are schemas (properties, patternProperties,
//     additionalProperties, propertyNames, items as one schema,
//     prefixItems, contains, allOf, anyOf, oneOf, not, if, then, else,
//     the unevaluated and dependent ones, contentSchema); and each has a
//     value of the kind its meta-schema asks (a pattern, or a
//     patternProperties name, only when it means the same in RE2 and
//     ECMA-262, [Portable]), a keyword some drafts do not know being
//     held to the form the others give it;
//   - no identifier ($id, $anchor, ...); a reference only to the root
//     ("#") or to a member of the root's "$defs" or "definitions"
//     ("#/$defs/Name": the shape pydantic and zod write), whose members
//     are checked as schemas in turn.
//
// Other member names are not keywords; every draft ignores them. A nested
// schema is checked the same way. The cost is one walk of doc, against a
// meta-schema validation and a compile (about 50 µs for a tool's schema);
// FuzzProvablyValid holds the answer to the compiler's.
func ProvablyValid(doc any) bool {
	m, ok := fastRoot(doc)
	if !ok {
		return false
	}
	w := walk{root: m}
	return w.schema(m, true, 0)
}

// walk is one [ProvablyValid]: the root, whose $defs and definitions
// local references name.
type walk struct {
	root map[string]any
}

// validDepth bounds the recursion; parsed documents nest at most
// jcs.MaxDepth levels, so this is a guard, not a limit callers reach.
const validDepth = 512

// keywordKind is how [ProvablyValid] checks one keyword's value.
type keywordKind uint8

const (
	kindUnknown     keywordKind = iota // a keyword the compiler resolves or the walk does not decide
	kindAny                            // any value (default, const)
	kindString                         // title, description, $comment, format
	kindBool                           // deprecated, readOnly, writeOnly, uniqueItems
	kindArray                          // enum, examples
	kindNumber                         // the numeric bounds
	kindPositive                       // multipleOf
	kindCount                          // lengths, sizes: a non-negative integer
	kindType                           // type
	kindStrings                        // required
	kindPattern                        // pattern
	kindSchema                         // additionalProperties, items, not
	kindSchemas                        // allOf, anyOf, oneOf
	kindSchemaMap                      // properties
	kindPatternMap                     // patternProperties: portable patterns to schemas
	kindRequiredMap                    // dependentRequired: names to required lists
	kindRef                            // $ref: a local reference [ProvablyValid] resolves
	kindDefs                           // $defs, definitions: at the root only
)

// keywords holds every keyword of every draft the compiler knows, with
// how [ProvablyValid] checks it; kindUnknown makes it step aside. A member
// name not in it is not a keyword and is ignored.
var keywords = map[string]keywordKind{
	"title": kindString, "description": kindString, "$comment": kindString, "format": kindString,
	"default": kindAny, "const": kindAny, "examples": kindArray, "enum": kindArray,
	"deprecated": kindBool, "readOnly": kindBool, "writeOnly": kindBool, "uniqueItems": kindBool,
	"minimum": kindNumber, "maximum": kindNumber, "exclusiveMinimum": kindNumber, "exclusiveMaximum": kindNumber, "multipleOf": kindPositive,
	"minLength": kindCount, "maxLength": kindCount, "minItems": kindCount, "maxItems": kindCount,
	"minProperties": kindCount, "maxProperties": kindCount,
	"type": kindType, "required": kindStrings, "pattern": kindPattern,
	"additionalProperties": kindSchema, "items": kindSchema, "not": kindSchema,
	"allOf": kindSchemas, "anyOf": kindSchemas, "oneOf": kindSchemas, "properties": kindSchemaMap,

	"$ref": kindRef, "$defs": kindDefs, "definitions": kindDefs,
	"propertyNames": kindSchema, "contains": kindSchema, "if": kindSchema, "then": kindSchema, "else": kindSchema,
	"unevaluatedProperties": kindSchema, "unevaluatedItems": kindSchema, "additionalItems": kindSchema,
	"contentSchema": kindSchema, "prefixItems": kindSchemas, "dependentSchemas": kindSchemaMap,
	"patternProperties": kindPatternMap, "dependentRequired": kindRequiredMap,
	"minContains": kindCount, "maxContains": kindCount, "contentEncoding": kindString, "contentMediaType": kindString,

	"$schema": kindUnknown, "$id": kindUnknown, "id": kindUnknown,
	"$anchor": kindUnknown, "$dynamicRef": kindUnknown, "$dynamicAnchor": kindUnknown,
	"$recursiveRef": kindUnknown, "$recursiveAnchor": kindUnknown, "$vocabulary": kindUnknown,
	"dependencies": kindUnknown,
}

// simpleTypes are the values "type" takes.
var simpleTypes = map[string]bool{"array": true, "boolean": true, "integer": true, "null": true,
	"number": true, "object": true, "string": true}

// schema checks one schema object; root allows the $schema the caller
// has already checked, and the definitions.
func (w *walk) schema(m map[string]any, root bool, depth int) bool {
	if depth > validDepth {
		return false
	}
	for k, v := range m {
		kind, known := keywords[k]
		switch {
		case !known:
		case root && k == "$schema":
		case kind == kindDefs && !root:
			return false // nested definitions: the compiler decides
		case !w.keyword(kind, v, depth):
			return false
		}
	}
	return true
}

// keyword checks a keyword's value against what its meta-schema asks.
func (w *walk) keyword(kind keywordKind, v any, depth int) bool {
	switch kind {
	case kindAny:
		return true
	case kindString:
		_, ok := v.(string)
		return ok
	case kindBool:
		_, ok := v.(bool)
		return ok
	case kindArray:
		_, ok := v.([]any)
		return ok
	case kindNumber:
		_, ok := boundFloat(v)
		return ok
	case kindPositive:
		f, ok := boundFloat(v)
		return ok && f > 0
	case kindCount:
		num, ok := v.(json.Number)
		if !ok || len(num) == 0 || len(num) > 18 {
			return false
		}
		for _, c := range []byte(num) {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	case kindType:
		if s, ok := v.(string); ok {
			return simpleTypes[s]
		}
		list, ok := v.([]any)
		return ok && len(list) > 0 && uniqueStrings(list, simpleTypes)
	case kindStrings:
		list, ok := v.([]any)
		return ok && uniqueStrings(list, nil)
	case kindPattern:
		s, ok := v.(string)
		return ok && portablePattern(s)
	case kindSchema:
		return w.sub(v, depth)
	case kindSchemas:
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return false
		}
		for _, e := range list {
			if !w.sub(e, depth) {
				return false
			}
		}
		return true
	case kindSchemaMap, kindDefs, kindPatternMap:
		props, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for name, e := range props {
			if kind == kindPatternMap && !portablePattern(name) || !w.sub(e, depth) {
				return false
			}
		}
		return true
	case kindRequiredMap:
		deps, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, e := range deps {
			list, ok := e.([]any)
			if !ok || !uniqueStrings(list, nil) {
				return false
			}
		}
		return true
	case kindRef:
		s, ok := v.(string)
		return ok && w.resolves(s)
	}
	return false
}

// portablePattern reports whether p means the same in RE2 and ECMA-262
// ([Portable]) and compiles.
func portablePattern(p string) bool {
	if !Portable(p) {
		return false
	}
	_, err := regexp.Compile(p)
	return err == nil
}

// sub checks a nested schema: a boolean or an object.
func (w *walk) sub(v any, depth int) bool {
	switch v := v.(type) {
	case bool:
		return true
	case map[string]any:
		return w.schema(v, false, depth+1)
	}
	return false
}

// resolves reports whether ref is "#" or names a member of the root's
// "$defs" or "definitions" ("#/$defs/Name"), a name with no character
// that a JSON pointer or a URI fragment escapes. The member itself is
// checked where the root's keyword is.
func (w *walk) resolves(ref string) bool {
	if ref == "#" {
		return true
	}
	for _, defs := range [...]string{"$defs", "definitions"} {
		name, ok := strings.CutPrefix(ref, "#/"+defs+"/")
		if !ok || name == "" || strings.ContainsAny(name, "/~%#") {
			continue
		}
		members, _ := w.root[defs].(map[string]any)
		_, ok = members[name]
		return ok
	}
	return false
}

// uniqueStrings reports whether list holds distinct strings, each in
// allowed when allowed is not nil. Short lists compare pairwise; a long
// one goes through a set, so the cost stays linear.
func uniqueStrings(list []any, allowed map[string]bool) bool {
	var seen map[string]bool
	if len(list) > 16 {
		seen = make(map[string]bool, len(list))
	}
	for i, e := range list {
		s, ok := e.(string)
		if !ok || (allowed != nil && !allowed[s]) {
			return false
		}
		if seen != nil {
			if seen[s] {
				return false
			}
			seen[s] = true
			continue
		}
		for _, p := range list[:i] {
			if p == s {
				return false
			}
		}
	}
	return true
}
