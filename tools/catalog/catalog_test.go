package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
)

// parseNames parses in as catalog "cat.jsonl" in namespace "ns" and returns
// the IDs of the accepted tools and the error text.
func parseNames(t *testing.T, in string) ([]string, string) {
	t.Helper()
	ts, err := Parse(strings.NewReader(in), "cat.jsonl", "ns")
	ids := make([]string, len(ts))
	for i, tool := range ts {
		ids[i] = tool.ID
		if verr := tool.Validate(); verr != nil {
			t.Errorf("Parse returned an invalid tool: %v", verr)
		}
	}
	if err == nil {
		return ids, ""
	}
	return ids, err.Error()
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantIDs []string
		wantErr string // exact error text; lines joined by "\n"
	}{
		{"bad JSON line",
			"{\"name\":\"a\"}\n{\"name\": \"b\"\n{\"name\":\"c\"}\n",
			[]string{"ns/a", "ns/c"},
			"cat.jsonl:2: invalid JSON: unexpected end of JSON input"},
		{"garbage line",
			"{\"name\":\"a\"}\nnot json\n",
			[]string{"ns/a"},
			"cat.jsonl:2: invalid JSON: invalid character 'o' in literal null (expecting 'u')"},
		{"missing name",
			"{\"description\":\"x\"}\n",
			nil,
			`cat.jsonl:1: missing "name"`},
		{"name not a string",
			"{\"name\":\"ok\"}\n\n{\"name\":42}\n",
			[]string{"ns/ok"},
			`cat.jsonl:3: "name" is not a string`},
		{"empty name",
			"{\"name\":\"  \"}\n",
			nil,
			`cat.jsonl:1: "name" is empty`},
		{"name with control character",
			"{\"name\":\"a\\u0007b\"}\n",
			nil,
			`cat.jsonl:1: tool name "a\ab": character 2 is U+0007, a control character`},
		{"lookalike name",
			"{\"name\":\"transfer_funds\"}\n{\"name\":\"tr\u0430nsfer_funds\"}\n{\"name\":\"get_balance\u202e\"}\n",
			[]string{"ns/transfer_funds"},
			`cat.jsonl:2: tool name "tr\u0430nsfer_funds": character 3 is U+0430 CYRILLIC SMALL LETTER A, not printable ASCII: it could pass for another tool's name` + "\n" +
				`cat.jsonl:3: tool name "get_balance\u202e": character 12 is U+202E RIGHT-TO-LEFT OVERRIDE, not printable ASCII: it could pass for another tool's name`},
		{"line not an object",
			"{\"name\":\"a\"}\n[1]\n\"b\"\n",
			[]string{"ns/a"},
			"cat.jsonl:2: tool is not a JSON object\ncat.jsonl:3: tool is not a JSON object"},
		{"array element not an object",
			"[1,\n{\"name\":\"a\"}]",
			[]string{"ns/a"},
			"cat.jsonl:1: tool is not a JSON object"},
		{"schema not an object",
			"{\"name\":\"a\",\"inputSchema\":[1]}\n",
			nil,
			`cat.jsonl:1: a: invalid "inputSchema": not a JSON object`},
		{"schema is a string",
			"{\"name\":\"a\",\"parameters\":\"object\"}\n",
			nil,
			`cat.jsonl:1: a: invalid "parameters": not a JSON object`},
		{"schema root not an object type",
			"{\"name\":\"a\",\"inputSchema\":{\"type\":\"strin\"}}\n",
			nil,
			`cat.jsonl:1: a: invalid "inputSchema": type is "strin", want "object"`},
		{"invalid nested type",
			"{\"name\":\"a\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"strin\"}}}}\n",
			nil,
			`cat.jsonl:1: a: invalid "inputSchema": at /properties/x/type: value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'`},
		{"negative minLength",
			"{\"name\":\"a\",\"inputSchema\":{\"minLength\":-1}}\n",
			nil,
			`cat.jsonl:1: a: invalid "inputSchema": at /minLength: minimum: got -1, want 0`},
		{"draft-07 schema checked as draft-07",
			"{\"name\":\"a\",\"inputSchema\":{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\",\"required\":\"x\"}}\n",
			nil,
			`cat.jsonl:1: a: invalid "inputSchema": at /required: got string, want array`},
		{"remote reference never fetched",
			"{\"name\":\"a\",\"inputSchema\":{\"$ref\":\"https://example.com/s.json\"}}\n",
			nil,
			`cat.jsonl:1: a: invalid "inputSchema": failing loading "https://example.com/s.json": reference to https://example.com/s.json is not fetched: external references are not loaded`},
		{"no schema sees another tool's schema",
			"{\"name\":\"a\",\"inputSchema\":{\"type\":\"object\"}}\n{\"name\":\"b\",\"inputSchema\":{\"$ref\":\"urn:toolgate:input-schema:1\"}}\n",
			[]string{"ns/a"},
			`cat.jsonl:2: b: invalid "inputSchema": failing loading "schema:1": reference to schema:1 is not fetched: external references are not loaded`},
		{"both inputSchema and parameters",
			"{\"name\":\"a\",\"inputSchema\":{},\"parameters\":{}}\n",
			nil,
			`cat.jsonl:1: a: both "inputSchema" and "parameters" are given`},
		{"scopes not strings",
			"{\"name\":\"a\",\"scopes\":[\"x\",1]}\n",
			nil,
			`cat.jsonl:1: a: "scopes" is not an array of strings`},
		{"empty scope",
			"{\"name\":\"a\",\"scopes\":[\"\"]}\n",
			nil,
			`cat.jsonl:1: a: "scopes" holds an empty scope`},
		{"misspelt scopes",
			"{\"name\":\"a\",\"scope\":[\"admin\"]}\n{\"name\":\"b\",\"Scopes\":[\"admin\"]}\n{\"name\":\"c\",\"scopes\":[\"admin\"]}\n",
			[]string{"ns/c"},
			`cat.jsonl:1: a: unknown member "scope": did you mean "scopes"? (it would be ignored)` + "\n" +
				`cat.jsonl:2: b: unknown member "Scopes": did you mean "scopes"? (it would be ignored)`},
		{"misspelt flags and texts",
			"{\"name\":\"a\",\"readOnly\":true}\n{\"name\":\"b\",\"notFor\":\"x\"}\n{\"name\":\"c\",\"alias\":[\"x\"]}\n{\"name\":\"d\",\"Description\":\"x\"}\n",
			nil,
			`cat.jsonl:1: a: unknown member "readOnly": did you mean "read_only"? (it would be ignored)` + "\n" +
				`cat.jsonl:2: b: unknown member "notFor": did you mean "not_for"? (it would be ignored)` + "\n" +
				`cat.jsonl:3: c: unknown member "alias": did you mean "aliases"? (it would be ignored)` + "\n" +
				`cat.jsonl:4: d: unknown member "Description": did you mean "description"? (it would be ignored)`},
		{"misspelt annotation",
			"{\"name\":\"a\",\"annotations\":{\"readonlyHint\":true}}\n",
			nil,
			`cat.jsonl:1: a: annotations: unknown member "readonlyHint": did you mean "readOnlyHint"? (it would be ignored)`},
		{"other members ignored",
			"{\"name\":\"a\",\"outputSchema\":{},\"_meta\":{},\"icons\":[],\"execution\":{},\"annotations\":{\"title\":\"A\",\"x\":1}}\n",
			[]string{"ns/a"},
			""},
		{"annotation not a boolean",
			"{\"name\":\"a\",\"annotations\":{\"readOnlyHint\":\"yes\"}}\n",
			nil,
			`cat.jsonl:1: a: annotations: "readOnlyHint" is not a boolean`},
		{"read_only and irreversible",
			"{\"name\":\"a\",\"read_only\":true,\"irreversible\":true}\n",
			nil,
			`cat.jsonl:1: a: "read_only" and "irreversible" contradict each other`},
		{"duplicate",
			"{\"name\":\"a\"}\n{\"name\":\"b\"}\n{\"name\":\"a\"}\n",
			[]string{"ns/a", "ns/b"},
			`cat.jsonl:3: duplicate tool "ns/a" (first defined at line 1)`},
		{"truncated array",
			"[\n  {\"name\":\"a\"},\n  {\"name\":\"b\",\n",
			[]string{"ns/a"},
			"cat.jsonl:3: invalid JSON in JSON array: unexpected end of file"},
		{"array missing bracket",
			"[\n  {\"name\":\"a\"}\n",
			[]string{"ns/a"},
			"cat.jsonl:3: truncated JSON array: missing ']'"},
		{"array element errors carry their line",
			"[\n  {\"name\":\"a\"},\n  {\n    \"name\": 1\n  },\n  {\"name\":\"c\"}\n]\n",
			[]string{"ns/a", "ns/c"},
			`cat.jsonl:3: "name" is not a string`},
		{"data after the array",
			"[{\"name\":\"a\"}]\n\n]",
			[]string{"ns/a"},
			"cat.jsonl:3: unexpected data after the JSON array"},
		{"two tools/list results",
			"{\"tools\":[{\"name\":\"a\"}]}\n{\"tools\":[{\"name\":\"b\"}]}\n",
			[]string{"ns/a"},
			"cat.jsonl:2: unexpected data after the tools/list result"},
		{"problems reported in line order",
			"{\"tools\":[\n{\"name\":1}\n]}\n[]\n",
			nil,
			"cat.jsonl:2: \"name\" is not a string\ncat.jsonl:4: unexpected data after the tools/list result"},
		{"tools/list without tools",
			"{\"nextCursor\":\"abc\"}\n",
			nil,
			`cat.jsonl:1: missing "name"`},
		{"JSON-RPC error response",
			"{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32601,\"message\":\"Method not found\\u001b[2J\"}}\n",
			nil,
			`cat.jsonl:1: a JSON-RPC error response (-32601 "Method not found\x1b[2J"), not a tools/list result`},
		{"JSON-RPC response of another method",
			"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\"}}\n",
			nil,
			`cat.jsonl:1: a JSON-RPC response whose result has no "tools": not a tools/list result`},
		{"tools/list tools not an array",
			"{\"tools\":{\"name\":\"a\"}}\n",
			nil,
			`cat.jsonl:1: tools/list "tools" is not a JSON array`},
		{"tools/list element errors carry their line",
			"{\"tools\":[\n{\"name\":\"a\"},\n{\"title\":\"x\"}\n]}\n",
			[]string{"ns/a"},
			`cat.jsonl:3: missing "name"`},
		{"duplicate member: the tool is refused, not read as its last scopes",
			"{\"name\":\"a\",\"scopes\":[\"admin\"],\"scopes\":[]}\n{\"name\":\"b\"}\n",
			[]string{"ns/b"},
			`cat.jsonl:1: duplicate member name "scopes"`},
		{"duplicate member deep in the input schema",
			"{\"name\":\"a\",\"inputSchema\":{\"properties\":{\"x\":{\"maxLength\":1,\"maxLength\":9}}}}\n",
			nil,
			`cat.jsonl:1: duplicate member name "maxLength"`},
		{"duplicate member in an annotation, array element on its line",
			"[\n{\"name\":\"a\"},\n{\"name\":\"b\",\n \"annotations\":{\"readOnlyHint\":true,\"readOnlyHint\":false}}\n]",
			[]string{"ns/a"},
			`cat.jsonl:3: duplicate member name "readOnlyHint"`},
		{"duplicate tools array in a tools/list result",
			"{\"tools\":[{\"name\":\"a\"}],\"tools\":[]}",
			nil,
			`cat.jsonl:1: duplicate member name "tools"`},
		{"duplicate result in a JSON-RPC response",
			"{\"result\":{\"tools\":[{\"name\":\"a\"}]},\n\"result\":{\"tools\":[]}}",
			nil,
			`cat.jsonl:1: duplicate member name "result"`},
		{"duplicate name",
			"{\"name\":\"a\",\"name\":\"b\"}\n",
			nil,
			`cat.jsonl:1: duplicate member name "name"`},
		{"schema nested too deep",
			"{\"name\":\"a\",\"inputSchema\":" + strings.Repeat(`{"items":`, 70) + "{}" + strings.Repeat("}", 70) + "}\n",
			nil,
			`cat.jsonl:1: a: invalid "inputSchema": nested deeper than 64 levels`},
		{"invalid UTF-8 is refused, not replaced",
			"{\"name\":\"a\",\"description\":\"\xff\"}\n",
			nil,
			`cat.jsonl:1: invalid UTF-8 in string`},
		{"tools/list syntax error at its line and column",
			"{\"tools\": [\n  {\"name\": \"a\"},\n  {\"name\": \"b\" \"x\"}\n]}\n",
			nil,
			"cat.jsonl:3: invalid JSON in tools/list result at column 16: invalid character '\"' after object key:value pair"},
		{"JSON-RPC tools/list syntax error at its line and column",
			"{\"jsonrpc\": \"2.0\", \"result\": {\n  \"tools\": [\n    {\"name\": \"a\",}\n  ]\n}}\n",
			nil,
			"cat.jsonl:3: invalid JSON in tools/list result at column 18: invalid character '}' looking for beginning of object key string"},
		{"array element syntax error at its line and column",
			"[\n  {\"name\":\"a\"},\n  {\n    \"name\": \"b\"\n    \"x\": 1\n  }\n]\n",
			[]string{"ns/a"},
			"cat.jsonl:5: invalid JSON in JSON array at column 5: invalid character '\"' after object key:value pair"},
		{"several problems, all reported",
			"{\"name\":1}\n{\"name\":\"a\"}\n{\n{\"name\":\"a\"}\n",
			[]string{"ns/a"},
			"cat.jsonl:1: \"name\" is not a string\ncat.jsonl:3: invalid JSON: unexpected end of JSON input\ncat.jsonl:4: duplicate tool \"ns/a\" (first defined at line 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, err := parseNames(t, tt.in)
			if err != tt.wantErr {
				t.Errorf("Parse(%q) error =\n%s\nwant\n%s", tt.in, err, tt.wantErr)
			}
			if !slices.Equal(ids, tt.wantIDs) {
				t.Errorf("Parse(%q) tools = %v, want %v", tt.in, ids, tt.wantIDs)
			}
		})
	}
}

