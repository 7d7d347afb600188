package grammar

import (
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/internal/jsonschema"
	"github.com/toolgate/toolgate/internal/testenv"
)

// TestGrammarIsSound runs every instance of the official suite and of
// JSONSchemaBench, written as a model writes it, through both the grammar
// and the gateway's validator (internal/jsonschema with formats asserted):
// where the schema compiled without a relaxation, an instance the grammar
// accepts must be valid. The suites' invalid instances are the probes:
// {"not":{"type":"integer"}} let 1 through, and prefixItems merged from an
// allOf dropped the sibling items at those positions.
func TestGrammarIsSound(t *testing.T) {
	dir := testenv.Shared(t, "datasets/json-schema-test-suite/tests/draft2020-12")
	var files []string
	for _, glob := range []string{"*.json", "optional/*.json", "optional/format/*.json"} {
		f, _ := filepath.Glob(filepath.Join(dir, glob))
		files = append(files, f...)
	}
	var groups []suiteGroup
	for _, f := range files {
		groups = append(groups, loadSuiteFile(t, f)...)
	}
	for _, gs := range maskBenchGroups(t) {
		groups = append(groups, gs...)
	}
	checked := 0
	for _, cg := range runGroups(t, groups, &Options{OpenObjects: true}) {
		if cg.err != nil || len(cg.res.Relaxations) > 0 {
			continue
		}
		doc, err := jsonschema.ParseDocument(cg.group.schema)
		if err != nil {
			continue
		}
		s, err := jsonschema.Compile(doc, &jsonschema.Options{AssertFormat: true})
		if err != nil {
			continue
		}
		for i, in := range cg.inputs {
			if !cg.accepted[i] {
				continue
			}
			checked++
			v, err := jsonschema.ParseDocument([]byte(in))
			if err != nil {
				t.Errorf("%s / %s: grammar accepts %s, which is not JSON: %v", cg.group.name, cg.group.tests[i].desc, in, err)
				continue
			}
			if vs, err := s.Validate(v, time.Time{}); err != nil || len(vs) > 0 {
				t.Errorf("%s / %s: grammar accepts %s, validator refuses it: %v %v (no relaxation reported)", cg.group.name, cg.group.tests[i].desc, in, vs, err)
			}
		}
	}
	t.Logf("%d accepted instances of schemas without relaxations checked", checked)
}

// toolSchemas are hand-written tool schemas shaped like MCP servers'
// (recursion, oneOf of objects, patternProperties, huge bounds, unicode
// enums, formats, OpenAPI nullable, boolean subschemas).
var toolSchemas = []string{
	`{"type":"object","properties":{"path":{"type":"string","minLength":2,"maxLength":3},"mode":{"enum":["r","w","é\"\\\n","日本",null,1.5,{"a":[1]}]}},"required":["path"]}`,
	`{"type":"object","properties":{"amount":{"type":"number","multipleOf":0.01,"minimum":-1000.5,"maximum":99999999999999999999999},"n":{"type":"integer","minimum":-9223372036854775809,"maximum":18446744073709551616}},"required":["amount","n"]}`,
	`{"type":"object","properties":{"n":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}},"required":["n"]}`,
	`{"type":"object","properties":{"n":{"type":"integer","exclusiveMinimum":-5,"exclusiveMaximum":-1,"multipleOf":2}},"required":["n"]}`,
	`{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string","maxLength":4},"kids":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":2}},"required":["name"],"additionalProperties":false}},"$ref":"#/$defs/node"}`,
	`{"type":"object","properties":{"target":{"oneOf":[{"type":"object","properties":{"kind":{"const":"file"},"path":{"type":"string"}},"required":["kind","path"]},{"type":"object","properties":{"kind":{"const":"url"},"url":{"type":"string","format":"uri"}},"required":["kind","url"]}]}},"required":["target"]}`,
	`{"type":"object","properties":{"headers":{"type":"object","patternProperties":{"^X-[A-Z][a-z]+$":{"type":"string","maxLength":3}},"additionalProperties":false}},"required":["headers"]}`,
	`{"type":"object","properties":{"env":{"type":"object","additionalProperties":{"type":"string","pattern":"^[a-z]{1,3}$"},"maxProperties":2}}}`,
	`{"type":"array","prefixItems":[{"const":"☃"},{"type":"integer","minimum":1}],"items":false,"minItems":2}`,
	`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"dependentRequired":{"a":["b"]},"additionalProperties":false}`,
	`{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":2}},"required":["s"]}`,
	`{"type":"object","properties":{"d":{"type":"string","format":"date-time"},"e":{"type":"string","format":"email"},"h":{"type":"string","format":"hostname"},"i":{"type":"string","format":"ipv6"},"u":{"type":"string","format":"uuid"},"t":{"type":"string","format":"time"}}}`,
	`{"type":"object","properties":{"x":{"type":"string","nullable":true},"y":{"type":"integer","nullable":true,"enum":[1,2]}},"required":["x","y"]}`,
	`{"type":"object","properties":{"a":{"type":"integer"}},"unevaluatedProperties":false,"allOf":[{"properties":{"b":{"type":"boolean"}}}]}`,
	`{"type":"object","properties":{"q":true,"r":false,"s":{}}}`,
	`{"anyOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false},{"type":"object","properties":{"b":{"type":"string"}},"required":["b"],"additionalProperties":false}]}`,
	`{"type":"string","pattern":"^[\\u00e9-\\u00ff]{2}\\d?$"}`,
	`{"type":"object","properties":{"k":{"type":"string","enum":["a\u0000b","\ud83d\ude00","\u2028","/"]}},"required":["k"]}`,
	`{"type":"number","minimum":0.5,"maximum":2.25}`,
	`{"type":"integer","minimum":1e3,"maximum":1.5e3}`,
	`{"type":"number","multipleOf":0.001,"exclusiveMaximum":0}`,
	`{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3,"contains":{"const":1}}`,
	`{"type":"object","minProperties":1,"properties":{"a":{"type":"null"},"b":{"type":"null"}}}`,
	`{"type":"object","required":["x-id"],"properties":{"x-id":{"type":"string","minLength":1}}}`,
	`{"type":["integer","string"],"minimum":3,"maxLength":1}`,
	`{"type":"object","propertyNames":{"pattern":"^[a-c]+$"},"additionalProperties":{"type":"integer"}}`,
	`{"type":"object","if":{"properties":{"a":{"const":1}}},"then":{"required":["b"]},"properties":{"a":{"type":"integer"},"b":{"type":"string"}}}`,
}

