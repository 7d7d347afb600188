package llm

import (
	"bytes"
	"encoding/json"
)

// Strict structured outputs (OpenAI's response_format, Anthropic's
// output_config.format) want an object schema at the root, not a union
// (anyOf), which is what an envelope schema is. Such a schema is sent
// wrapped as the one property "envelope" of a root object (its $defs moved
// to the root, where its $refs point), and the reply {"envelope":{...}} is
// unwrapped before it is parsed.
const envelopeWrapperKey = "envelope"

// WrapEnvelopeSchema returns schema wrapped as the property "envelope" of
// a root object when its root is not a plain object schema, and reports
// whether it did; otherwise schema itself and false.
func WrapEnvelopeSchema(schema json.RawMessage) (json.RawMessage, bool) {
	var root struct {
		Type  any             `json:"type"`
		AnyOf json.RawMessage `json:"anyOf"`
		OneOf json.RawMessage `json:"oneOf"`
	}
	if json.Unmarshal(schema, &root) != nil || (root.Type == "object" && root.AnyOf == nil && root.OneOf == nil) {
		return schema, false
	}
	// "$ref":"#/$defs/x" points at the document's root: the definitions
	// move up to the wrapper's root so that the references still resolve.
	var inner map[string]json.RawMessage
	if err := json.Unmarshal(schema, &inner); err != nil {
		return schema, false
	}
	defs := map[string]json.RawMessage{}
	for _, k := range []string{"$defs", "definitions"} {
		if d, ok := inner[k]; ok {
			defs[k] = d
			delete(inner, k)
		}
	}
	innerJSON, err := json.Marshal(inner)
	if err != nil {
		return schema, false
	}
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{"` + envelopeWrapperKey + `":`)
	b.Write(innerJSON)
	b.WriteString(`},"required":["` + envelopeWrapperKey + `"],"additionalProperties":false`)
	for _, k := range []string{"$defs", "definitions"} {
		if d, ok := defs[k]; ok {
			b.WriteString(`,"` + k + `":`)
			b.Write(d)
		}
	}
	b.WriteString(`}`)
	return b.Bytes(), true
}

// UnwrapEnvelope returns the envelope inside {"envelope": ...}; content
// that is not exactly that is returned as it is, for the parser to reject.
func UnwrapEnvelope(content string) string {
	var outer map[string]json.RawMessage
	if err := json.Unmarshal([]byte(content), &outer); err != nil || len(outer) != 1 {
		return content
	}
	inner, ok := outer[envelopeWrapperKey]
	if !ok {
		return content
	}
	return string(inner)
}