func TestParseErrorsAreTyped(t *testing.T) {
	_, err := Parse(strings.NewReader("{\"name\":1}\n\n{}\n"), "f.jsonl", "ns")
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("Parse error %v is not a *Error", err)
	}
	if ce.File != "f.jsonl" || ce.Line != 1 || ce.Reason != `"name" is not a string` {
		t.Errorf("first Error = %+v, want {f.jsonl 1 \"name\" is not a string}", *ce)
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok || len(joined.Unwrap()) != 2 {
		t.Fatalf("Parse error %v does not join 2 errors", err)
	}
}

func TestParseFormats(t *testing.T) {
	want := []string{"ns/a", "ns/b"}
	tests := []struct {
		name string
		in   string
	}{
		{"JSON Lines", "{\"name\":\"a\"}\n{\"name\":\"b\"}\n"},
		{"JSON Lines, CRLF, blank lines, no final newline", "\r\n{\"name\":\"a\"}\r\n   \r\n\r\n{\"name\":\"b\"}"},
		{"BOM", "\xef\xbb\xbf{\"name\":\"a\"}\n{\"name\":\"b\"}\n"},
		{"JSON array", "[{\"name\":\"a\"},{\"name\":\"b\"}]"},
		{"pretty JSON array with BOM", "\xef\xbb\xbf[\n  {\n    \"name\": \"a\"\n  },\n  {\n    \"name\": \"b\"\n  }\n]\n"},
		{"tools/list", "{\"tools\":[{\"name\":\"a\"},{\"name\":\"b\"}],\"nextCursor\":null}"},
		{"tools/list, tools last", "{\"_meta\":{\"x\":[1,{\"tools\":1}]},\"tools\":[{\"name\":\"a\"},{\"name\":\"b\"}]}"},
		{"JSON-RPC response", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, err := parseNames(t, tt.in)
			if err != "" || !slices.Equal(ids, want) {
				t.Errorf("Parse(%q) = %v, %q; want %v, no error", tt.in, ids, err, want)
			}
		})
	}
	for _, empty := range []string{"", "  \n\r\n", "\xef\xbb\xbf", "[]", "{\"tools\":[]}"} {
		t.Run(empty, func(t *testing.T) {
			ids, err := parseNames(t, empty)
			if len(ids) != 0 || err != "" {
				t.Errorf("Parse(%q) = %v, %q; want no tools, no error", empty, ids, err)
			}
		})
	}
}