// TestGrammarWalksAreValid generates outputs by walking each grammar
// byte by byte (a fixed seed; each step picks among the bytes the Matcher
// allows, favouring the ones that close a value) and requires every
// complete one to be JSON the gateway's validator accepts (formats
// asserted, objects closed as the gateway closes them), for every schema
// compiled without a relaxation: the hand-written toolSchemas and
// JSONSchemaBench. Walks found huge exponents, emails and closed
// definitions the validator refused. A member name written twice is
// counted, not failed: a name a pattern admits is not tracked.
func TestGrammarWalksAreValid(t *testing.T) {
	schemas := append([]string(nil), toolSchemas...)
	for _, gs := range maskBenchGroups(t) {
		for _, g := range gs {
			schemas = append(schemas, string(g.schema))
		}
	}
	rng := rand.New(rand.NewSource(1))
	generated, repeated := 0, 0
	for si, sc := range schemas {
		res, err := FromSchema([]byte(sc), &Options{Compact: true})
		if err != nil || len(res.Relaxations) > 0 {
			continue
		}
		doc, err := jsonschema.ParseDocument([]byte(sc))
		if err != nil {
			continue
		}
		v, err := jsonschema.Compile(doc, &jsonschema.Options{AssertFormat: true, CloseObjects: true})
		if err != nil {
			continue
		}
		g, err := gbnf.Parse(res.GBNF)
		if err != nil {
			t.Fatalf("%.200s: %v", sc, err)
		}
		walks := 3
		if si < len(toolSchemas) {
			walks = 30
		}
		for range walks {
			out, ok, dead := walkGrammar(g, rng, 600)
			if dead {
				t.Errorf("%.300s: the grammar allows %q and then no byte, though it is not complete", sc, out)
			}
			if !ok {
				continue
			}
			generated++
			inst, err := jsonschema.ParseDocument(out)
			if err != nil && strings.Contains(err.Error(), "duplicate member") {
				repeated++
				continue
			}
			if err != nil {
				t.Errorf("%.300s: grammar accepts %q, not JSON: %v", sc, out, err)
				continue
			}
			if vs, err := v.Validate(inst, time.Time{}); err != nil || len(vs) > 0 {
				t.Errorf("%.300s: grammar accepts %q, validator refuses it: %v %v", sc, out, vs, err)
			}
		}
	}
	t.Logf("%d outputs generated, %d with a member name written twice", generated, repeated)
}

// walkGrammar writes one output of g at random, at most max bytes; ok is
// false when it did not end in a complete sentence, dead true when that is
// because the matcher allowed no byte after an incomplete prefix (out).
func walkGrammar(g *gbnf.Grammar, rng *rand.Rand, max int) (out []byte, ok, dead bool) {
	m, err := gbnf.NewMatcher(g)
	if err != nil {
		return nil, false, false
	}
	for len(out) < max {
		al := m.Allowed()
		bs := al.Bytes()
		if m.Accepts() && (len(bs) == 0 || rng.Intn(3) == 0) {
			break
		}
		if len(bs) == 0 {
			return out, false, true
		}
		var closing []byte
		for _, c := range bs {
			if strings.IndexByte(`"}],`, c) >= 0 {
				closing = append(closing, c)
			}
		}
		b := bs[rng.Intn(len(bs))]
		if len(closing) > 0 && rng.Intn(4) == 0 {
			b = closing[rng.Intn(len(closing))]
		}
		m.Advance(b)
		out = append(out, b)
	}
	return out, m.Accepts(), false
}
