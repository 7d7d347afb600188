package llm

import (
	"encoding/json"
	"strings"
)

// The token budget's defaults. A reply in an envelope mode is one JSON
// object: the envelope's own keys, then either a call's arguments, an
// answer's text or a find_tools query. The budget is the largest of those
// that the request's constraint admits, so a model that rambles (repeats an
// array item, a string's characters) stops at a bound near the largest
// legitimate reply instead of the context limit, and the truncation is
// repaired by asking for a shorter reply.
const (
	// DefaultMaxTokens bounds TokenBudget when Options.MaxTokens is 0.
	DefaultMaxTokens = 1024
	// AnswerTokens is the budget of an answer or a find_tools query.
	AnswerTokens = 256
	// envelopeTokens covers {"action":"call","tool":"…","arguments":…}.
	envelopeTokens = 24
	// unboundedStringTokens is a string the schema gives no maxLength.
	unboundedStringTokens = 64
	// unboundedItems is the item count assumed for an array without maxItems.
	unboundedItems = 4
	// unknownTokens is a value whose schema says nothing usable (no type,
	// an unresolvable $ref, free additionalProperties).
	unknownTokens = 48
	// charsPerToken is a conservative average for JSON text.
	charsPerToken = 3
	// maxSchemaDepth bounds the walk of nested and recursive schemas.
	maxSchemaDepth = 8
)

// TokenBudget returns the number of tokens the largest reply that req's
// constraint admits is estimated to take: AnswerTokens for an answer or a
// find_tools query, and for each shortlisted tool the envelope plus its
// arguments, estimated from the tool's parameters schema (a string's
// maxLength, an array's maxItems, enums and formats where given; fixed
// allowances where the schema leaves a size unbounded). It is an estimate
// in the units of a typical BPE tokenizer, not a bound the model's own
// tokenizer must respect: a reply cut off at it is repaired by asking for
// a shorter one. The result is at least AnswerTokens.
func TokenBudget(req *Request) int {
	budget := AnswerTokens
	for _, t := range req.Tools {
		var schema any
		if json.Unmarshal(t.Parameters, &schema) != nil {
			budget = max(budget, envelopeTokens+unknownTokens)
			continue
		}
		root, _ := schema.(map[string]any)
		n := envelopeTokens + textTokens(len(t.Name)) + schemaTokens(root, root, 0)
		budget = max(budget, n)
	}
	return budget
}

func textTokens(chars int) int { return (chars+charsPerToken-1)/charsPerToken + 1 }

// schemaTokens estimates the tokens of the largest value s admits; root
// resolves local $refs.
func schemaTokens(s, root map[string]any, depth int) int {
	if s == nil || depth > maxSchemaDepth {
		return unknownTokens
	}
	if ref, ok := s["$ref"].(string); ok {
		return schemaTokens(resolveRef(root, ref), root, depth+1)
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		n := 0
		for _, v := range e {
			data, _ := json.Marshal(v)
			n = max(n, textTokens(len(data)))
		}
		return n
	}
	if c, ok := s["const"]; ok {
		data, _ := json.Marshal(c)
		return textTokens(len(data))
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			n := 0
			for _, a := range alts {
				m, _ := a.(map[string]any)
				n = max(n, schemaTokens(m, root, depth+1))
			}
			return n
		}
	}
	switch typeOf(s) {
	case "string":
		if ml, ok := s["maxLength"].(float64); ok && ml >= 0 {
			return textTokens(int(ml)) + 1
		}
		if _, ok := s["format"]; ok {
			return 12 // date-time, uuid, email and the like
		}
		return unboundedStringTokens
	case "integer", "number":
		return 6
	case "boolean", "null":
		return 2
	case "array":
		items, _ := s["items"].(map[string]any)
		n := unboundedItems
		if mi, ok := s["maxItems"].(float64); ok && mi >= 0 {
			n = int(mi)
		} else if mi, ok := s["minItems"].(float64); ok && int(mi) > n {
			n = int(mi)
		}
		return 2 + n*(schemaTokens(items, root, depth+1)+1)
	case "object":
		props, _ := s["properties"].(map[string]any)
		if len(props) == 0 {
			return unknownTokens
		}
		n := 2
		for name, p := range props {
			m, _ := p.(map[string]any)
			n += textTokens(len(name)) + 1 + schemaTokens(m, root, depth+1)
		}
		return n
	}
	return unknownTokens
}

// typeOf returns the schema's type, the first non-null one of a list, or
// "object" for a schema with properties but no type.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok && str != "null" {
				return str
			}
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	return ""
}

func resolveRef(root map[string]any, ref string) map[string]any {
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	var cur any = root
	for _, part := range strings.Split(ref[2:], "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
	}
	m, _ := cur.(map[string]any)
	return m
}