func TestParseFields(t *testing.T) {
	in := `{"name":"send_mail","title":"Send mail","description":"Send an e-mail now. It is delivered at once.",` +
		`"inputSchema":{"type":"object","properties":{"to":{"type":"string"}}},"scopes":["mail:send"],` +
		`"aliases":["email someone"],"not_for":"Use draft_mail to only prepare one.","tags":["mail"],"group":"mail",` +
		`"tenants":["acme"],"annotations":{"destructiveHint":true,"idempotentHint":true,"openWorldHint":true},"outputSchema":{"type":"object"},"_meta":{}}
{"name":"read_mail","summary":"Read your inbox","description":"Long text.","parameters":null,"annotations":{"readOnlyHint":true,"destructiveHint":true}}
{"name":"wipe","irreversible":true,"read_only":false}
`
	ts, err := Parse(strings.NewReader(in), "mail.jsonl", "mail")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(ts)
	want := `[{"id":"mail/send_mail","card":{"name":"send_mail","summary":"Send an e-mail now.","scopes":["mail:send"],` +
		`"aliases":["email someone"],"not_for":"Use draft_mail to only prepare one.","tags":["mail"],"group":"mail",` +
		`"irreversible":true,"idempotent":true,"open_world":true},"title":"Send mail","description":"Send an e-mail now. It is delivered at once.",` +
		`"input_schema":{"type":"object","properties":{"to":{"type":"string"}}},"tenants":["acme"]},` +
		`{"id":"mail/read_mail","card":{"name":"read_mail","summary":"Read your inbox","read_only":true},"description":"Long text."},` +
		`{"id":"mail/wipe","card":{"name":"wipe","irreversible":true}}]`
	if string(got) != want {
		t.Errorf("Parse(%s) =\n%s\nwant\n%s", in, got, want)
	}
}

