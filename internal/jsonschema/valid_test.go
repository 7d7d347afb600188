package jsonschema

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
)

// compiles reports whether [NewCompiler] accepts doc, the answer
// [ProvablyValid] stands in for.
func compiles(doc any) error {
	c := NewCompiler()
	if err := c.AddResource(ResourceURL, doc); err != nil {
		return err
	}
	_, err := c.Compile(ResourceURL)
	return err
}

// TestProvablyValid: the common shapes are proven without a compile, and
// every shape the walk does not decide, valid or not, is left to the
// compiler.
func TestProvablyValid(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		proven bool
	}{
		{"transfer", `{"type":"object","properties":{"to":{"type":"string","pattern":"^ACC-[0-9]{5}$"},"amount":{"type":"number","exclusiveMinimum":0,"multipleOf":0.01}},"required":["to","amount"]}`, true},
		{"empty", `{}`, true},
		{"draft-07 from zod", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"q":{"type":"string","description":"query"},"n":{"type":"number","default":10}},"required":["q"],"additionalProperties":false}`, true},
		{"nested", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"type":["string","null"],"enum":["x",null]}}},"minItems":0,"uniqueItems":true}}}`, true},
		{"combinators", `{"anyOf":[{"type":"string"},{"type":"integer","minimum":-1}],"not":{"const":3},"oneOf":[true,{}],"allOf":[{"format":"date"}]}`, true},
		{"boolean property", `{"type":"object","properties":{"a":true,"b":false}}`, true},
		{"extension members", `{"type":"object","x-order":[1],"nullable":true,"properties":{"a":{"type":"string","x-foo":{"$ref":"#/nope"}}}}`, true},
		{"portable pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"^[a-z]{2,5}$"}}}`, true},
		{"positive multipleOf", `{"type":"number","multipleOf":0.01}`, true},

		{"ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`, true},
		{"pydantic", `{"$defs":{"Item":{"properties":{"n":{"title":"N","type":"integer"}},"required":["n"],"title":"Item","type":"object"}},"properties":{"items":{"items":{"$ref":"#/$defs/Item"},"title":"Items","type":"array"},"note":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null}},"required":["items"],"type":"object"}`, true},
		{"draft-07 definitions", `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"x":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/x"}}}`, true},
		{"ref to the root", `{"type":"object","properties":{"child":{"$ref":"#"}}}`, true},
		{"ref cycle", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, true},
		{"ref to a missing definition", `{"type":"object","properties":{"a":{"$ref":"#/$defs/y"}},"$defs":{"x":{}}}`, false},
		{"ref escaped", `{"type":"object","properties":{"a":{"$ref":"#/$defs/a%20b"}},"$defs":{"a b":{}}}`, false},
		{"ref into a property", `{"type":"object","properties":{"a":{"type":"string"},"b":{"$ref":"#/properties/a"}}}`, false},
		{"remote ref", `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`, false},
		{"nested definitions", `{"type":"object","properties":{"a":{"$defs":{"x":{}},"$ref":"#/$defs/x"}},"$defs":{"x":{}}}`, false},
		{"invalid definition", `{"type":"object","$defs":{"x":{"type":"text"}}}`, false},
		{"id", `{"$id":"https://example.com/s","type":"object"}`, false},
		{"draft-04", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, false},
		{"unknown draft", `{"$schema":"https://example.com/meta","type":"object"}`, false},
		{"nested $schema", `{"type":"object","properties":{"a":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}`, false},
		{"items array", `{"type":"array","items":[{"type":"string"}]}`, false},
		{"backtracking pattern", transferSchema, false}, // memo's lookahead
		{"patternProperties", `{"type":"object","patternProperties":{"^x":{}}}`, true},
		{"if then", `{"if":{"type":"string"},"then":{"minLength":1}}`, true},
		{"zod record", `{"type":"object","propertyNames":{"type":"string"},"additionalProperties":{"type":"number"}}`, true},
		{"array keywords", `{"type":"array","prefixItems":[{"type":"string"}],"contains":{"const":1},"minContains":1,"unevaluatedItems":false}`, true},
		{"dependents", `{"dependentRequired":{"a":["b","c"]},"dependentSchemas":{"a":{"required":["d"]}}}`, true},
		{"lookahead patternProperties", `{"type":"object","patternProperties":{"^(?!x)":{}}}`, false},
		{"dependentRequired repeated", `{"dependentRequired":{"a":["b","b"]}}`, false},
		{"empty prefixItems", `{"prefixItems":[]}`, false},
		{"draft-07 dependencies", `{"$schema":"http://json-schema.org/draft-07/schema#","dependencies":{"a":["b"]}}`, false},

		// Invalid: the compiler says why.
		{"bad type", `{"type":"text"}`, false},
		{"repeated type", `{"type":["string","string"]}`, false},
		{"empty type list", `{"type":[]}`, false},
		{"required not strings", `{"type":"object","required":[1]}`, false},
		{"required repeated", `{"type":"object","required":["a","a"]}`, false},
		{"negative length", `{"type":"string","minLength":-1}`, false},
		{"fractional length", `{"type":"string","maxLength":1.5}`, false},
		{"zero multipleOf", `{"type":"number","multipleOf":0}`, false},
		{"property not a schema", `{"type":"object","properties":{"a":"string"}}`, false},
		{"enum not an array", `{"type":"string","enum":"a"}`, false},
		{"description not a string", `{"type":"object","description":1}`, false},
		{"empty anyOf", `{"anyOf":[]}`, false},
		{"invalid pattern", `{"type":"string","pattern":"("}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := mustParse(t, tc.schema)
			if got := ProvablyValid(doc); got != tc.proven {
				t.Errorf("ProvablyValid(%s) = %v, want %v", tc.schema, got, tc.proven)
			}
			if err := compiles(doc); tc.proven && err != nil {
				t.Errorf("proven valid, but the compiler says: %v", err)
			}
		})
	}
}

// TestProvablyValidLongRequired: a long "required" list costs linear time
// and its repeats are still found.
func TestProvablyValidLongRequired(t *testing.T) {
	names := make([]any, 100_000)
	for i := range names {
		names[i] = "p" + strconv.Itoa(i)
	}
	doc := map[string]any{"type": "object", "required": names}
	if !ProvablyValid(doc) {
		t.Fatal("100,000 distinct required names: not proven valid")
	}
	names[len(names)-1] = names[0]
	if ProvablyValid(doc) {
		t.Fatal("a repeated required name at the end: proven valid")
	}
}

// TestProvablyValidAgreesOnCorpora: over every schema of the shared
// corpora (the JSON-Schema-Test-Suite, JSONSchemaBench and the real MCP
// catalogs), what the walk proves valid compiles. The real tools' schemas
// are nearly all proven, which is what makes loading a big catalog cheap.
func TestProvablyValidAgreesOnCorpora(t *testing.T) {
	var docs []struct {
		corpus, where string
		doc           any
	}
	add := func(corpus, where string, raw []byte) {
		doc, err := ParseDocument(raw)
		if err != nil {
			return // not every suite document parses strictly
		}
		docs = append(docs, struct {
			corpus, where string
			doc           any
		}{corpus, where, doc})
	}
	suite, _ := filepath.Glob(filepath.Join(testenv.Shared(t, "datasets/json-schema-test-suite/tests/draft2020-12"), "*.json"))
	for _, f := range suite {
		var groups []struct {
			Schema json.RawMessage `json:"schema"`
		}
		readJSON(t, f, &groups)
		for i, g := range groups {
			add("suite", fmt.Sprintf("%s#%d", filepath.Base(f), i), g.Schema)
		}
	}
	bench, _ := filepath.Glob(filepath.Join(testenv.Shared(t, "datasets/jsonschemabench/maskbench"), "*", "*.json"))
	for _, f := range bench {
		var file struct {
			Schema json.RawMessage `json:"schema"`
		}
		readJSON(t, f, &file)
		add("jsonschemabench", f, file.Schema)
	}
	for _, tool := range testenv.CatalogTools(t) {
		add("mcp", tool.Catalog+"/"+tool.Name, tool.InputSchema)
	}

	proven := map[string]int{}
	total := map[string]int{}
	for _, d := range docs {
		total[d.corpus]++
		if !ProvablyValid(d.doc) {
			continue
		}
		proven[d.corpus]++
		if err := compiles(d.doc); err != nil {
			t.Errorf("%s %s: proven valid, but the compiler says: %v", d.corpus, d.where, err)
		}
	}
	for _, c := range []string{"suite", "jsonschemabench", "mcp"} {
		t.Logf("%s: %d of %d schemas proven valid without a compile", c, proven[c], total[c])
	}
	// Measured: all 105 real tools, 4,020 of JSONSchemaBench's 6,081.
	if total["mcp"] == 0 || proven["mcp"]*100 < total["mcp"]*99 {
		t.Errorf("real MCP tools: %d of %d schemas proven, want at least 99%%", proven["mcp"], total["mcp"])
	}
	if proven["jsonschemabench"]*100 < total["jsonschemabench"]*65 {
		t.Errorf("JSONSchemaBench: %d of %d schemas proven, want at least 65%%", proven["jsonschemabench"], total["jsonschemabench"])
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// FuzzProvablyValid: whatever the document, a schema proven valid
// compiles.
func FuzzProvablyValid(f *testing.F) {
	for _, s := range []string{
		transferSchema,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`,
		`{"anyOf":[{"type":"string"},{"type":"integer","minimum":-1}],"not":{"const":3},"oneOf":[true,{}]}`,
		`{"type":"object","x-foo":{"$id":"https://example.com/x"},"properties":{"$ref":{"type":"string"}}}`,
		`{"type":"array","items":{"type":"array","items":{"enum":[]}},"maxItems":0}`,
		`{"type":["object","null"],"required":["a","b"],"minProperties":1,"exclusiveMinimum":1e308}`,
		`{"multipleOf":1e-320}`,
		`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"},"y":{"$ref":"#"}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{}},"items":{"$ref":"#/definitions/a"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		doc, err := ParseDocument(schema)
		if err != nil || !ProvablyValid(doc) {
			return
		}
		if err := compiles(doc); err != nil {
			t.Fatalf("ProvablyValid(%s) = true, but the compiler says: %v", schema, err)
		}
	})
}
