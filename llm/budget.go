package llm

import (
	"encoding/json"
	"strings"

	"github.com/toolgate/toolgate/internal/envbounds"
)

// The token budget's defaults. A reply in an envelope mode is one JSON
// object: the envelope's own keys, then either a call's arguments, an
// answer's text or a find_tools query. The budget is the largest of those
// that the request's constraint admits, so a model that rambles (repeats an
// array item, a string's characters) stops at a bound near the largest
// legitimate reply instead of the context limit, and the truncation is
// repaired by asking for a shorter reply.
const (
	// DefaultMaxTokens bounds [TokenBudget] when [Options.MaxTokens] is 0.
	DefaultMaxTokens = 1024
	// AnswerTokens is the budget of an answer or a find_tools query whose
	// length the constraint does not report ([Constraint.Bounds]).
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

	// gapTokens is the most whitespace an envelope constraint admits
	// between two JSON tokens, at a token per character: a newline and 20
	// spaces or tabs in the grammar package's GBNF, up to two newlines and
	// 20 in llama.cpp's JSON Schema converter (llama-server's
	// response_format, Ollama's format).
	gapTokens = 22
	// textBranchGaps is the number of such gaps in an answer or
	// find_tools envelope, one more than {·"action"·:·"answer"·,·"text"·:·"…"·}
	// for the converter's space after the closing brace.
	textBranchGaps = 9
)

// The bounds a turn's envelope is compiled with by default ([DefaultBounds]),
// the same constants as package grammar's defaults (DefaultMaxAnswerLength
// and the rest there), so that toolgate grammar prints the agent's envelope.
const (
	// DefaultAnswerLength bounds the answer's text, in code points: with
	// the envelope around it [TokenBudget] gives it 827 tokens, within
	// [DefaultMaxTokens], which every such reply of ASCII text fits at a
	// token per character.
	DefaultAnswerLength = envbounds.Answer
	// DefaultQueryLength bounds the find_tools query, in code points.
	DefaultQueryLength = envbounds.Query
	// DefaultStringLength bounds a call's string argument whose schema
	// leaves its length free, in code points.
	DefaultStringLength = envbounds.String
	// DefaultItems bounds a call's array argument whose schema leaves its
	// item count free.
	DefaultItems = envbounds.Items
)

// Bounds are the size limits a compiled envelope constraint sets where the
// tools' schemas set none, in the units JSON Schema counts: code points of
// a string, items of an array. A zero field is not bounded, or not known.
type Bounds struct {
	// Answer bounds the text of an answer.
	Answer int
	// Query bounds the query of a find_tools request.
	Query int
	// String bounds each string of a call's arguments whose schema sets no
	// maxLength, enum, const, format or pattern.
	String int
	// Items bounds each array of a call's arguments whose schema sets no
	// maxItems.
	Items int
}

// DefaultBounds returns the bounds the runtime compiles a turn's envelope
// with: [DefaultAnswerLength], [DefaultQueryLength], [DefaultStringLength] and
// [DefaultItems]. The grammar never goes below a schema's own minimum.
func DefaultBounds() Bounds {
	return Bounds{Answer: DefaultAnswerLength, Query: DefaultQueryLength, String: DefaultStringLength, Items: DefaultItems}
}

// Tighter returns b with every set bound halved, none below 1: the bounds
// of the repair after a reply was cut off at the token budget.
func (b Bounds) Tighter() Bounds {
	half := func(n int) int {
		if n <= 1 {
			return n
		}
		return n / 2
	}
	return Bounds{Answer: half(b.Answer), Query: half(b.Query), String: half(b.String), Items: half(b.Items)}
}

// TokenBudget returns the number of tokens the largest reply that req's
// constraint admits is estimated to take, the largest of:
//
//   - an answer and a find_tools query: where Constraint.Bounds gives
//     their length, the worst case of the envelope around it (every
//     whitespace gap at its longest) and of the text at a token per code
//     point, which no tokenizer exceeds for ASCII text, so that the
//     constraint closes such a reply before the budget runs out;
//     otherwise AnswerTokens;
//   - for each shortlisted tool, the envelope plus its arguments,
//     estimated from the tool's parameters schema (a string's maxLength,
//     an array's maxItems, enums and formats where given; where the schema
//     leaves a size free, Bounds.String code points or Bounds.Items items
//     when the constraint reports them, fixed allowances otherwise).
//
// A call's estimate is in the units of a typical BPE tokenizer, not a
// bound the model's own tokenizer must respect, and text written with
// escapes or outside ASCII may take more tokens than code points: a reply
// cut off at the budget is repaired by asking for a shorter one, under a
// constraint tightened by [Constraint.Tighten].
func TokenBudget(req *Request) int {
	bd := req.Constraint.Bounds
	budget := max(textBranchTokens(len(`{"action":"answer","text":""}`), bd.Answer),
		textBranchTokens(len(`{"action":"find_tools","query":""}`), bd.Query))
	for _, t := range req.Tools {
		var schema any
		if json.Unmarshal(t.Parameters, &schema) != nil {
			budget = max(budget, envelopeTokens+unknownTokens)
			continue
		}
		root, _ := schema.(map[string]any)
		n := envelopeTokens + textTokens(len(t.Name)) + schemaTokens(root, root, 0, bd)
		budget = max(budget, n)
	}
	return budget
}

// textBranchTokens is the worst case of an answer or find_tools envelope
// of fixed characters around a text of at most bound code points, or
// [AnswerTokens] when the bound is not known.
func textBranchTokens(fixed, bound int) int {
	if bound <= 0 {
		return AnswerTokens
	}
	return fixed + textBranchGaps*gapTokens + bound
}

func textTokens(chars int) int { return (chars+charsPerToken-1)/charsPerToken + 1 }

// schemaTokens estimates the tokens of the largest value s admits; root
// resolves local $refs, bd sizes what the schema leaves free.
func schemaTokens(s, root map[string]any, depth int, bd Bounds) int {
	if s == nil || depth > maxSchemaDepth {
		return unknownTokens
	}
	if ref, ok := s["$ref"].(string); ok {
		return schemaTokens(resolveRef(root, ref), root, depth+1, bd)
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
				n = max(n, schemaTokens(m, root, depth+1, bd))
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
		if _, ok := s["pattern"]; !ok && bd.String > 0 {
			return bd.String + 2 // the constraint's bound, a token per code point
		}
		return unboundedStringTokens
	case "integer", "number":
		return 6
	case "boolean", "null":
		return 2
	case "array":
		items, _ := s["items"].(map[string]any)
		n := unboundedItems
		if bd.Items > 0 {
			n = bd.Items
		}
		if mi, ok := s["maxItems"].(float64); ok && mi >= 0 {
			n = int(mi)
		} else if mi, ok := s["minItems"].(float64); ok && int(mi) > n {
			n = int(mi)
		}
		return 2 + n*(schemaTokens(items, root, depth+1, bd)+1)
	case "object":
		props, _ := s["properties"].(map[string]any)
		if len(props) == 0 {
			return unknownTokens
		}
		n := 2
		for name, p := range props {
			m, _ := p.(map[string]any)
			n += textTokens(len(name)) + 1 + schemaTokens(m, root, depth+1, bd)
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