// TestParseToolFormats: the tool definitions other APIs write are read
// as they are: OpenAI Chat Completions' {"type":"function","function":
// {...}}, the Responses API's flat {"type":"function","name",...} and
// Anthropic's (and toolgate's own JSON's) "input_schema". Before, the
// first was refused ("missing "name"") and the last loaded without its
// schema, silently.
func TestParseToolFormats(t *testing.T) {
	const schema = `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	for _, tc := range []struct{ name, in string }{
		{"chat completions", `{"type":"function","function":{"name":"get_weather","description":"Weather now.","parameters":` + schema + `,"strict":true}}`},
		{"chat completions, no type", `{"function":{"name":"get_weather","description":"Weather now.","parameters":` + schema + `}}`},
		{"chat completions, scopes beside", `{"type":"function","function":{"name":"get_weather","description":"Weather now.","parameters":` + schema + `},"scopes":["weather:read"]}`},
		{"responses", `{"type":"function","name":"get_weather","description":"Weather now.","parameters":` + schema + `,"strict":true}`},
		{"anthropic", `{"name":"get_weather","description":"Weather now.","input_schema":` + schema + `}`},
		{"anthropic, inputSchema null", `{"name":"get_weather","description":"Weather now.","inputSchema":null,"input_schema":` + schema + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := Parse(strings.NewReader(tc.in), "w.jsonl", "w")
			if err != nil || len(ts) != 1 {
				t.Fatalf("Parse(%s) = %d tools, %v; want one", tc.in, len(ts), err)
			}
			if tl := ts[0]; tl.ID != "w/get_weather" || tl.Card.Summary != "Weather now." || string(tl.InputSchema) != schema ||
				strings.Contains(tc.in, "scopes") != slices.Equal(tl.Card.Scopes, []string{"weather:read"}) {
				t.Errorf("Parse(%s) = %s %q %s; want w/get_weather with its description and schema", tc.in, tl.ID, tl.Card.Summary, tl.InputSchema)
			}
		})
	}
	for _, tc := range []struct{ name, in, want string }{
		{"two schemas", `{"name":"x","parameters":{"type":"object"},"input_schema":{"type":"object"}}`, `cat.jsonl:1: x: both "parameters" and "input_schema" are given`},
		{"function not an object", `{"type":"function","function":"get_weather"}`, `cat.jsonl:1: "function" is not a JSON object`},
		{"another tool type", `{"type":"web_search","function":{"name":"x"}}`, `cat.jsonl:1: a "web_search" tool, not a function: only function tools can be read`},
		{"function without name", `{"type":"function","function":{"description":"d"}}`, `cat.jsonl:1: missing "name"`},
		{"member inside and beside", `{"type":"function","function":{"name":"x","description":"a"},"description":"b"}`, `cat.jsonl:1: "description" is given both inside and beside "function"`},
		{"bad inner schema", `{"type":"function","function":{"name":"x","parameters":{"type":"strin"}}}`, `cat.jsonl:1: x: invalid "parameters"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids, err := parseNames(t, tc.in)
			if len(ids) != 0 || !strings.HasPrefix(err, tc.want) {
				t.Errorf("Parse(%s) = %v, %q; want no tool and %q", tc.in, ids, err, tc.want)
			}
		})
	}
}

