package grammar

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestPatternPropertiesDecidedStatically: whether a property name matches
// a patternProperties pattern is decided by the compiler's own translation
// of the pattern (no backtracking engine, no clock), so a catastrophic
// pattern is decided exactly, and a pattern the translation cannot decide
// is reported as a relaxation (an error with Strict), never dropped
// silently.
func TestPatternPropertiesDecidedStatically(t *testing.T) {
	long := strings.Repeat("a", 40)
	for _, tc := range []struct {
		name      string
		schema    string
		accept    []string
		reject    []string
		relaxedKw string // "": no relaxation
	}{{
		name: "catastrophic pattern matches",
		schema: `{"type":"object","required":["` + long + `"],"additionalProperties":false,
			"patternProperties":{"^(a+)+$":{"type":"integer"}}}`,
		accept: []string{`{"` + long + `":1}`},
		reject: []string{`{"` + long + `":"x"}`},
	}, {
		name: "catastrophic pattern does not match",
		schema: `{"type":"object","required":["` + long + `!"],"additionalProperties":{"type":"string"},
			"patternProperties":{"^(a+)+$":{"type":"integer"}}}`,
		accept: []string{`{"` + long + `!":"x"}`},
		reject: []string{`{"` + long + `!":1}`},
	}, {
		name: "declared property constrained by a matching pattern",
		schema: `{"type":"object","properties":{"x-id":{"type":"number"}},"required":["x-id"],
			"patternProperties":{"^x-":{"type":"integer"}}}`,
		accept: []string{`{"x-id":3}`},
		reject: []string{`{"x-id":3.5}`},
	}, {
		name: "lookahead is undecided: relaxation",
		schema: `{"type":"object","required":["ab"],"additionalProperties":false,
			"patternProperties":{"^(?=a)\\w+$":{"type":"integer"}}}`,
		relaxedKw: "patternProperties",
	}, {
		name: "backreference is undecided: relaxation",
		schema: `{"type":"object","properties":{"aa":{"type":"string"}},
			"patternProperties":{"^(a)\\1$":{"minLength":2}}}`,
		relaxedKw: "patternProperties",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			for round := 0; round < 2; round++ { // the second compile must agree with the first
				res, err := FromSchema([]byte(tc.schema), nil)
				if err != nil {
					t.Fatalf("FromSchema = %v", err)
				}
				checkSentences(t, res.GBNF, tc.accept, tc.reject)
				found := false
				for _, r := range res.Relaxations {
					if r.Keyword == "patternProperties" && strings.Contains(r.Reason, "cannot be decided") {
						found = true
					}
				}
				if want := tc.relaxedKw != ""; found != want {
					t.Errorf("patternProperties relaxation reported = %v, want %v: %v", found, want, res.Relaxations)
				}
			}
			if tc.relaxedKw != "" {
				_, err := FromSchema([]byte(tc.schema), &Options{Strict: true})
				if !errors.Is(err, ErrRelaxed) {
					t.Errorf("Strict: FromSchema = %v, want ErrRelaxed", err)
				}
			}
		})
	}
}

