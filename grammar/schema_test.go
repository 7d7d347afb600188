package grammar

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/internal/testenv"
)

// matchCase records one verdict of our matcher so that the same case can
// be replayed through llama.cpp's gbnf-check.
type matchCase struct {
	gbnf, input string
	ok          bool
}

// accepts compiles nothing: it matches input against a GBNF grammar with
// the in-process matcher.
func accepts(t *testing.T, src, input string) bool {
	t.Helper()
	g, err := gbnf.Parse(src)
	if err != nil {
		t.Fatalf("emitted grammar does not parse: %v\n%s", err, src)
	}
	ok, _ := g.Match([]byte(input))
	return ok
}

// checkSentences reports each input of accept that the GBNF grammar src
// rejects and each of reject that it accepts (inputs cut to 40 bytes in
// the messages: some are thousands long).
func checkSentences(t *testing.T, src string, accept, reject []string) {
	t.Helper()
	for _, in := range accept {
		if !accepts(t, src, in) {
			t.Errorf("grammar rejects %.40s\n%s", in, src)
		}
	}
	for _, in := range reject {
		if accepts(t, src, in) {
			t.Errorf("grammar accepts %.40s\n%s", in, src)
		}
	}
}

// failureModes are known failure modes of other schema-to-grammar engines,
// each pinned by accepted and rejected sentences.
var failureModes = []struct {
	name   string
	schema string
	opts   *Options
	accept []string
	reject []string
	relax  []string // keywords that must be reported
}{
	{name: "maxLength 1999", schema: `{"type":"string","maxLength":1999}`,
		accept: []string{`""`, `"` + strings.Repeat("a", 1999) + `"`}, reject: []string{`"` + strings.Repeat("a", 2000) + `"`}},
	{name: "maxLength 2000", schema: `{"type":"string","maxLength":2000}`,
		accept: []string{`"` + strings.Repeat("é", 2000) + `"`}, reject: []string{`"` + strings.Repeat("a", 2001) + `"`}},
	{name: "maxLength 2001 relaxed", schema: `{"type":"string","maxLength":2001}`,
		accept: []string{`"` + strings.Repeat("a", 2001) + `"`}, relax: []string{"maxLength"}},
	{name: "maxLength 65536 nested", schema: `{"type":"object","properties":{"a":{"type":"array","maxItems":3,"items":{"type":"string","minLength":2,"maxLength":65536}}},"required":["a"]}`,
		accept: []string{`{"a":["ab","` + strings.Repeat("x", 3000) + `"]}`}, reject: []string{`{"a":["a"]}`, `{"a":["ab","ab","ab","ab"]}`}, relax: []string{"maxLength"}},
	{name: "minLength counts code points", schema: `{"type":"string","minLength":2,"maxLength":2}`,
		accept: []string{`"😀é"`, `"\ud83d\ude00a"`, `"\u0000\n"`}, reject: []string{`"😀"`, `"abc"`}},
	{name: "integer range up to 2^53", schema: `{"type":"integer","minimum":0,"maximum":9007199254740992}`,
		accept: []string{`0`, `7`, `9007199254740992`, `9007199254740991`, `1000000000000000`},
		reject: []string{`9007199254740993`, `10000000000000000`, `-1`, `01`, `1.0`, `1e3`}},
	{name: "negative-only range", schema: `{"type":"integer","minimum":-100,"maximum":-5}`,
		accept: []string{`-5`, `-100`, `-57`, `-10`}, reject: []string{`-4`, `-101`, `0`, `-0`, `5`, `-05`}},
	{name: "exclusive bounds", schema: `{"type":"integer","exclusiveMinimum":-3,"exclusiveMaximum":3}`,
		accept: []string{`-2`, `0`, `2`}, reject: []string{`-3`, `3`, `-0`}},
	{name: "number syntax", schema: `{"type":"number"}`,
		accept: []string{`-0`, `0`, `1e05`, `1.5E+3`, `-0.0`, `123.456e-7`}, reject: []string{`01`, `1.`, `.5`, `+1`, `1e`, `--1`, `0x1`}},
	{name: "integer is written as digits", schema: `{"type":"integer"}`,
		accept: []string{`-0`, `0`, `42`, `-17`}, reject: []string{`1.0`, `1e2`, `01`}},
	{name: "number above zero", schema: `{"type":"number","exclusiveMinimum":0}`,
		accept: []string{`0.01`, `5`, `1000000.5`}, reject: []string{`0`, `0.0`, `-1`, `-0.5`}},
	{name: "number range", schema: `{"type":"number","minimum":-1.5,"maximum":10}`,
		accept: []string{`-1`, `10`, `10.0`, `9.999`, `0`}, reject: []string{`10.01`, `11`, `-3`}, relax: []string{"minimum"}},
	{name: "integer range with non-integral bounds rounds inward", schema: `{"type":"integer","minimum":0.5,"exclusiveMaximum":3.5}`,
		accept: []string{`1`, `2`, `3`}, reject: []string{`0`, `4`, `-1`}},
	{name: "number with a non-integral maximum rounds outward", schema: `{"type":"number","minimum":1,"maximum":2.5}`,
		accept: []string{`1`, `2.5`, `2.99`, `3`}, reject: []string{`0.5`, `4`}, relax: []string{"maximum"}},
	{name: "multipleOf 0.01 is exact", schema: `{"type":"number","multipleOf":0.01,"minimum":0}`,
		accept: []string{`12.34`, `5`, `0.1`}, reject: []string{`1.234`, `-1`}},
	{name: "multipleOf 3 relaxed", schema: `{"type":"integer","multipleOf":3}`, accept: []string{`4`}, relax: []string{"multipleOf"}},
	{name: `pattern \d`, schema: `{"type":"string","pattern":"^\\d{3}$"}`, accept: []string{`"123"`}, reject: []string{`"12a"`, `"1234"`}},
	{name: `pattern \w`, schema: `{"type":"string","pattern":"^\\w+$"}`, accept: []string{`"a_Z9"`}, reject: []string{`"a-b"`, `""`}},
	{name: `pattern \s`, schema: `{"type":"string","pattern":"^a\\sb$"}`, accept: []string{`"a b"`, `"a\tb"`, `"a\nb"`}, reject: []string{`"ab"`, `"a_b"`}},
	{name: `pattern \/`, schema: `{"type":"string","pattern":"^a\\/b$"}`, accept: []string{`"a/b"`, `"a\/b"`}, reject: []string{`"a\\b"`}},
	{name: `pattern \.`, schema: `{"type":"string","pattern":"^a\\.b$"}`, accept: []string{`"a.b"`}, reject: []string{`"axb"`}},
	{name: `pattern [\w-]`, schema: `{"type":"string","pattern":"^[\\w-]+$"}`, accept: []string{`"a-b_c"`}, reject: []string{`"a b"`}},
	{name: "unanchored pattern means contains", schema: `{"type":"string","pattern":"abc"}`, accept: []string{`"abc"`, `"xxabcyy"`, `"\"abc\n"`}, reject: []string{`"ab"`, `"acb"`}},
	{name: "non-capturing group", schema: `{"type":"string","pattern":"^(?:ab)+$"}`, accept: []string{`"abab"`}, reject: []string{`"aba"`, `""`}},
	{name: "counted repetition {n,}", schema: `{"type":"string","pattern":"^a{3,}$"}`, accept: []string{`"aaa"`, `"aaaaaaa"`}, reject: []string{`"aa"`}},
	{name: "lookahead relaxed", schema: `{"type":"string","pattern":"^(?=.*\\d)\\w+$"}`, accept: []string{`"abc1"`, `"abc"`}, reject: []string{`"a b"`}, relax: []string{"pattern"}},
	{name: "account pattern", schema: `{"type":"string","pattern":"^ACC-[0-9]{5}$"}`, accept: []string{`"ACC-00001"`}, reject: []string{`"ACC-0001"`, `"acc-00001"`, `"ACC-000011"`}},
	{name: "empty object is closed", schema: `{"type":"object"}`, accept: []string{`{}`, `{ }`}, reject: []string{`{"a":1}`}},
	{name: "empty object with OpenObjects", schema: `{"type":"object"}`, opts: &Options{OpenObjects: true}, accept: []string{`{}`, `{"a":1,"b":[true]}`}},
	{name: "undeclared property never admitted", schema: `{"type":"object","properties":{"a":{"type":"string"}}}`,
		accept: []string{`{}`, `{"a":"x"}`}, reject: []string{`{"a":"x","evil":1}`, `{"evil":1}`, `{"a":1}`}},
	{name: "additionalProperties schema", schema: `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"integer"}}`,
		accept: []string{`{"a":"x","b":1}`, `{"b":1,"c":2}`}, reject: []string{`{"a":"x","b":"y"}`, `{"a":"x","a":1}`}},
	{name: "{} as a property schema", schema: `{"type":"object","properties":{"x":{}},"required":["x"]}`,
		accept: []string{`{"x":null}`, `{"x":[1,{"a":"b"}]}`}, reject: []string{`{}`}},
	{name: "optional properties in declaration order", schema: `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"}},"required":["b"]}`,
		accept: []string{`{"b":1}`, `{"a":1,"b":2}`, `{"b":2,"c":3}`, `{"a":1,"b":2,"c":3}`}, reject: []string{`{"b":1,"a":2}`, `{"a":1}`, `{}`, `{"a":1,,"b":2}`}},
	{name: "$ref to an enum", schema: `{"$defs":{"color":{"enum":["red","green",3,null]}},"type":"object","properties":{"c":{"$ref":"#/$defs/color"}},"required":["c"]}`,
		accept: []string{`{"c":"red"}`, `{"c":3}`, `{"c":null}`}, reject: []string{`{"c":"blue"}`}},
	{name: "$ref into an anyOf index", schema: `{"$defs":{"u":{"anyOf":[{"type":"string","maxLength":2},{"type":"integer"}]}},"type":"object","properties":{"a":{"$ref":"#/$defs/u/anyOf/0"}},"required":["a"]}`,
		accept: []string{`{"a":"ab"}`}, reject: []string{`{"a":1}`, `{"a":"abc"}`}},
	{name: "recursive tree", schema: `{"$defs":{"node":{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["value"]}},"$ref":"#/$defs/node"}`,
		accept: []string{`{"value":1}`, `{"value":1,"children":[{"value":2,"children":[{"value":3}]}]}`}, reject: []string{`{"value":1,"children":[{"children":[]}]}`}},
	{name: "properties beside anyOf", schema: `{"type":"object","properties":{"kind":{"type":"string"}},"anyOf":[{"properties":{"a":{"type":"integer"}},"required":["a"]},{"properties":{"b":{"type":"string"}},"required":["b"]}]}`,
		accept: []string{`{"kind":"x","a":1}`, `{"b":"s"}`}, reject: []string{`{"kind":"x"}`, `{"a":"s"}`, `{"a":1,"b":"s"}`}},
	{name: "allOf merged", schema: `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"integer","minimum":1}}}]}`,
		accept: []string{`{"a":"x","b":1}`, `{"a":"x"}`}, reject: []string{`{"b":1}`, `{"a":"x","b":0}`}},
	{name: "const of any JSON value", schema: `{"const":{"a":[1,"x",null],"b":{"c":true}}}`, accept: []string{`{"a":[1,"x",null],"b":{"c":true}}`}, reject: []string{`{"a":[1,"x",null]}`}},
	{name: "nullable type union", schema: `{"type":["string","null"],"maxLength":1}`, accept: []string{`null`, `"a"`}, reject: []string{`"ab"`, `1`}},
	{name: "true schema", schema: `true`, accept: []string{`1`, `"x"`, `{"a":[{}]}`}},
	{name: "string escapes", schema: `{"type":"string"}`,
		accept: []string{`"a\tb"`, `"\u0000"`, `"\/"`, `"\ud83d\ude00"`, `"😀"`, `"\"\\\b\f\n\r"`, `"\u00e9"`},
		reject: []string{"\"a\tb\"", `"\ud83d"`, `"\ude00"`, `"\x"`, `"\u12"`, "\"\x01\""}},
	{name: "date format", schema: `{"type":"string","format":"date"}`, accept: []string{`"2024-02-29"`, `"2000-02-29"`, `"2023-12-31"`}, reject: []string{`"2023-02-29"`, `"1900-02-29"`, `"2023-04-31"`, `"2023-13-01"`}},
	{name: "date-time format", schema: `{"type":"string","format":"date-time"}`, accept: []string{`"2024-01-02T03:04:05Z"`, `"2024-01-02T03:04:05.123+05:30"`}, reject: []string{`"2024-01-02T03:04:05"`, `"2024-01-02 03:04:05Z"`}},
	{name: "uuid, ipv4, ipv6", schema: `{"type":"array","prefixItems":[{"format":"uuid"},{"format":"ipv4"},{"format":"ipv6"}],"items":false}`,
		accept: []string{`["123e4567-e89b-12d3-a456-426614174000","192.168.0.1","::1"]`, `["123e4567-e89b-12d3-a456-426614174000","0.0.0.0","2001:db8::8a2e:370:7334"]`},
		reject: []string{`["123e4567-e89b-12d3-a456-42661417400","192.168.0.1","::1"]`, `["123e4567-e89b-12d3-a456-426614174000","256.1.1.1","::1"]`, `["123e4567-e89b-12d3-a456-426614174000","1.1.1.1","1::2::3"]`}},
	{name: "uri-template format", schema: `{"type":"string","format":"uri-template"}`,
		accept: []string{`"http://example.com/{id}"`, `"/search{?q,lang}"`, `"file:\/\/{+path}"`, `""`}, reject: []string{`"http://example.com/resource/{"`, `"a b"`, `"{}"`, `"100%"`}},
	{name: "prefixItems and minItems", schema: `{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"items":{"type":"boolean"},"minItems":1,"maxItems":3}`,
		accept: []string{`[1]`, `[1,"a"]`, `[1,"a",true]`}, reject: []string{`[]`, `["a"]`, `[1,"a",true,false]`, `[1,2]`}},
	{name: "draft-07 definitions and tuple items", schema: `{"definitions":{"n":{"type":"integer"}},"type":"array","items":[{"$ref":"#/definitions/n"}],"additionalItems":false}`,
		accept: []string{`[]`, `[1]`}, reject: []string{`[1,2]`, `["a"]`}},
	{name: "whitespace is bounded", schema: `{"type":"object","properties":{"a":{"type":"integer"}}}`,
		accept: []string{`{"a": 1}`, "{\n  \"a\" : 1\n}", "{\n" + strings.Repeat(" ", wsMaxIndent) + "\"a\":1}"},
		reject: []string{"{\n" + strings.Repeat(" ", wsMaxIndent+1) + "\"a\":1}", `{  "a":1}`, "{\n\n\"a\":1}", ` {"a":1}`}},
	{name: "compact has no whitespace", schema: `{"type":"object","properties":{"a":{"type":"integer"}}}`, opts: &Options{Compact: true},
		accept: []string{`{"a":1}`}, reject: []string{`{"a": 1}`}},
	{name: "dependentRequired is exact", schema: `{"type":"object","properties":{"card":{"type":"string"},"billing":{"type":"string"},"name":{"type":"string"}},"dependentRequired":{"card":["billing"]}}`,
		accept: []string{`{}`, `{"name":"x"}`, `{"billing":"b"}`, `{"card":"c","billing":"b"}`}, reject: []string{`{"card":"c"}`, `{"card":"c","name":"x"}`}},
	{name: "not integer keeps integers out", schema: `{"not":{"type":"integer"}}`,
		accept: []string{`1.5`, `-0.25`, `10.01`, `"x"`, `null`}, reject: []string{`1`, `0`, `-3`, `1.0`, `1e2`, `1.50`}},
	{name: "not integer beside bounds relaxed", schema: `{"type":"number","minimum":1,"not":{"type":"integer"}}`, accept: []string{`1.5`}, relax: []string{"not"}},
	{name: "allOf prefixItems beside items", schema: `{"allOf":[{"prefixItems":[{"minimum":3}]}],"items":{"minimum":5}}`,
		accept: []string{`[5,5]`, `[6]`}, reject: []string{`[3,5]`, `[4]`, `[5,4]`}},
	{name: "allOf items beside prefixItems", schema: `{"type":"array","prefixItems":[{"type":"integer"}],"allOf":[{"items":{"maximum":9}},{"prefixItems":[{},{"type":"string"}]}]}`,
		accept: []string{`[1]`, `[9,"a"]`, `[1,"a",9]`}, reject: []string{`[10]`, `[9,3]`, `[1,"a",10]`, `["a"]`}},
	{name: "email as the gateway checks it", schema: `{"type":"string","format":"email"}`,
		accept: []string{`"joe.bloggs@example.com"`, `"a/b@example.com"`, `"\"joe bloggs\"@example.com"`},
		reject: []string{`"\"a\\b\"@example.com"`, `"\"a\\\"b\"@example.com"`, `"a..b@example.com"`}, relax: []string{"format"}},
	{name: "exponent within the validator's range", schema: `{"type":"number"}`,
		accept: []string{`1e9999`, `-2.5E-0001`, `3e+12`}, reject: []string{`1e10000`, `1e1000000000`}},
	{name: "uniqueItems relaxed", schema: `{"type":"array","items":{"type":"integer"},"uniqueItems":true}`, accept: []string{`[1,1]`}, relax: []string{"uniqueItems"}},
	{name: "unknown keyword reported", schema: `{"type":"string","frobnicate":3}`, accept: []string{`"x"`}, relax: []string{"frobnicate"}},
}