// TestAnnotationDefaults: an annotations object without destructiveHint
// says, as MCP defines it, that a tool which is not read-only may destroy;
// a tool without annotations has no hints.
func TestAnnotationDefaults(t *testing.T) {
	for _, tc := range []struct {
		name, tool   string
		irreversible bool
		readOnly     bool
	}{
		{"no annotations", `{"name":"push"}`, false, false},
		{"null annotations", `{"name":"push","annotations":null}`, false, false},
		{"readOnlyHint false alone", `{"name":"push","annotations":{"readOnlyHint":false}}`, true, false},
		{"empty object", `{"name":"push","annotations":{}}`, true, false},
		{"title only", `{"name":"push","annotations":{"title":"Push"}}`, true, false},
		{"destructiveHint null", `{"name":"push","annotations":{"destructiveHint":null}}`, true, false},
		{"destructiveHint false", `{"name":"push","annotations":{"readOnlyHint":false,"destructiveHint":false}}`, false, false},
		{"read-only", `{"name":"push","annotations":{"readOnlyHint":true}}`, false, true},
		{"explicit flag wins nothing back", `{"name":"push","irreversible":false,"annotations":{"idempotentHint":true}}`, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := Parse(strings.NewReader(tc.tool), "git.jsonl", "git")
			if err != nil {
				t.Fatal(err)
			}
			if c := ts[0].Card; c.Irreversible != tc.irreversible || c.ReadOnly != tc.readOnly {
				t.Errorf("Parse(%s): irreversible %v, read-only %v; want %v, %v", tc.tool, c.Irreversible, c.ReadOnly, tc.irreversible, tc.readOnly)
			}
		})
	}
}

func TestParseSpec(t *testing.T) {
	tests := []struct{ spec, path, ns string }{
		{"gh=catalogs/github.json", "catalogs/github.json", "gh"},
		{"catalogs/mcp-server-github.json", "catalogs/mcp-server-github.json", "mcp-server-github"},
		{"datasets/bfcl/tools.jsonl", "datasets/bfcl/tools.jsonl", "tools"},
		{"my tools.v2.jsonl", "my tools.v2.jsonl", "my-tools"},
		{"./a=b/c.json", "./a=b/c.json", "c"},
		{"x=", "x=", "x-"},
		{".hidden", ".hidden", "hidden"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			path, ns := ParseSpec(tt.spec)
			if path != tt.path || ns != tt.ns {
				t.Errorf("ParseSpec(%q) = %q, %q; want %q, %q", tt.spec, path, ns, tt.path, tt.ns)
			}
			if tools.CheckNamespace(ns) != nil {
				t.Errorf("ParseSpec(%q) namespace %q is not a valid namespace", tt.spec, ns)
			}
		})
	}
}

func TestParseTooLarge(t *testing.T) {
	line := "{\"name\":\"a\"}\n"
	ts, _, err := parseLimited(strings.NewReader(strings.Repeat(line, 1<<20/len(line)+1)), "big.jsonl", "ns", 1<<20)
	if len(ts) != 0 || err == nil || err.Error() != "big.jsonl: catalog is larger than 1 MiB" {
		t.Errorf("parse(over 1 MiB, limit 1 MiB) = %d tools, %v; want none, big.jsonl: catalog is larger than 1 MiB", len(ts), err)
	}
	ts, _, err = parseLimited(strings.NewReader(strings.Repeat(line, 1<<20/len(line))), "big.jsonl", "ns", 1<<20)
	if len(ts) != 1 || err == nil || !strings.Contains(err.Error(), "duplicate tool") {
		t.Errorf("parse(just under 1 MiB) = %d tools, %v; want the file read (1 tool, duplicates reported)", len(ts), err)
	}
}

