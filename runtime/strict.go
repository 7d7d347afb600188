package runtime

import (
	"encoding/json"
	"slices"

	"github.com/toolgate/toolgate/internal/jcs"
)

// dropStrictNulls undoes OpenAI's strict form on a model's arguments. In
// strict mode every property is required and the optional ones are made
// nullable, so a model writes null for an optional property it means to
// omit; the tool's own schema does not allow that null. dropStrictNulls
// removes, recursively through properties and items, each null whose
// property is optional in schema and whose schema does not admit null. It
// returns args unchanged when there is nothing to drop or either side is
// not the JSON it expects (args strictly, as the gateway parses them).
func dropStrictNulls(schema, args json.RawMessage) json.RawMessage {
	// args are read as the gateway reads them ([jcs.Parse]: numbers keep
	// their text, a member given twice is an error), so that dropping a
	// null changes nothing else: encoding/json would round a number a
	// double cannot hold, which the gateway refuses, to one it accepts,
	// and keep only the last of two members, which the gateway refuses.
	var s map[string]any
	a, err := jcs.Parse(args)
	if err != nil || json.Unmarshal(schema, &s) != nil {
		return args
	}
	if !dropNulls(s, a) {
		return args
	}
	out, err := json.Marshal(a)
	if err != nil {
		return args
	}
	return out
}

func dropNulls(schema map[string]any, v any) bool {
	changed := false
	switch v := v.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		required, _ := schema["required"].([]any)
		for name, val := range v {
			ps, _ := props[name].(map[string]any)
			if val == nil {
				if ps != nil && !slices.Contains(required, any(name)) && !admitsNull(ps) {
					delete(v, name)
					changed = true
				}
				continue
			}
			if ps != nil && dropNulls(ps, val) {
				changed = true
			}
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		for _, it := range v {
			if items != nil && dropNulls(items, it) {
				changed = true
			}
		}
	}
	return changed
}

// admitsNull reports whether a property schema allows null by its type,
// enum, const, or an anyOf/oneOf branch that does. Unknown forms count as
// admitting null, so nothing the schema might allow is dropped.
func admitsNull(s map[string]any) bool {
	switch t := s["type"].(type) {
	case string:
		if t == "null" {
			return true
		}
	case []any:
		return slices.Contains(t, any("null"))
	case nil:
		if _, ok := s["$ref"]; ok {
			return true
		}
		for _, k := range []string{"anyOf", "oneOf"} {
			if branches, ok := s[k].([]any); ok {
				for _, b := range branches {
					if bm, ok := b.(map[string]any); ok && admitsNull(bm) {
						return true
					}
				}
				return false
			}
		}
		if e, ok := s["enum"].([]any); ok {
			return slices.Contains(e, nil)
		}
		if c, ok := s["const"]; ok {
			return c == nil
		}
		return true
	}
	if e, ok := s["enum"].([]any); ok {
		return slices.Contains(e, nil)
	}
	return false
}