func TestFailureModes(t *testing.T) {
	var cases []matchCase
	for _, tc := range failureModes {
		t.Run(tc.name, func(t *testing.T) {
			res, err := FromSchema([]byte(tc.schema), tc.opts)
			if err != nil {
				t.Fatalf("FromSchema(%s) = %v", tc.schema, err)
			}
			for _, in := range tc.accept {
				ok := accepts(t, res.GBNF, in)
				cases = append(cases, matchCase{res.GBNF, in, ok})
				if !ok {
					t.Errorf("grammar of %s rejects %q, want accepted\n%s", tc.schema, in, res.GBNF)
				}
			}
			for _, in := range tc.reject {
				ok := accepts(t, res.GBNF, in)
				cases = append(cases, matchCase{res.GBNF, in, ok})
				if ok {
					t.Errorf("grammar of %s accepts %q, want rejected\n%s", tc.schema, in, res.GBNF)
				}
			}
			got := map[string]bool{}
			for _, r := range res.Relaxations {
				got[r.Keyword] = true
			}
			for _, kw := range tc.relax {
				if !got[kw] {
					t.Errorf("relaxations of %s = %v, want one for %s", tc.schema, res.Relaxations, kw)
				}
			}
			if len(tc.relax) == 0 && len(res.Relaxations) > 0 {
				t.Errorf("relaxations of %s = %v, want none", tc.schema, res.Relaxations)
			}
		})
	}
	// The same verdicts from llama.cpp itself.
	bin := testenv.GBNFCheck(t)
	dir := t.TempDir()
	for i, c := range cases {
		gf := filepath.Join(dir, fmt.Sprintf("g%d.gbnf", i))
		inf := filepath.Join(dir, fmt.Sprintf("i%d.txt", i))
		os.WriteFile(gf, []byte(c.gbnf), 0o644)
		os.WriteFile(inf, []byte(c.input), 0o644)
		code, out := gbnfCheckRun(bin, gf, inf, false)
		if code != 0 && code != 1 {
			t.Errorf("gbnf-check on %q: exit %d: %s\n%s", c.input, code, out, c.gbnf)
			continue
		}
		if (code == 0) != c.ok {
			t.Errorf("gbnf-check accepts %q = %v, our matcher %v\n%s", c.input, code == 0, c.ok, c.gbnf)
		}
	}
}

