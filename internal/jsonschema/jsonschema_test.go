package jsonschema

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func mustCompile(t testing.TB, schema string, opts *Options) *Schema {
	t.Helper()
	doc, err := ParseDocument([]byte(schema))
	if err != nil {
		t.Fatalf("ParseDocument(%s): %v", schema, err)
	}
	s, err := Compile(doc, opts)
	if err != nil {
		t.Fatalf("Compile(%s): %v", schema, err)
	}
	return s
}

func mustParse(t testing.TB, instance string) any {
	t.Helper()
	v, err := ParseDocument([]byte(instance))
	if err != nil {
		t.Fatalf("ParseDocument(%s): %v", instance, err)
	}
	return v
}

// TestValidateExactNumbers pins that numbers are compared on their text:
// an instance the double rounding would make valid stays invalid.
func TestValidateExactNumbers(t *testing.T) {
	tests := []struct {
		schema, instance string
		valid            bool
	}{
		{`{"multipleOf":0.01}`, `1.0000000000000000001`, false},
		{`{"multipleOf":0.01}`, `1.01`, true},
		{`{"multipleOf":0.01}`, `1.010`, true},
		{`{"multipleOf":0.01}`, `1.001`, false},
		{`{"maximum":1}`, `1.0000000000000000001`, false},
		{`{"exclusiveMinimum":0}`, `0.0000000000000000000001`, true},
		{`{"type":"integer"}`, `9007199254740993.0`, true},
		{`{"type":"integer"}`, `1.0000000000000000001`, false},
		{`{"const":9007199254740993}`, `9007199254740992`, false},
		{`{"enum":[0.1]}`, `0.10000000000000000001`, false},
	}
	for _, tc := range tests {
		t.Run(tc.schema, func(t *testing.T) {
			s := mustCompile(t, tc.schema, nil)
			vs, err := s.Validate(mustParse(t, tc.instance), time.Time{})
			if err != nil {
				t.Fatalf("Validate(%s, %s): %v", tc.schema, tc.instance, err)
			}
			if got := len(vs) == 0; got != tc.valid {
				t.Errorf("Validate(%s, %s) valid = %v (%v), want %v", tc.schema, tc.instance, got, vs, tc.valid)
			}
		})
	}
}

// catastrophic is a pattern whose backtracking is exponential in the
// length of a near-miss input; \s keeps it off RE2 (^(a+)+$ is linear
// there). catastrophicJSON is the same inside a JSON string.
const (
	catastrophic     = `^(\w+\s?)*$`
	catastrophicJSON = `^(\\w+\\s?)*$`
)

var nearMiss = strings.Repeat("a", 40) + "!"

// TestValidateDeadlineIsPerValidation sends many near-miss strings at
// catastrophic patterns in every place a pattern is matched: one
// validation is refused with [ErrDeadline], whatever the number of matches.
func TestValidateDeadlineIsPerValidation(t *testing.T) {
	many := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = `"` + nearMiss + `"`
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	members := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`"%s%d":1`, nearMiss, i)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	tests := []struct {
		name, schema, instance string
	}{
		{"pattern on items", `{"type":"array","items":{"type":"string","pattern":"` + catastrophicJSON + `"}}`, many(50)},
		{"patternProperties", `{"type":"object","patternProperties":{"` + catastrophicJSON + `":{"type":"integer"}}}`, members(50)},
		{"propertyNames", `{"type":"object","propertyNames":{"pattern":"` + catastrophicJSON + `"}}`, members(50)},
		{"pattern in anyOf", `{"anyOf":[{"type":"array","items":{"pattern":"` + catastrophicJSON + `"}},{"type":"array","items":{"pattern":"(x+x+)+y"}}]}`, many(50)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mustCompile(t, tc.schema, nil)
			inst := mustParse(t, tc.instance)
			for i, deadline := range []time.Time{time.Now(), time.Now().Add(20 * time.Millisecond)} {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					vs, err := s.Validate(inst, deadline)
					if !errors.Is(err, ErrDeadline) {
						t.Fatalf("Validate(50 near misses) = %v, %v; want ErrDeadline", vs, err)
					}
				})
			}
			// The instance is reused by the next validation with a fresh budget.
			vs, err := s.Validate(mustParse(t, `["aaa"]`), time.Now().Add(time.Minute))
			if tc.name == "pattern on items" && (err != nil || len(vs) != 0) {
				t.Fatalf("Validate([\"aaa\"]) after a deadline = %v, %v; want valid", vs, err)
			}
		})
	}
}