func TestParseBadNamespace(t *testing.T) {
	_, err := Parse(strings.NewReader(`{"name":"a"}`), "f.jsonl", "bad/ns")
	if err == nil || err.Error() != `f.jsonl: invalid namespace "bad/ns": must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$` {
		t.Errorf("Parse with namespace bad/ns: error %v", err)
	}
}

func TestLoadAll(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	b := filepath.Join(dir, "b.json")
	os.WriteFile(a, []byte("{\"name\":\"x\"}\n{\"name\":\"y\"}\n"), 0o600)
	os.WriteFile(b, []byte("[\n{\"name\":\"z\"},\n{\"name\":\"y\"}\n]"), 0o600)
	ts, err := LoadAll(a, "a="+b, filepath.Join(dir, "missing.jsonl"))
	var ids []string
	for _, t := range ts {
		ids = append(ids, t.ID)
	}
	if want := []string{"a/x", "a/y", "a/z"}; !slices.Equal(ids, want) {
		t.Errorf("LoadAll tools = %v, want %v", ids, want)
	}
	want := b + `:3: duplicate tool "a/y" (first defined at ` + a + ":2)\n" + filepath.Join(dir, "missing.jsonl") + ": cannot read catalog: no such file or directory"
	if err == nil || err.Error() != want {
		t.Errorf("LoadAll error =\n%v\nwant\n%s", err, want)
	}
}

// TestLoadFiles: each spec gives one File, in order, with its format and
// its tools; an empty file is a File with no tools.
func TestLoadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	specs := []string{
		write("lines.jsonl", "{\"name\":\"x\"}\n"),
		"arr=" + write("arr.json", "[{\"name\":\"y\"}]"),
		write("gh.json", "{\"tools\":[{\"name\":\"z\"}]}"),
		write("rpc.json", "{\"jsonrpc\":\"2.0\",\"result\":{\"tools\":[]}}"),
		write("empty.jsonl", "\n"),
	}
	files, err := LoadFiles(specs...)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		ns     string
		format Format
		tools  int
	}{{"lines", FormatJSONLines, 1}, {"arr", FormatArray, 1}, {"gh", FormatToolsList, 1}, {"rpc", FormatToolsList, 0}, {"empty", FormatJSONLines, 0}}
	if len(files) != len(want) {
		t.Fatalf("LoadFiles = %d files, want %d", len(files), len(want))
	}
	for i, w := range want {
		t.Run(w.ns, func(t *testing.T) {
			if f := files[i]; f.Namespace != w.ns || f.Format != w.format || len(f.Tools) != w.tools {
				t.Errorf("LoadFiles[%d] = %s %s %d tools, want %s %s %d tools", i, f.Namespace, f.Format, len(f.Tools), w.ns, w.format, w.tools)
			}
		})
	}
}

// TestRealCatalogs loads every real catalog toolgate is used with: the eight
// real MCP servers (shared and the example's committed copy) and the
// retrieval datasets' tool files. Each must load without a single error.
func TestRealCatalogs(t *testing.T) {
	var files []string
	mcp, _ := filepath.Glob(filepath.Join(testenv.Shared(t, "catalogs/real-mcp"), "*.json"))
	example, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "examples/transfer/catalog/*.json"))
	if len(mcp) != 8 || len(example) != 8 {
		t.Fatalf("found %d shared and %d example MCP catalogs, want 8 each", len(mcp), len(example))
	}
	files = append(append(files, mcp...), example...)
	for _, d := range []string{"metatool", "bfcl", "apibank"} {
		files = append(files, testenv.Shared(t, "datasets/"+d+"/tools.jsonl"))
	}
	want := map[string]int{"real-mcp": 105, "catalog": 105, "metatool": 199, "bfcl": 2573, "apibank": 101}
	got := map[string]int{}
	for _, f := range files {
		ts, err := Load(f, "ns")
		if err != nil {
			t.Errorf("Load(%s): %v", f, err)
		}
		lines := countNonBlankObjects(t, f)
		if lines >= 0 && len(ts) != lines {
			t.Errorf("Load(%s) = %d tools, want %d (one per line)", f, len(ts), lines)
		}
		got[filepath.Base(filepath.Dir(f))] += len(ts)
		for _, tool := range ts {
			if tool.Card.Summary == "" && tool.Description != "" {
				t.Errorf("%s: %s has a description but no summary", f, tool.ID)
			}
		}
	}
	for k, n := range want {
		t.Run(k, func(t *testing.T) {
			if got[k] != n {
				t.Errorf("tools loaded from %s = %d, want %d", k, got[k], n)
			}
		})
	}
}

// countNonBlankObjects returns the number of non-blank lines of a JSON
// Lines file, or -1 for other formats.
func countNonBlankObjects(t *testing.T, path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(path, ".jsonl") {
		return -1
	}
	n := 0
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			n++
		}
	}
	return n
}

var lineErr = regexp.MustCompile(`^f\.jsonl:[1-9][0-9]*: \S`)