// TestLargeAndDeepSchemas: each loader and compiler limit is answered with
// an error that names the limit and where it was hit, or the work is
// linear (a large enum compiles, every value kept). Speed itself lives in
// [BenchmarkLargeEnum].
func TestLargeAndDeepSchemas(t *testing.T) {
	deepItems := strings.Repeat(`{"items":`, 2000) + `{}` + strings.Repeat(`}`, 2000)
	deepProps := strings.Repeat(`{"type":"object","properties":{"a":`, 2000) + `{}` + strings.Repeat(`}}`, 2000)
	deepArray := strings.Repeat(`[`, 2000) + strings.Repeat(`]`, 2000)
	for _, tc := range []struct {
		name, schema string
		want         []string // substrings of the error
	}{
		{"items nested 2,000 deep", deepItems, []string{"nested more than 512 levels", "/items/items/items"}},
		{"properties nested 2,000 deep", deepProps, []string{"nested more than 512 levels", "/properties/a/properties/a"}},
		{"an enum value nested 2,000 deep", `{"enum":[` + deepArray + `]}`, []string{"nested more than 512 levels", "/enum/0/0/0"}},
		{"a repeated member", `{"type":"object","properties":{"a":{},"a":{"type":"string"}}}`, []string{`member "a" appears twice`, "/properties"}},
		{"a repeated keyword", `{"type":"string","type":"integer"}`, []string{`member "type" appears twice`, "at /"}},
		{"a repeated member of a large object", `{"properties":{` + manyMembers(40) + `,"m7":{}}}`, []string{`member "m7" appears twice`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromSchema([]byte(tc.schema), nil)
			if !errors.Is(err, ErrInvalidSchema) {
				t.Fatalf("FromSchema = %v, want ErrInvalidSchema", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("FromSchema error %q does not contain %q", err, w)
				}
			}
			if _, _, err := OpenAIStrict([]byte(tc.schema)); err == nil {
				t.Errorf("OpenAIStrict accepted the schema")
			}
		})
	}

	t.Run("an enum of 200,000 values", func(t *testing.T) {
		res, err := FromSchema(largeEnum(200000), nil)
		if err != nil {
			t.Fatal(err)
		}
		// 200,000 alternatives side by side would be more parse stacks
		// than a Matcher keeps (gbnf.MaxStacks): every value would be
		// refused at its opening quote, a dead end for a token mask.
		// Common prefixes are factored out instead.
		for _, in := range []string{`"v0"`, `"v199999"`, `"v19999"`} {
			t.Run(in, func(t *testing.T) {
				if !accepts(t, res.GBNF, in) {
					t.Errorf("grammar rejects %s", in)
				}
			})
		}
		for _, in := range []string{`"v200000"`, `"v"`, `"v01"`} {
			t.Run(in, func(t *testing.T) {
				if accepts(t, res.GBNF, in) {
					t.Errorf("grammar accepts %s", in)
				}
			})
		}
	})
	t.Run("an enum of 20,000 values", func(t *testing.T) {
		res, err := FromSchema(largeEnum(20000), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range []string{`"v0"`, `"v19999"`} {
			t.Run(in, func(t *testing.T) {
				if !accepts(t, res.GBNF, in) {
					t.Errorf("grammar rejects %s", in)
				}
			})
		}
		if accepts(t, res.GBNF, `"v20000"`) {
			t.Errorf(`grammar accepts "v20000"`)
		}
	})
}

func manyMembers(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"m%d":{}`, i)
	}
	return b.String()
}

func largeEnum(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"enum":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"v%d"`, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkLargeEnum compiles enums of growing size (cache bypassed): the
// time per value should stay flat (linear work).
func BenchmarkLargeEnum(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		schema := largeEnum(n)
		b.Run(fmt.Sprintf("%d-values", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				doc, _ := decodeJSON(schema)
				if _, err := compileUncached(doc, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestOpenAIStrictRecursiveAllOf: an allOf that merges a $ref to the
// schema holding it (JSONSchemaBench's Github_medium o17683, 341 bytes)
// was inlined again at every level, thousands of levels deep: 380 MB and
// seconds for the property limit's error, and for arrays a 180 KB schema
// nested thousands of levels. The transform stops at the compiler's depth
// limit, as FromSchema does, and says so.
func TestOpenAIStrictRecursiveAllOf(t *testing.T) {
	tests := []struct {
		name, schema, wantErr string
	}{
		{"objects", `{"type":"object","properties":{"a":{"$ref":"#/definitions/A"}},"definitions":{"A":{"type":"object","properties":{"b":{"allOf":[{"$ref":"#/definitions/A"},{"type":"object"}]}}}}}`,
			"levels of nesting"},
		{"arrays", `{"type":"object","properties":{"a":{"$ref":"#/definitions/A"}},"definitions":{"A":{"type":"array","items":{"allOf":[{"$ref":"#/definitions/A"},{"type":"array"}]}}}}`,
			""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, relax, err := OpenAIStrict([]byte(tt.schema))
			if tt.wantErr != "" {
				if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("OpenAIStrict error = %v, want ErrLimit: %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("OpenAIStrict: %v", err)
			}
			if len(out) > 8<<10 {
				t.Errorf("OpenAIStrict wrote %d bytes for a %d-byte schema", len(out), len(tt.schema))
			}
			deep := false
			for _, r := range relax {
				deep = deep || strings.Contains(r.Reason, "nested deeper than")
			}
			if !deep {
				t.Errorf("none of the %d relaxations reports the depth limit", len(relax))
			}
		})
	}
}
