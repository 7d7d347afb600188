package grammar

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestBounds: [Options.MaxStringLength] and MaxItems bound what the schema
// leaves unbounded, never below what the schema requires, and report each
// bound; [FromSchema] sets none by default.
func TestBounds(t *testing.T) {
	str := func(n int) string { return `"` + strings.Repeat("a", n) + `"` }
	arr := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]" }
	for _, tc := range []struct {
		name   string
		schema string
		opts   Options
		accept []string
		reject []string
		bounds []Bound
	}{
		{"no bound by default", `{"type":"string"}`, Options{}, []string{str(3000)}, nil, nil},
		{"a free string", `{"type":"string"}`, Options{MaxStringLength: 5}, []string{str(0), str(5)}, []string{str(6)},
			[]Bound{{"", "maxLength", 5}}},
		{"the schema's maxLength is kept", `{"type":"string","maxLength":8}`, Options{MaxStringLength: 5}, []string{str(8)}, []string{str(9)}, nil},
		{"never below minLength", `{"type":"string","minLength":7}`, Options{MaxStringLength: 5}, []string{str(7)}, []string{str(6), str(8)},
			[]Bound{{"", "maxLength", 7}}},
		{"an anchored one-set pattern", `{"type":"string","pattern":"^[a-z]+$"}`, Options{MaxStringLength: 4}, []string{str(4)}, []string{str(5), str(0)},
			[]Bound{{"", "maxLength", 4}}},
		{"an unanchored pattern is left unbounded", `{"type":"string","pattern":"a"}`, Options{MaxStringLength: 4}, []string{str(9)}, nil, nil},
		{"a nested property", `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, Options{MaxStringLength: 2},
			[]string{`{"q":"ab"}`}, []string{`{"q":"abc"}`}, []Bound{{"/properties/q", "maxLength", 2}}},
		{"a free array", `{"type":"array","items":{"type":"integer"}}`, Options{MaxItems: 2}, []string{arr(0), arr(2)}, []string{arr(3)},
			[]Bound{{"", "maxItems", 2}}},
		{"the schema's maxItems is kept", `{"type":"array","maxItems":4}`, Options{MaxItems: 2}, []string{arr(4)}, []string{arr(5)}, nil},
		{"never below minItems", `{"type":"array","minItems":3}`, Options{MaxItems: 2}, []string{arr(3)}, []string{arr(4)},
			[]Bound{{"", "maxItems", 3}}},
		{"a closed tuple needs none", `{"type":"array","prefixItems":[{"type":"integer"},{"type":"integer"}],"items":false}`, Options{MaxItems: 1}, []string{arr(2)}, nil, nil},
		{"negative is none", `{"type":"string"}`, Options{MaxStringLength: -1}, []string{str(3000)}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, strict := range []bool{false, true} {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					o := tc.opts
					o.Strict = strict
					res, err := FromSchema([]byte(tc.schema), &o)
					if err != nil {
						t.Fatalf("FromSchema(Strict %v) = %v", strict, err)
					}
					checkSentences(t, res.GBNF, tc.accept, tc.reject)
					if !reflect.DeepEqual(res.Bounds, tc.bounds) {
						t.Errorf("Bounds = %v, want %v", res.Bounds, tc.bounds)
					}
				})
			}
		})
	}
}

func TestEnvelopeBounds(t *testing.T) {
	ts := []EnvelopeTool{{Name: "search", Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)}}
	text := func(n int) string { return strings.Repeat("x", n) }

	res, err := Envelope(ts, &Options{Compact: true})
	if err != nil {
		t.Fatal(err)
	}
	wantBounds := map[string][]Bound{
		"":       {{"/text", "maxLength", DefaultMaxAnswerLength}, {"/query", "maxLength", DefaultMaxQueryLength}},
		"search": {{"/properties/q", "maxLength", DefaultMaxStringLength}},
	}
	if !reflect.DeepEqual(res.Bounds, wantBounds) {
		t.Errorf("Bounds = %v, want %v", res.Bounds, wantBounds)
	}
	for _, c := range []struct {
		in   string
		want bool
	}{
		{`{"action":"answer","text":"` + text(DefaultMaxAnswerLength) + `"}`, true},
		{`{"action":"answer","text":"` + text(DefaultMaxAnswerLength+1) + `"}`, false},
		{`{"action":"find_tools","query":"` + text(DefaultMaxQueryLength) + `"}`, true},
		{`{"action":"find_tools","query":"` + text(DefaultMaxQueryLength+1) + `"}`, false},
		{`{"action":"call","tool":"search","arguments":{"q":"` + text(DefaultMaxStringLength) + `"}}`, true},
		{`{"action":"call","tool":"search","arguments":{"q":"` + text(DefaultMaxStringLength+1) + `"}}`, false},
	} {
		t.Run(c.in, func(t *testing.T) {
			if got := accepts(t, res.GBNF, c.in); got != c.want {
				t.Errorf("envelope accepts %.60s… = %v, want %v", c.in, got, c.want)
			}
		})
	}

	res, err = Envelope(ts, &Options{Compact: true, MaxAnswerLength: 3, MaxQueryLength: -1, MaxStringLength: -1})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string][]Bound{"": {{"/text", "maxLength", 3}}}; !reflect.DeepEqual(res.Bounds, want) {
		t.Errorf("Bounds = %v, want %v", res.Bounds, want)
	}
	if !accepts(t, res.GBNF, `{"action":"find_tools","query":"`+text(5000)+`"}`) {
		t.Errorf("MaxQueryLength -1: a long query is refused")
	}

	schema, _, err := EnvelopeSchema(ts, &Options{MaxQueryLength: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{fmt.Sprintf(`"text":{"type":"string","maxLength":%d}`, DefaultMaxAnswerLength), `"query":{"type":"string","maxLength":50}`} {
		t.Run(want, func(t *testing.T) {
			if !strings.Contains(string(schema), want) {
				t.Errorf("EnvelopeSchema lacks %s:\n%s", want, schema)
			}
		})
	}
}

func TestOptionsValidated(t *testing.T) {
	for i, o := range []Options{{MaxStringLength: 2001}, {MaxItems: 5000}, {MaxAnswerLength: 1 << 20}, {MaxQueryLength: 2001}} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			_, err1 := FromSchema([]byte(`{}`), &o)
			_, err2 := Envelope(nil, &o)
			_, _, err3 := EnvelopeSchema(nil, &o)
			for i, err := range []error{err1, err2, err3} {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "Options.Max") {
						t.Errorf("%+v: error = %v, want ErrOptions naming the field", o, err)
					}
				})
			}
		})
	}
}