// TestLinearPatternsNeedNoDeadline: a schema whose patterns all run on RE2
// never reports [ErrDeadline], even with a deadline already past.
func TestLinearPatternsNeedNoDeadline(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"a":{"type":"string","pattern":"^ACC-[0-9]{5}$"}}}`, nil)
	if s.shared == nil {
		t.Fatal("a schema with only portable patterns is not shared")
	}
	for _, in := range []struct {
		instance string
		valid    bool
	}{{`{"a":"ACC-00001"}`, true}, {`{"a":"ACC-1"}`, false}} {
		t.Run(in.instance, func(t *testing.T) {
			vs, err := s.Validate(mustParse(t, in.instance), time.Now().Add(-time.Hour))
			if err != nil || (len(vs) == 0) != in.valid {
				t.Errorf("Validate(%s) = %v, %v; want valid %v", in.instance, vs, err, in.valid)
			}
		})
	}
}

func TestValidateViolations(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"a/b":{"type":"string"},"n":{"minimum":1}},"required":["x"]}`, &Options{CloseObjects: true})
	vs, err := s.Validate(mustParse(t, `{"a/b":1,"n":0,"extra":true}`), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, v := range vs {
		got[v.Pointer] = true
		if v.Message == "" {
			t.Errorf("violation at %q has no message", v.Pointer)
		}
	}
	for _, want := range []string{"/a~1b", "/n", ""} {
		t.Run(want, func(t *testing.T) {
			if !got[want] {
				t.Errorf("violations %v lack pointer %q", vs, want)
			}
		})
	}
}

// TestViolationsOnce: branches of an anyOf that fail alike (git-mcp-server's
// git_checkout target: two strings, both minLength 1) give one violation,
// not one per branch, so the error body names each problem once and
// repeats cannot crowd others out of the first [MaxViolations].
func TestViolationsOnce(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"target":{"anyOf":[
		{"type":"string","minLength":1,"maxLength":255},{"type":"string","minLength":1}]}}}`, nil)
	vs, err := s.Validate(mustParse(t, `{"target":""}`), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{/target minLength: got 0, want 1}]`; fmt.Sprint(vs) != want {
		t.Errorf("Validate({\"target\":\"\"}) = %v, want %s", vs, want)
	}
}

// TestViolationMessages: a message says what the keyword wants, so a
// model can correct its arguments. The library's exclusive bounds read
// "got 0, want 0", which contradicts itself; they say "want more than 0" here.
func TestViolationMessages(t *testing.T) {
	for _, tc := range []struct{ name, schema, instance, want string }{
		{"exclusiveMinimum", `{"properties":{"n":{"exclusiveMinimum":0}}}`, `{"n":0}`, "exclusiveMinimum: got 0, want more than 0"},
		{"exclusiveMaximum", `{"properties":{"n":{"exclusiveMaximum":2.5}}}`, `{"n":3}`, "exclusiveMaximum: got 3, want less than 2.5"},
		{"draft-04 exclusiveMinimum", `{"$schema":"http://json-schema.org/draft-04/schema#","properties":{"n":{"minimum":0,"exclusiveMinimum":true}}}`, `{"n":0}`, "exclusiveMinimum: got 0, want more than 0"},
		{"minimum", `{"properties":{"n":{"minimum":0}}}`, `{"n":-1}`, "minimum: got -1, want 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, err := mustCompile(t, tc.schema, nil).Validate(mustParse(t, tc.instance), time.Time{})
			if err != nil || len(vs) != 1 || vs[0].Message != tc.want {
				t.Errorf("Validate(%s) = %v, %v; want one violation %q", tc.instance, vs, err, tc.want)
			}
		})
	}
}

