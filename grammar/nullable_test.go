package grammar

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/jsonschema"
)

// TestNullableAgreesWithValidator: OpenAPI's nullable, which the grammar
// reads as adding null to the type, means the same to the gateway's
// validator (internal/jsonschema.OpenNullable): a call the grammar lets a
// model write is never refused for it, and what the validator refuses the
// grammar does not emit.
func TestNullableAgreesWithValidator(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		instances    []string
	}{
		{"required property", `{"type":"object","properties":{"a":{"type":"string","nullable":true}},"required":["a"]}`,
			[]string{`{"a":null}`, `{"a":"x"}`, `{"a":1}`}},
		{"nullable false", `{"type":"object","properties":{"a":{"type":"string","nullable":false}},"required":["a"]}`,
			[]string{`{"a":null}`, `{"a":"x"}`}},
		{"enum without null", `{"type":"string","nullable":true,"enum":["a","b"]}`, []string{`null`, `"a"`, `"c"`}},
		{"items", `{"type":"array","items":{"type":"integer","nullable":true}}`, []string{`[1,null]`, `["x"]`}},
		{"through $ref", `{"$defs":{"n":{"type":"number","nullable":true}},"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"required":["a"]}`,
			[]string{`{"a":null}`, `{"a":2.5}`, `{"a":"x"}`}},
		{"anyOf branch", `{"anyOf":[{"type":"string","nullable":true},{"type":"integer"}]}`, []string{`null`, `"s"`, `3`, `true`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := FromSchema([]byte(tc.schema), nil)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := jsonschema.ParseDocument([]byte(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			s, err := jsonschema.Compile(doc, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range tc.instances {
				inst, err := jsonschema.ParseDocument([]byte(in))
				if err != nil {
					t.Fatal(err)
				}
				vs, err := s.Validate(inst, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				if g, v := accepts(t, res.GBNF, in), len(vs) == 0; g != v {
					t.Errorf("%s: the grammar accepts it %v, the validator %v (%v)", in, g, v, vs)
				}
			}
		})
	}
}