func FuzzParse(f *testing.F) {
	seeds := []string{
		"{\"name\":\"a\",\"inputSchema\":{\"type\":\"object\"}}\n{bad\n",
		"[{\"name\":\"a\"},{\"name\":1}]",
		"{\"tools\":[{\"name\":\"a\",\"annotations\":{\"readOnlyHint\":true}}]}",
		"{\"result\":{\"tools\":[{\"name\":\"x\"}]}}",
		"\xef\xbb\xbf{\"name\":\"b\",\"parameters\":{\"properties\":{\"q\":{\"pattern\":\"(?!x)\"}}}}\r\n",
		"[\n{\"name\":\"a\"},\n",
		"{\"name\":\"a\",\"inputSchema\":{\"$ref\":\"#/$defs/x\",\"$defs\":{\"x\":{\"type\":\"object\"}}}}",
		"{\"name\":\"a\",\"inputSchema\":{}}\n{\"name\":\"b\",\"inputSchema\":{\"$ref\":\"urn:toolgate:input-schema:1\"}}",
		"{\"name\":\"a\",\"inputSchema\":{\"$id\":\"urn:x\"}}\n{\"name\":\"b\",\"inputSchema\":{\"$ref\":\"urn:x\"}}",
		"{\"name\":\"a\",\"scopes\":[\"admin\"],\"scopes\":[]}\n{\"name\":\"b\"}",
		"{\"tools\":[{\"name\":\"a\",\"inputSchema\":{\"properties\":{\"x\":{\"type\":\"string\",\"type\":\"integer\"}}}}],\"tools\":[]}",
		"[{\"name\":\"a\",\"inputSchema\":{\"items\":{\"items\":{\"items\":{}}}}}]",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ts, err := Parse(strings.NewReader(in), "f.jsonl", "ns")
		seen := map[string]bool{}
		for _, tool := range ts {
			if verr := tool.Validate(); verr != nil {
				t.Fatalf("Parse(%q) returned an invalid tool: %v", in, verr)
			}
			if seen[tool.ID] {
				t.Fatalf("Parse(%q) returned %s twice", in, tool.ID)
			}
			seen[tool.ID] = true
			if tool.InputSchema != nil {
				if serr := tools.CheckInputSchema(tool.InputSchema); serr != nil {
					t.Fatalf("Parse(%q) returned %s with a bad schema: %v", in, tool.ID, serr)
				}
			}
		}
		if err == nil {
			return
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if !lineErr.MatchString(line) {
				t.Fatalf("Parse(%q) error line %q is not FILE:LINE: reason", in, line)
			}
		}
	})
}

// TestReadSized: a file read into a buffer of the size it had when
// measured reads the same whether it has that size still, grew or shrank
// since, and the size limit holds either way.
func TestReadSized(t *testing.T) {
	content := "{\"name\":\"a\"}\n{\"name\":\"b\"}\n{\"name\":\"c\"}\n"
	tests := []struct {
		name  string
		size  int64 // as measured
		limit int64
		tools int
		err   string
	}{
		{"same size", int64(len(content)), 1 << 20, 3, ""},
		{"grew", 13, 1 << 20, 3, ""},
		{"shrank", int64(len(content)) + 100, 1 << 20, 3, ""},
		{"empty", 0, 1 << 20, 3, ""},
		{"grew past the limit", 13, 30, 0, "catalog is larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := read(&sizedReader{strings.NewReader(content), tt.size}, "f.jsonl", "ns", tt.limit, nil)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("read = %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil || p == nil || len(p.tools) != tt.tools {
				t.Fatalf("read = %v, %v; want %d tools", p, err, tt.tools)
			}
		})
	}
}

// TestParseLinesParallel: a JSON Lines file big enough to be parsed in
// parts gives the tools and the errors, with their lines, that one part
// gives, whatever the CPUs.
func TestParseLinesParallel(t *testing.T) {
	var b strings.Builder
	pad := strings.Repeat("x", 600)
	for i := 0; b.Len() < 3*parallelLinesPart+1000; i++ {
		switch i % 997 {
		case 0:
			b.WriteString("\r\n") // a blank line
		case 1:
			fmt.Fprintf(&b, "{\"name\":\"bad%d\",\"name\":\"dup\"}\n", i)
		case 2:
			fmt.Fprintf(&b, "{\"name\":\"t%d\",\"inputSchema\":{\"type\":\"strin\"}}\r\n", i)
		case 3:
			b.WriteString("{\"name\": \"broken\"\n")
		default:
			fmt.Fprintf(&b, "{\"name\":\"t%d\",\"description\":\"%s\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"p%d\":{\"type\":\"string\"}}}}\n", i, pad, i%50)
		}
	}
	b.WriteString(`{"name":"last"}`) // no final newline
	in := b.String()
	var want []string
	for _, procs := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			ids, errText := parseNames(t, in)
			got := append(ids, strings.Split(errText, "\n")...)
			if len(ids) < 10_000 || !strings.Contains(errText, "cat.jsonl:") || ids[len(ids)-1] != "ns/last" {
				t.Fatalf("%d tools (last %q), errors %.200q", len(ids), ids[len(ids)-1], errText)
			}
			if want == nil {
				want = got
				return
			}
			if !slices.Equal(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("item %d: %q, with one CPU %q", i, got[i], want[i])
					}
				}
				t.Fatalf("%d items, with one CPU %d", len(got), len(want))
			}
		})
	}
}

