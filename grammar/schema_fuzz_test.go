package grammar

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/internal/jsonschema"
)

// FuzzFromSchema: no input makes [FromSchema] panic, every grammar it
// returns parses, and an error is one of the package's sentinels.
func FuzzFromSchema(f *testing.F) {
	for _, tc := range failureModes {
		f.Add(tc.schema)
	}
	for _, s := range []string{`{}`, `true`, `false`, `{"$ref":"#"}`, `{"allOf":[{"$ref":"#"}]}`,
		`{"anyOf":[{"type":"object","properties":{"a":{"$ref":"#"}}},{"type":"null"}]}`,
		`{"type":"string","pattern":"(a|b)*c{2,3}[^x-z]\\d"}`, `{"enum":[1,"a",null,[1],{"a":2}]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		res, err := FromSchema([]byte(schema), nil)
		if err != nil {
			if !errors.Is(err, ErrInvalidSchema) && !errors.Is(err, ErrUnsatisfiable) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("FromSchema(%q) error %v wraps no sentinel", schema, err)
			}
			return
		}
		if _, err := gbnf.Parse(res.GBNF); err != nil {
			t.Fatalf("FromSchema(%q) emitted a grammar that does not parse: %v\n%s", schema, err, res.GBNF)
		}
	})
}

// FuzzRegex: the translation of a pattern agrees with an ECMAScript regex
// engine (internal/jsonschema's ECMA-262 setup) on whether a string matches, whenever the translation
// reports no relaxation.
func FuzzRegex(f *testing.F) {
	for _, p := range [][2]string{{`^\d{3}$`, "123"}, {`^[\w-]+$`, "a-b"}, {`abc`, "xabcx"}, {`^(?:ab)+$`, "abab"},
		{`^a{3,}$`, "aaaa"}, {`^[^a-c]?x|y$`, "dx"}, {`^\s*$`, " \t"}, {`^\/\.$`, "/."}, {`^[\u00e0-\u00ff]+$`, "é"},
		{`^(a|b|)c$`, "c"}, {`^.$`, "\n"}, {`^\S+@\S+$`, "a@b"}, {`^[^"]*$`, `a"b`}, {`^\\$`, `\`}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if !utf8.ValidString(pattern) || !utf8.ValidString(s) || len(pattern) > 64 || len(s) > 64 {
			return
		}
		want, err := regexMatch(pattern, s)
		if err != nil {
			return
		}
		var b strings.Builder
		writeJSONString(&b, pattern)
		res, err := FromSchema([]byte(`{"type":"string","pattern":`+b.String()+`}`), nil)
		if errors.Is(err, ErrUnsatisfiable) { // a pattern like [] matches nothing
			if want {
				t.Fatalf("pattern %q: %v, but the reference engine matches %q", pattern, err, s)
			}
			return
		}
		if err != nil {
			t.Fatalf("pattern %q: %v", pattern, err)
		}
		g, err := gbnf.Parse(res.GBNF)
		if err != nil {
			t.Fatalf("pattern %q: grammar does not parse: %v\n%s", pattern, err, res.GBNF)
		}
		if len(res.Relaxations) > 0 {
			return
		}
		b.Reset()
		writeJSONString(&b, s)
		got, _ := g.Match([]byte(b.String()))
		if got != want {
			t.Fatalf("pattern %q on %q: grammar %v, reference engine %v\n%s", pattern, s, got, want, res.GBNF)
		}
	})
}

// referenceRegexps holds the reference engine's compiled patterns.
var referenceRegexps sync.Map // pattern → [*jsonschema.Regexp] or error

// regexMatch is the reference: whether s contains a match of the ECMA-262
// pattern according to the module's one ECMA regex setup
// (internal/jsonschema: RE2 where it provably agrees, else regexp2 in
// ECMAScript mode), as JSON Schema's pattern keyword defines. Only tests
// use it; the compiler decides with its own translation (nameMatches),
// which has no clock.
func regexMatch(pattern, s string) (bool, error) {
	v, ok := referenceRegexps.Load(pattern)
	if !ok {
		re, err := jsonschema.CompileRegexp(pattern)
		if err != nil {
			referenceRegexps.Store(pattern, err)
			return false, err
		}
		v = re
		referenceRegexps.Store(pattern, re)
	}
	switch x := v.(type) {
	case error:
		return false, x
	case *jsonschema.Regexp:
		return x.MatchString(s)
	}
	return false, nil
}

// FuzzURITemplate: the uri-template grammar and the gateway's validator
// (internal/jsonschema with formats asserted) agree on every string, so a
// template a model writes under the grammar is never refused, and one the
// gateway takes is never out of the model's reach.
func FuzzURITemplate(f *testing.F) {
	for _, s := range []string{``, `http://example.com/{id}`, `{#var}`, `{/var}`, `{?q,lang}`, `{v:1000}`, `{v:10000}`,
		`{list*}`, `{a.b}`, `{a%20b}`, `a'b`, `/é/{x}`, `{`, `{}`, `a}`, `{a.}`, `100%`, `a b`} {
		f.Add(s)
	}
	schema := `{"type":"string","format":"uri-template"}`
	res, err := FromSchema([]byte(schema), &Options{Compact: true})
	if err != nil {
		f.Fatal(err)
	}
	g, err := gbnf.Parse(res.GBNF)
	if err != nil {
		f.Fatal(err)
	}
	doc, _ := jsonschema.ParseDocument([]byte(schema))
	v, err := jsonschema.Compile(doc, &jsonschema.Options{AssertFormat: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			return
		}
		text := strings.TrimSuffix(b.String(), "\n")
		byGrammar, _ := g.Match([]byte(text))
		vs, err := v.Validate(s, time.Time{})
		byGateway := err == nil && len(vs) == 0
		if byGrammar != byGateway {
			t.Fatalf("uri-template %q: grammar accepts %v, gateway validator %v (%v)", s, byGrammar, byGateway, vs)
		}
	})
}
