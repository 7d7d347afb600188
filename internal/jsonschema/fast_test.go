package jsonschema

import (
	"testing"
	"time"
)

const transferSchema = `{"type":"object","properties":{
	"source_account":{"type":"string","pattern":"^ACC-[0-9]{5}$"},
	"target_account":{"type":"string","pattern":"^ACC-[0-9]{5}$"},
	"amount":{"type":"number","exclusiveMinimum":0,"maximum":1000000,"multipleOf":0.01},
	"memo":{"type":"string","maxLength":140,"pattern":"^(?!.*(?:ignore|override)).*$"},
	"tags":{"type":"array","items":{"type":"string","enum":["rent","food"]},"maxItems":3},
	"count":{"type":"integer","minimum":1},
	"urgent":{"type":"boolean"}},
	"required":["source_account","target_account","amount"]}`

// TestFastPath: the fast checker proves the common valid calls valid by
// itself, steps aside for what it cannot decide, and never calls an
// invalid instance valid.
func TestFastPath(t *testing.T) {
	s := mustCompile(t, transferSchema, &Options{CloseObjects: true, AssertFormat: true})
	if s.fast == nil {
		t.Fatal("the transfer schema has no fast checker")
	}
	tests := []struct {
		instance string
		fast     bool // the fast path proves it valid
		valid    bool
	}{
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":250.50}`, true, true},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1,"tags":["rent"],"count":2,"urgent":true}`, true, true},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":0.01}`, true, true},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1e2}`, false, true},           // exponent: the validator decides
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1000000}`, false, true},       // on the bound
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1,"memo":"hi"}`, false, true}, // a backtracking pattern
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1,"count":2.0}`, false, true},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1.001}`, false, false},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1.0000000000000000001}`, false, false},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":0}`, false, false},
		{`{"source_account":"ACC-1","target_account":"ACC-00002","amount":1}`, false, false},
		{`{"source_account":"ACC-00001","amount":1}`, false, false},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1,"x":1}`, false, false},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":"1"}`, false, false},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1,"tags":["rent","x"]}`, false, false},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1,"tags":["rent","food","rent","food"]}`, false, false},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1,"count":0}`, false, false},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1,"urgent":"yes"}`, false, false},
		{`[]`, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.instance, func(t *testing.T) {
			inst := mustParse(t, tc.instance)
			if got := s.fast.valid(inst); got != tc.fast {
				t.Errorf("fast.valid(%s) = %v, want %v", tc.instance, got, tc.fast)
			}
			vs, err := s.validate(inst, time.Now().Add(time.Second))
			if err != nil || (len(vs) == 0) != tc.valid {
				t.Errorf("validate(%s) = %v, %v; want valid %v", tc.instance, vs, err, tc.valid)
			}
			vs, err = s.Validate(inst, time.Now().Add(time.Second))
			if err != nil || (len(vs) == 0) != tc.valid {
				t.Errorf("Validate(%s) = %v, %v; want valid %v", tc.instance, vs, err, tc.valid)
			}
		})
	}
}

// TestFastStepsAside: schemas outside the fast shapes have no fast
// checker at the root (or at the node), so the validator decides.
func TestFastStepsAside(t *testing.T) {
	for _, schema := range []string{
		`{"properties":{"a":{"type":"string"}}}`, // no type: keywords apply across types
		`{"type":["object","null"]}`,
		`{"type":"object","allOf":[{"required":["a"]}]}`,
		`{"type":"object","$ref":"#/$defs/x","$defs":{"x":{}}}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`,
		`{"type":"number","enum":["1"]}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":"number","multipleOf":0.3}`,
		`{"type":"string","format":"email"}`,
	} {
		t.Run(schema, func(t *testing.T) {
			doc := mustParse(t, schema)
			if n := compileFast(doc); n != nil {
				t.Errorf("compileFast(%s) = %+v, want nil", schema, n)
			}
		})
	}
}

// FuzzFastAgrees: whatever the schema and the instance, the fast path
// never proves valid what the general validator refuses.
func FuzzFastAgrees(f *testing.F) {
	for _, c := range [][2]string{
		{transferSchema, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":250.50}`},
		{transferSchema, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":250.505}`},
		{`{"type":"object","properties":{"n":{"type":"integer","maximum":10}}}`, `{"n":10}`},
		{`{"type":"array","items":{"type":"string","minLength":2},"minItems":1}`, `["ab","é"]`},
		{`{"type":"number","multipleOf":0.001,"exclusiveMaximum":1}`, `0.9999`},
		{`{"type":"string","enum":["a","b"],"maxLength":1}`, `"a"`},
	} {
		f.Add([]byte(c[0]), []byte(c[1]))
	}
	f.Fuzz(func(t *testing.T, schema, instance []byte) {
		doc, err := ParseDocument(schema)
		if err != nil {
			return
		}
		s, err := Compile(doc, &Options{AssertFormat: true})
		if err != nil || s.fast == nil {
			return
		}
		inst, err := ParseDocument(instance)
		if err != nil || !s.fast.valid(inst) {
			return
		}
		vs, err := s.validate(inst, time.Now().Add(time.Second))
		if err == nil && len(vs) > 0 {
			t.Fatalf("the fast path proves %s valid against %s; the validator says %v", instance, schema, vs)
		}
	})
}