func TestWhitespaceIsBoundedForAModel(t *testing.T) {
	res, err := FromSchema([]byte(`{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gbnf.Parse(res.GBNF)
	if err != nil {
		t.Fatal(err)
	}
	m, err := gbnf.NewMatcher(g)
	if err != nil {
		t.Fatal(err)
	}
	// A model that only ever picks whitespace is stopped within a bound at
	// every point: here right after "{" and after a newline.
	for _, prefix := range []string{"{", `{"a":[`, `{"a":[1`} {
		t.Run(prefix, func(t *testing.T) {
			m.Reset()
			if _, err := m.WriteString(prefix); err != nil {
				t.Fatalf("prefix %q: %v", prefix, err)
			}
			n := 0
			for n < 1000 && (m.Advance(' ') || m.Advance('\n') || m.Advance('\t')) {
				n++
			}
			if n > wsMaxIndent+1 {
				t.Errorf("after %q the grammar admits %d whitespace bytes in a row, want at most %d", prefix, n, wsMaxIndent+1)
			}
		})
	}
}

func TestFromSchemaErrors(t *testing.T) {
	for _, tc := range []struct {
		schema string
		opts   *Options
		want   error
	}{
		{`{`, nil, ErrInvalidSchema},
		{`"string"`, nil, ErrInvalidSchema},
		{`false`, nil, ErrUnsatisfiable},
		{`{"type":"integer","minimum":5,"maximum":4}`, nil, ErrUnsatisfiable},
		{`{"type":"object","properties":{"a":false},"required":["a"]}`, nil, ErrUnsatisfiable},
		{`{"type":"array","uniqueItems":true}`, &Options{Strict: true}, ErrRelaxed},
		{`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, nil, ErrUnsupported},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			_, err := FromSchema([]byte(tc.schema), tc.opts)
			if !errors.Is(err, tc.want) {
				t.Errorf("FromSchema(%s) error = %v, want %v", tc.schema, err, tc.want)
			}
		})
	}
	_, err := FromSchema([]byte(`{"type":"array","uniqueItems":true}`), &Options{Strict: true})
	var re *RelaxationError
	if !errors.As(err, &re) || len(re.Relaxations) != 1 || re.Relaxations[0].Keyword != "uniqueItems" {
		t.Errorf("strict error = %v, want a *RelaxationError listing uniqueItems", err)
	}
}

func TestRelaxationPointers(t *testing.T) {
	res, err := FromSchema([]byte(`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","format":"color"},"uniqueItems":true}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"#/properties/tags/items\tformat", "#/properties/tags\tuniqueItems"}
	var got []string
	for _, r := range res.Relaxations {
		got = append(got, r.String()[:strings.LastIndexByte(r.String(), '\t')])
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("relaxations = %q, want %q", got, want)
	}
}

func TestCacheReturnsSameResult(t *testing.T) {
	s := []byte(`{"type":"object","properties":{"q":{"type":"string"}}}`)
	cache := NewCache(0)
	a, err := FromSchema(s, &Options{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := FromSchema([]byte(` {"type" : "object", "properties":{"q":{"type":"string"}}}`), &Options{Cache: cache})
	if a != b {
		t.Errorf("FromSchema of the same schema (other spacing) = a new result, want the cached one")
	}
	c, _ := FromSchema(s, &Options{Compact: true, Cache: cache})
	if c == a || c.GBNF == a.GBNF {
		t.Errorf("options are not part of the cache key")
	}
}

func ExampleFromSchema() {
	res, err := FromSchema([]byte(`{
		"type": "object",
		"properties": {
			"city": {"type": "string", "maxLength": 40},
			"days": {"type": "integer", "minimum": 1, "maximum": 14}
		},
		"required": ["city"]
	}`), &Options{Compact: true})
	if err != nil {
		panic(err)
	}
	fmt.Print(res.GBNF)
	// Output:
	// root ::= "{\"city\":" city after-days "}"
	// city ::= "\"" json-char{0,40} "\""
	// after-days ::= (",\"days\":" days)?
	// json-char ::= [^\x00-\x1F"\\] | "\\" json-escape
	// days ::= "1" | [2-9] | "1" [0-3] | "14"
	// json-escape ::= ["/\\bfnrt] | "u" ([0-9A-CEFa-cef] [0-9A-Fa-f] [0-9A-Fa-f] [0-9A-Fa-f] | [Dd] [0-7] [0-9A-Fa-f] [0-9A-Fa-f]) | "u" [Dd] [89ABab] [0-9A-Fa-f] [0-9A-Fa-f] "\\u" [Dd] [C-Fc-f] [0-9A-Fa-f] [0-9A-Fa-f]
}

func TestConcurrentCompiles(t *testing.T) {
	ts := financeTools(t)
	done := make(chan string, 8)
	for w := 0; w < 8; w++ {
		go func(w int) {
			var last string
			for i := 0; i < 20; i++ {
				s := fmt.Sprintf(`{"type":"object","properties":{"n%d":{"type":"integer","maximum":%d}}}`, w, i)
				if _, err := FromSchema([]byte(s), nil); err != nil {
					t.Error(err)
				}
				env, err := Envelope(ts, nil)
				if err != nil {
					t.Error(err)
					break
				}
				last = env.GBNF
			}
			done <- last
		}(w)
	}
	first := <-done
	for w := 1; w < 8; w++ {
		if g := <-done; g != first {
			t.Errorf("concurrent Envelope calls returned different grammars")
		}
	}
}

// TestUnsatisfiableClosedObject: a schema whose values all need a property
// it does not declare is satisfiable, but not by a grammar, which never
// admits an undeclared property (22 of JSONSchemaBench's schemas, each with
// valid instances). The error says so and where, not that no JSON value
// satisfies the schema; a schema nothing satisfies keeps that message.
func TestUnsatisfiableClosedObject(t *testing.T) {
	tests := []struct {
		name, schema string
		want         []string
	}{
		{"required undeclared", `{"type":"object","properties":{},"required":["top"]}`,
			[]string{"declared properties", `# requires "top"`}},
		{"nested", `{"type":"object","properties":{"a":{"type":"object","required":["b"]}},"required":["a"]}`,
			[]string{"declared properties", `#/properties/a requires "b"`}},
		{"minProperties", `{"type":"object","minProperties":1}`,
			[]string{"declared properties", "# has minProperties 1 and declares 0 properties"}},
		{"nothing", `{"type":"integer","minimum":5,"maximum":4}`,
			[]string{"no JSON value satisfies the schema"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromSchema([]byte(tt.schema), nil)
			if !errors.Is(err, ErrUnsatisfiable) {
				t.Fatalf("FromSchema(%s) error = %v, want ErrUnsatisfiable", tt.schema, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("FromSchema(%s) error = %q, want it to contain %q", tt.schema, err, w)
				}
			}
		})
	}
}

// TestPatternPropertiesShadowDeclared: a declared property whose name also
// matches a patternProperties pattern (JSONSchemaBench o9814: "id" with a
// 24-digit pattern, beside ^[0-9a-zA-Z_-]{1,255}$ for any scalar) can be
// written through the pattern's branch, where only the pattern's schema
// applies: the grammar admitted {"id":"x"} with no relaxation. It is
// reported now, and Strict refuses it.
func TestPatternPropertiesShadowDeclared(t *testing.T) {
	tests := []struct {
		name, schema string
		want         bool
	}{
		{"declared name matches", `{"type":"object","properties":{"id":{"type":"string","pattern":"^[0-9]{3}$"}},"patternProperties":{"^[a-z]+$":{"type":"string"}}}`, true},
		{"with additionalProperties false", `{"type":"object","properties":{"id":{"type":"integer"}},"patternProperties":{"^i":{}},"additionalProperties":false}`, true},
		{"no declared name matches", `{"type":"object","properties":{"id":{"type":"string"}},"patternProperties":{"^x-":{"type":"string"}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := FromSchema([]byte(tt.schema), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := false
			for _, r := range res.Relaxations {
				got = got || r.Keyword == "patternProperties" && strings.Contains(r.Reason, `"id"`)
			}
			if got != tt.want {
				t.Errorf("relaxations %v: one naming \"id\" under patternProperties = %v, want %v", res.Relaxations, got, tt.want)
			}
			if _, err := FromSchema([]byte(tt.schema), &Options{Strict: true}); (err != nil) != tt.want {
				t.Errorf("Strict: error = %v, want one: %v", err, tt.want)
			}
		})
	}
}