// TestViolationMessagesBounded: a violation's message is sent to the
// caller (a model) on every refused call, so it is bounded whatever the
// schema holds: an enum of 100,000 values names a few and counts the
// rest, and no message (a long const, a long instance quoted by pattern)
// grows past [maxMessageBytes].
func TestViolationMessagesBounded(t *testing.T) {
	var enum []string
	for i := range 100000 {
		enum = append(enum, fmt.Sprintf(`"v%d"`, i))
	}
	long := strings.Repeat("x", 100000)
	for _, tc := range []struct{ name, schema, instance, want string }{
		{"huge enum", `{"properties":{"c":{"enum":[` + strings.Join(enum, ",") + `]}}}`, `{"c":"zz"}`, "and 99980 more"},
		{"small enum", `{"properties":{"c":{"enum":["a","b"]}}}`, `{"c":"zz"}`, "value must be one of 'a', 'b'"},
		{"long const", `{"properties":{"c":{"const":"` + long + `"}}}`, `{"c":"zz"}`, "value must be 'xxx"},
		{"long instance", `{"properties":{"c":{"pattern":"^a$"}}}`, `{"c":"` + long + `"}`, "'xxx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, err := mustCompile(t, tc.schema, nil).Validate(mustParse(t, tc.instance), time.Time{})
			if err != nil || len(vs) != 1 {
				t.Fatalf("Validate = %d violations, %v; want one", len(vs), err)
			}
			m := vs[0].Message
			if len(m) > maxMessageBytes {
				t.Errorf("message is %d bytes, over %d: %.200s…", len(m), maxMessageBytes, m)
			}
			if !strings.Contains(m, tc.want) {
				t.Errorf("message %.300q lacks %q", m, tc.want)
			}
		})
	}
}