func TestTools(t *testing.T) {
	a := []tools.Tool{{ID: "a/1"}, {ID: "a/2"}}
	b := []tools.Tool{{ID: "b/1"}}
	tests := []struct {
		name  string
		files []File
		want  []string
	}{
		{"none", nil, []string{}},
		{"one", []File{{Tools: a}}, []string{"a/1", "a/2"}},
		{"several", []File{{Tools: a}, {}, {Tools: b}}, []string{"a/1", "a/2", "b/1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Tools(tt.files)
			ids := []string{}
			for _, tool := range got {
				ids = append(ids, tool.ID)
			}
			if !slices.Equal(ids, tt.want) {
				t.Fatalf("Tools = %v, want %v", ids, tt.want)
			}
			if len(tt.files) == 1 && &got[0] != &a[0] {
				t.Error("one file's tools were copied")
			}
		})
	}
}

// TestLoadFilesNamespaceCollision: two files whose tools would silently
// share a namespace, one that a file's name gave, are refused, naming
// both; "NS=" shares one on purpose.
func TestLoadFilesNamespaceCollision(t *testing.T) {
	dir := t.TempDir()
	n := 0
	write := func(name string) string {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		n++ // a tool name of its own: a merge would be silent
		if err := os.WriteFile(path, fmt.Appendf(nil, "{\"name\":\"t%d\"}\n", n), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ber, uber := write("ber.json"), write("über.json")
	kanji1, kanji2 := write("工具.json"), write("道具.json")
	tools1, tools2 := write("a/tools.json"), write("b/tools.json")
	tests := []struct {
		name  string
		specs []string
		want  string // in the error; "" for none
	}{
		{"non-ASCII stem beside its ASCII rest", []string{ber, uber}, uber + `: namespace "ber", from the file's name, is also "` + ber + `"'s; give one of them its own namespace with --tools NS=FILE`},
		{"two stems with no usable character", []string{kanji1, kanji2}, kanji2 + `: the file's name has no character a namespace may hold (A-Z a-z 0-9 _ . -), so its namespace would be "catalog", which is also "` + kanji1 + `"'s`},
		{"same stem in two folders", []string{tools1, tools2}, tools2 + `: namespace "tools", from the file's name, is also "` + tools1 + `"'s`},
		{"NS= beside a changed stem", []string{"ber=" + ber, uber}, uber + `: namespace "ber", from the file's name, is also "` + ber + `"'s`},
		{"NS= after the fallback", []string{kanji1, "catalog=" + ber}, ber + `: namespace "catalog" is also "` + kanji1 + `"'s (the fallback for a name with no character a namespace may hold)`},
		{"NS= after a changed stem", []string{uber, "ber=" + ber}, ber + `: namespace "ber" is also "` + uber + `"'s, from that file's name`},
		{"NS= told apart", []string{ber, "u=" + uber}, ""},
		{"NS= beside the same stem", []string{ber, "ber=" + uber}, ""},
		{"NS= twice", []string{"x=" + ber, "x=" + uber}, ""},
		{"fallback alone", []string{kanji1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := LoadFiles(tt.specs...)
			if len(files) != len(tt.specs) {
				t.Errorf("LoadFiles(%q) = %d files; want %d", tt.specs, len(files), len(tt.specs))
			}
			check := func(load string, err error) {
				t.Helper()
				switch {
				case tt.want == "" && err != nil:
					t.Errorf("%s(%q): %v; want no error", load, tt.specs, err)
				case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
					t.Errorf("%s(%q): %v; want an error holding %s", load, tt.specs, err, tt.want)
				}
			}
			check("LoadFiles", err)
			_, _, err = LoadFilesCached(filepath.Join(t.TempDir(), "cache"), tt.specs...)
			check("LoadFilesCached", err)
		})
	}
}

// TestLoadFilesBadNamespace: a spec whose part before '=' is empty or not
// a valid namespace is reported as such, unless a file is named the
// whole spec, which loads as ParseSpec promises.
func TestLoadFilesBadNamespace(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("{\"name\":\"x\"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	f, withEq := write("f.json"), write("a=b.json")
	pattern := `must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`
	tests := []struct {
		name, spec string
		want       string // the error; "" for none
	}{
		{"separator", "a/b=" + f, `--tools "a/b=` + f + `": namespace "a/b" is not valid: ` + pattern + ` (and no file is named "a/b=` + f + `")`},
		{"empty", "=" + f, `--tools "=` + f + `": namespace "" is not valid: ` + pattern + ` (and no file is named "=` + f + `")`},
		{"missing file too", "a/b=nope.json", `--tools "a/b=nope.json": namespace "a/b" is not valid: ` + pattern + ` (and no file is named "a/b=nope.json")`},
		{"path holding '='", withEq, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadFiles(tt.spec)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("LoadFiles(%q): %s; want %s", tt.spec, got, tt.want)
			}
			_, _, err = LoadFilesCached(filepath.Join(t.TempDir(), "cache"), tt.spec)
			if got = ""; err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("LoadFilesCached(%q): %s; want %s", tt.spec, got, tt.want)
			}
		})
	}
}