// TestRefCycleIsASchemaError: a schema whose $refs loop without consuming
// input (a -> b -> a) cannot judge an instance that reaches the loop. That
// is the schema's fault, so Validate returns an error wrapping
// [ErrInvalidSchema], not a violation a caller would retry forever, and
// nothing names the compiler's internal resource.
func TestRefCycleIsASchemaError(t *testing.T) {
	for _, tc := range []struct{ name, schema string }{
		{"two defs", `{"type":"object","properties":{"x":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`},
		{"self", `{"type":"object","properties":{"x":{"$ref":"#/$defs/a"}},"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustCompile(t, tc.schema, nil)
			if vs, err := s.Validate(mustParse(t, `{}`), time.Time{}); err != nil || len(vs) != 0 {
				t.Errorf("Validate({}) = %v, %v; want valid (the loop is not reached)", vs, err)
			}
			vs, err := s.Validate(mustParse(t, `{"x":1}`), time.Time{})
			if !errors.Is(err, ErrInvalidSchema) || len(vs) != 0 {
				t.Errorf("Validate({\"x\":1}) = %v, %v; want an error wrapping ErrInvalidSchema", vs, err)
			}
			if strings.Contains(fmt.Sprint(vs, err), ResourceURL) {
				t.Errorf("Validate({\"x\":1}) = %v, %v: names %s", vs, err, ResourceURL)
			}
		})
	}
}

// TestViolationsInOneOrder: the validator visits an object's members in
// map order; the violations of one instance still come in one order
// (by pointer), so an error body is the same on every call.
func TestViolationsInOneOrder(t *testing.T) {
	var props, inst []string
	for i := range 12 {
		props = append(props, fmt.Sprintf(`"p%02d":{"type":"string"}`, i))
		inst = append(inst, fmt.Sprintf(`"p%02d":%d`, i, i))
	}
	s := mustCompile(t, `{"type":"object","properties":{`+strings.Join(props, ",")+`}}`, nil)
	v := mustParse(t, `{`+strings.Join(inst, ",")+`}`)
	first, err := s.Validate(v, time.Time{})
	if err != nil || len(first) != 12 {
		t.Fatalf("Validate = %v, %v; want 12 violations", first, err)
	}
	for i := 1; i < len(first); i++ {
		if first[i-1].Pointer >= first[i].Pointer {
			t.Fatalf("violations %v are not in pointer order", first)
		}
	}
	for range 20 {
		again, _ := s.Validate(v, time.Time{})
		if fmt.Sprint(again) != fmt.Sprint(first) {
			t.Fatalf("Validate gave %v, then %v", first, again)
		}
	}
}

func TestCloseObjects(t *testing.T) {
	tests := []struct {
		schema, instance string
		valid            bool
	}{
		{`{"type":"object","properties":{"a":{}}}`, `{"a":1,"b":2}`, false},
		{`{"type":"object","properties":{"a":{"type":"object","properties":{"x":{}}}}}`, `{"a":{"y":1}}`, false},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"properties":{"x":{}}}}}}`, `{"a":[{"y":1}]}`, false},
		{`{"type":"object","properties":{"a":{}},"additionalProperties":true}`, `{"a":1,"b":2}`, true},
		{`{"type":"object","properties":{"a":{}},"allOf":[{"properties":{"b":{}}}]}`, `{"a":1,"b":2}`, true},
		{`{"type":"object"}`, `{"b":2}`, true},
		// What the grammar merges stays open: a definition an allOf
		// branch references, and the properties of a combining schema.
		{`{"$defs":{"p":{"type":"object","properties":{"a":{}}}},"allOf":[{"$ref":"#/$defs/p"},{"properties":{"b":{}}}]}`, `{"a":1,"b":2}`, true},
		{`{"$defs":{"p":{"$ref":"#/$defs/q"},"q":{"properties":{"a":{}}}},"properties":{"b":{}},"$ref":"#/$defs/p"}`, `{"a":1,"b":2}`, true},
		{`{"properties":{"o":{"properties":{"x":{}}}},"allOf":[{"properties":{"o":{"properties":{"y":{}}}}}]}`, `{"o":{"x":1,"y":2}}`, true},
		{`{"$defs":{"p":{"properties":{"a":{}}}},"properties":{"q":{"$ref":"#/$defs/p"}}}`, `{"q":{"a":1,"z":2}}`, false},
		{`{"$defs":{"a/b":{"properties":{"a":{}}}},"allOf":[{"$ref":"#/$defs/a~1b"},{"properties":{"b":{}}}]}`, `{"a":1,"b":2}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.schema, func(t *testing.T) {
			s := mustCompile(t, tc.schema, &Options{CloseObjects: true})
			vs, err := s.Validate(mustParse(t, tc.instance), time.Time{})
			if err != nil || (len(vs) == 0) != tc.valid {
				t.Errorf("closed %s on %s = %v, %v; want valid %v", tc.schema, tc.instance, vs, err, tc.valid)
			}
		})
	}
	orig := mustParse(t, `{"properties":{"a":{"properties":{}}}}`).(map[string]any)
	CloseObjects(orig)
	if _, ok := orig["additionalProperties"]; ok {
		t.Error("CloseObjects modified its argument")
	}
}

// TestOpenNullable: OpenAPI's nullable beside a type admits null, as the
// grammar compiler reads it, at any depth; data (enum, const, default) is
// not a schema, an enum without null still refuses it, and a property
// named like a data keyword is still a schema.
func TestOpenNullable(t *testing.T) {
	tests := []struct {
		name, schema, instance string
		valid                  bool
	}{
		{"property", `{"type":"object","properties":{"a":{"type":"string","nullable":true}},"required":["a"]}`, `{"a":null}`, true},
		{"property, a string still", `{"type":"object","properties":{"a":{"type":"string","nullable":true}}}`, `{"a":"x"}`, true},
		{"property, another type", `{"type":"object","properties":{"a":{"type":"string","nullable":true}}}`, `{"a":1}`, false},
		{"nullable false", `{"type":"object","properties":{"a":{"type":"string","nullable":false}}}`, `{"a":null}`, false},
		{"no type", `{"type":"object","properties":{"a":{"minLength":2,"nullable":true}}}`, `{"a":null}`, true},
		{"type list", `{"type":"object","properties":{"a":{"type":["string","integer"],"nullable":true}}}`, `{"a":null}`, true},
		{"items", `{"type":"array","items":{"type":"integer","nullable":true}}`, `[1,null]`, true},
		{"through $ref", `{"$defs":{"n":{"type":"number","nullable":true}},"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}}`, `{"a":null}`, true},
		{"anyOf branch", `{"anyOf":[{"type":"string","nullable":true},{"type":"integer"}]}`, `null`, true},
		{"property named enum", `{"type":"object","properties":{"enum":{"type":"string","nullable":true}}}`, `{"enum":null}`, true},
		{"enum without null", `{"type":"string","nullable":true,"enum":["a","b"]}`, `null`, false},
		{"enum data untouched", `{"enum":[{"type":"string","nullable":true}]}`, `{"type":"string","nullable":true}`, true},
		{"root", `{"type":"object","nullable":true}`, `null`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mustCompile(t, tc.schema, nil)
			vs, err := s.Validate(mustParse(t, tc.instance), time.Time{})
			if err != nil || (len(vs) == 0) != tc.valid {
				t.Errorf("%s on %s = %v, %v; want valid %v", tc.schema, tc.instance, vs, err, tc.valid)
			}
		})
	}
	orig := mustParse(t, `{"properties":{"a":{"type":"string","nullable":true}}}`).(map[string]any)
	OpenNullable(orig)
	if got := orig["properties"].(map[string]any)["a"].(map[string]any)["type"]; got != "string" {
		t.Errorf("OpenNullable modified its argument: type %v", got)
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"type":"strnig"}`, "/type"},
		{`{"pattern":"(?<"}`, "pattern"},
		{`{"$ref":"https://example.com/s.json"}`, "not fetched"},
		{`{"minimum":"1"}`, "/minimum"},
		// JSON pointers (RFC 6901): a "/" or "~" in a member name is escaped,
		// so the place is not read as another (/properties/a/b/type).
		{`{"properties":{"a/b":{"type":"strin"}}}`, "at /properties/a~1b/type: "},
		{`{"properties":{"c~d":{"minimum":"x"}}}`, "at /properties/c~0d/minimum: "},
	}
	for _, tc := range tests {
		t.Run(tc.schema, func(t *testing.T) {
			doc := mustParse(t, tc.schema)
			_, err := Compile(doc, nil)
			if !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Compile(%s) = %v; want one line wrapping ErrInvalidSchema that mentions %q", tc.schema, err, tc.want)
			}
			if strings.Contains(fmt.Sprint(err), ResourceURL) {
				t.Errorf("Compile(%s) error names the internal URL: %v", tc.schema, err)
			}
		})
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}"} {
		t.Run(bad, func(t *testing.T) {
			if _, err := ParseDocument([]byte(bad)); !errors.Is(err, ErrInvalidSchema) {
				t.Errorf("ParseDocument(%q) = %v; want ErrInvalidSchema", bad, err)
			}
		})
	}
}

func TestFormatAsserted(t *testing.T) {
	schema := `{"type":"object","properties":{"e":{"format":"email"},"r":{"format":"regex"}}}`
	for i, tc := range []struct {
		assert bool
		valid  bool
	}{{true, false}, {false, true}} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			s := mustCompile(t, schema, &Options{AssertFormat: tc.assert})
			vs, err := s.Validate(mustParse(t, `{"e":"not an address","r":"(?<"}`), time.Time{})
			if err != nil || (len(vs) == 0) != tc.valid {
				t.Errorf("AssertFormat %v: %v, %v; want valid %v", tc.assert, vs, err, tc.valid)
			}
		})
	}
}

// TestConcurrentValidate shares one schema with backtracking patterns
// between goroutines, some of which run out of time: each answer is its
// own (run with -race).
func TestConcurrentValidate(t *testing.T) {
	s := mustCompile(t, `{"type":"array","items":{"type":"string","pattern":"`+catastrophicJSON+`"}}`, nil)
	good, bad := mustParse(t, `["aaaa","a"]`), mustParse(t, `["`+nearMiss+`"]`)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 16 {
		wg.Go(func() {
			for range 4 {
				if i%2 == 0 {
					if vs, err := s.Validate(good, time.Now().Add(time.Minute)); err != nil || len(vs) != 0 {
						errs <- fmt.Sprintf("good instance: %v, %v", vs, err)
					}
				} else if _, err := s.Validate(bad, time.Now().Add(5*time.Millisecond)); !errors.Is(err, ErrDeadline) {
					errs <- fmt.Sprintf("near miss: %v, want ErrDeadline", err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestRegexpMatchString(t *testing.T) {
	for _, tc := range []struct {
		p, s   string
		linear bool
		want   bool
	}{
		{`^ACC-[0-9]{5}$`, "ACC-00001", true, true},
		{`^\s+$`, "\u00a0", false, true},
		{`^.$`, "\n", false, false},
		{`^(?!admin)`, "admin", false, false},
	} {
		t.Run(tc.p, func(t *testing.T) {
			r, err := CompileRegexp(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.MatchString(tc.s)
			if err != nil || got != tc.want || r.Linear() != tc.linear {
				t.Errorf("CompileRegexp(%q).MatchString(%q) = %v, %v (linear %v); want %v (linear %v)", tc.p, tc.s, got, err, r.Linear(), tc.want, tc.linear)
			}
		})
	}
	r, _ := CompileRegexp(catastrophic)
	if _, err := r.MatchString(nearMiss); !errors.Is(err, ErrDeadline) {
		t.Errorf("catastrophic match = %v, want ErrDeadline", err)
	}
	if _, err := CompileRegexp(`(?<`); err == nil || !strings.Contains(err.Error(), "(?<") {
		t.Errorf("CompileRegexp((?<) = %v, want an error naming the pattern", err)
	}
}

// FuzzCompile compiles arbitrary schema bytes and validates an arbitrary
// instance against what compiles: no panic, and every answer is an error,
// violations with pointers, or valid.
func FuzzCompile(f *testing.F) {
	for _, s := range [][2]string{
		{`{"type":"object","properties":{"a":{"pattern":"^a+$"}}}`, `{"a":"aaa"}`},
		{`{"items":{"pattern":"(a+)+$"}}`, `["aaaaaaaaaaaaaaaaaaaaaaaa!"]`},
		{`{"multipleOf":0.01}`, `1.0000000000000000001`},
		{`{"$ref":"#/$defs/x","$defs":{"x":{"type":"string"}}}`, `1`},
		{`{"patternProperties":{"^x":{"type":"integer"}}}`, `{"xy":"s"}`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, schema, instance []byte) {
		doc, err := ParseDocument(schema)
		if err != nil {
			return
		}
		obj, ok := doc.(map[string]any)
		s, err := Compile(doc, &Options{AssertFormat: true, CloseObjects: ok && obj != nil})
		if err != nil {
			if !errors.Is(err, ErrInvalidSchema) {
				t.Fatalf("Compile error %v does not wrap ErrInvalidSchema", err)
			}
			return
		}
		inst, err := ParseDocument(instance)
		if err != nil {
			return
		}
		vs, err := s.Validate(inst, time.Now().Add(50*time.Millisecond))
		if err != nil && !errors.Is(err, ErrDeadline) {
			t.Fatalf("Validate: %v", err)
		}
		if len(vs) > MaxViolations {
			t.Fatalf("%d violations, more than %d", len(vs), MaxViolations)
		}
	})
}

// TestURITemplateFormat pins RFC 6570 syntax for format uri-template: the
// library's check refused valid operators and prefixes ("{#var}",
// "{v:1000}") that the grammars let a model write.
func TestURITemplateFormat(t *testing.T) {
	s := mustCompile(t, `{"format":"uri-template"}`, &Options{AssertFormat: true})
	for _, tc := range []struct {
		name, in string
		valid    bool
	}{
		{"empty", ``, true},
		{"literal", `http://example.com/a`, true},
		{"simple", `http://example.com/{id}`, true},
		{"fragment operator", `{#var}`, true},
		{"path segment operator", `{/var}`, true},
		{"form query operator", `/search{?q,lang}`, true},
		{"reserved operator", `{+path}/x`, true},
		{"four-digit prefix", `{v:1000}`, true},
		{"explode", `{list*}`, true},
		{"dotted name", `{a.b}`, true},
		{"pct-encoded name", `{a%20b}`, true},
		{"apostrophe literal", `a'b`, true},
		{"unicode literal", `/é/{x}`, true},
		{"unclosed", `http://example.com/{`, false},
		{"empty expression", `{}`, false},
		{"nested", `{{a}}`, false},
		{"space", `a b`, false},
		{"bad percent", `100%`, false},
		{"five-digit prefix", `{v:10000}`, false},
		{"zero prefix", `{v:0}`, false},
		{"trailing dot", `{a.}`, false},
		{"stray close", `a}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, err := s.Validate(tc.in, time.Time{})
			if err != nil || (len(vs) == 0) != tc.valid {
				t.Errorf("Validate(%q) = %v, %v; want valid %v", tc.in, vs, err, tc.valid)
			}
		})
	}
}

// TestHugeExponentIsAViolation pins that a number whose exponent the
// library's big.Rat cannot hold is refused, not a crash: 1e1000000000
// against a minimum or a multipleOf dereferenced a nil in the validator.
func TestHugeExponentIsAViolation(t *testing.T) {
	for _, tc := range []struct {
		name, schema, instance, pointer string
	}{
		{"minimum", `{"type":"number","minimum":0}`, `1e1000000000`, ""},
		{"multipleOf", `{"multipleOf":0.5}`, `-1E+99999999999`, ""},
		{"nested maximum", `{"type":"object","properties":{"b":{"maximum":3}},"required":["a"]}`, `{"b":[1,2e10001]}`, "/b/1"},
		{"first in name order", `{"type":"object","properties":{"a":{"minimum":1},"b":{"minimum":1}}}`, `{"b":1e20000,"a":1e-20000}`, "/a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustCompile(t, tc.schema, nil)
			vs, err := s.Validate(mustParse(t, tc.instance), time.Time{})
			if err != nil || len(vs) != 1 || vs[0].Pointer != tc.pointer || !strings.Contains(vs[0].Message, "out of range") {
				t.Errorf("Validate(%s) = %v, %v; want one out-of-range violation at %q", tc.instance, vs, err, tc.pointer)
			}
		})
	}
	s := mustCompile(t, `{"type":"number","maximum":1e400}`, nil)
	if vs, err := s.Validate(mustParse(t, `1e399`), time.Time{}); err != nil || len(vs) != 0 {
		t.Errorf("Validate(1e399) = %v, %v; want valid (an exponent within bounds is compared exactly)", vs, err)
	}
}

// TestRelativeIDs: a subschema's relative $id (draft-04's id) names a
// resource of its own, as in JSONSchemaBench's Github schemas; it must not
// resolve onto the root's name (an opaque URN resolves every relative
// reference to itself: "duplicate id"), and a $ref by that id reaches it.
func TestRelativeIDs(t *testing.T) {
	tests := []struct {
		name, schema, valid, invalid, pointer string
	}{
		{"two siblings", `{"type":"object","properties":{"a":{"$id":"a","type":"string"},"b":{"$id":"b","type":"integer"}}}`,
			`{"a":"x","b":1}`, `{"a":"x","b":"y"}`, "/b"},
		{"ref by id", `{"definitions":{"n":{"$id":"n","type":"integer"}},"properties":{"x":{"$ref":"n"}}}`,
			`{"x":1}`, `{"x":"s"}`, "/x"},
		{"draft-04 id", `{"$schema":"http://json-schema.org/draft-04/schema#","properties":{"a":{"id":"a","type":"string"}}}`,
			`{"a":"x"}`, `{"a":1}`, "/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, tt.schema, nil)
			if vs, err := s.Validate(mustParse(t, tt.valid), time.Time{}); err != nil || len(vs) != 0 {
				t.Errorf("Validate(%s) = %v, %v; want valid", tt.valid, vs, err)
			}
			vs, err := s.Validate(mustParse(t, tt.invalid), time.Time{})
			if err != nil || len(vs) != 1 || vs[0].Pointer != tt.pointer {
				t.Errorf("Validate(%s) = %v, %v; want one violation at %s", tt.invalid, vs, err, tt.pointer)
			}
		})
	}
}
