package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

func TestFirstSentence(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"Get the weather.", "Get the weather."},
		{"Get the weather. Then more.", "Get the weather."},
		{"Read a file from disk, e.g. a log. More text.", "Read a file from disk, e.g. a log."},
		{"Planning something outdoors? Get the 2-day forecast. Extra.", "Planning something outdoors? Get the 2-day forecast."},
		{"Hi. Create an issue in a repo. More.", "Hi. Create an issue in a repo."},
		{"List files\nin the directory.", "List files"},
		{"Version 1.2 of the   parser reads files. Next.", "Version 1.2 of the parser reads files."},
		{strings.Repeat("word ", 40), strings.TrimSpace(strings.Repeat("word ", 30)) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := FirstSentence(tt.in); got != tt.want {
				t.Errorf("FirstSentence(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDefineCard(t *testing.T) {
	tests := []struct {
		name string
		def  Definition
		want Card
	}{
		{"summary from the description",
			Definition{Name: "a", Description: "  Send a mail now. It goes at once.  "},
			Card{Name: "a", Summary: "Send a mail now."}},
		{"explicit summary wins",
			Definition{Name: "a", Summary: " Mail someone ", Description: "Long text here."},
			Card{Name: "a", Summary: "Mail someone"}},
		{"summary from the title without a description",
			Definition{Name: "git_stash", Title: " Stash changes "},
			Card{Name: "git_stash", Summary: "Stash changes"}},
		{"a description outweighs the title",
			Definition{Name: "a", Title: "Mail", Description: "Send a mail now."},
			Card{Name: "a", Summary: "Send a mail now."}},
		{"destructive hint: irreversible",
			Definition{Name: "a", Annotations: &Annotations{DestructiveHint: true, IdempotentHint: true, OpenWorldHint: true}},
			Card{Name: "a", Irreversible: true, Idempotent: true, OpenWorld: true}},
		{"read-only hint outweighs destructive hint",
			Definition{Name: "a", Annotations: &Annotations{ReadOnlyHint: true, DestructiveHint: true}},
			Card{Name: "a", ReadOnly: true}},
		{"explicit flags join the hints",
			Definition{Name: "a", Irreversible: true, Annotations: &Annotations{IdempotentHint: true}},
			Card{Name: "a", Irreversible: true, Idempotent: true}},
		{"card lists kept",
			Definition{Name: "a", Scopes: []string{"s"}, Aliases: []string{"x y"}, Tags: []string{"t"}, NotFor: " n ", Group: " g "},
			Card{Name: "a", Scopes: []string{"s"}, Aliases: []string{"x y"}, Tags: []string{"t"}, NotFor: "n", Group: "g"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Define("ns", tt.def)
			if err != nil {
				t.Errorf("%s: Define(%+v) error = %v", tt.name, tt.def, err)
				return
			}
			if got.ID != "ns/"+tt.def.Name || !reflect.DeepEqual(got.Card, tt.want) {
				t.Errorf("%s: Define(%+v) = %s %+v, want ns/%s %+v", tt.name, tt.def, got.ID, got.Card, tt.def.Name, tt.want)
			}
		})
	}
}

func TestDefineErrors(t *testing.T) {
	deep := strings.Repeat(`{"properties":{"a":`, 40) + "{}" + strings.Repeat("}}", 40)
	tests := []struct {
		name      string
		ns        string
		def       Definition
		field     DefinitionField // the DefinitionError's Field; "" for a namespace error
		wantError string
	}{
		{"bad namespace", "a/b", Definition{Name: "x"}, "",
			`tools: invalid tool: invalid namespace "a/b": must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`},
		{"blank name", "ns", Definition{Name: " "}, "name", `tools: invalid tool " ": "name" is empty`},
		{"control character", "ns", Definition{Name: "a\nb"}, "name", `tools: invalid tool "a\nb": tool name "a\nb": character 2 is U+000A, a control character`},
		{"blank scope", "ns", Definition{Name: "a", Scopes: []string{"x", " "}}, "scopes", `tools: invalid tool "a": "scopes" holds an empty scope`},
		{"contradicting risk", "ns", Definition{Name: "a", Irreversible: true, Annotations: &Annotations{ReadOnlyHint: true}}, "read_only",
			`tools: invalid tool "a": "read_only" and "irreversible" contradict each other`},
		{"schema not an object", "ns", Definition{Name: "a", InputSchema: json.RawMessage(`[]`)}, "inputSchema",
			`tools: invalid tool "a": invalid "inputSchema": not a JSON object`},
		{"duplicate member deep in the schema", "ns", Definition{Name: "a", InputSchema: json.RawMessage(`{"properties":{"x":{"type":"string","type":"integer"}}}`)}, "inputSchema",
			`tools: invalid tool "a": invalid "inputSchema": not valid JSON: duplicate member name "type"`},
		{"schema too deep", "ns", Definition{Name: "a", InputSchema: json.RawMessage(deep)}, "inputSchema",
			`tools: invalid tool "a": invalid "inputSchema": nested deeper than 64 levels`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Define(tt.ns, tt.def)
			if err == nil || err.Error() != tt.wantError || !errors.Is(err, ErrInvalidTool) {
				t.Errorf("%s: Define error = %v, want %s (wrapping ErrInvalidTool)", tt.name, err, tt.wantError)
				return
			}
			var de *DefinitionError
			if got := errors.As(err, &de); got != (tt.field != "") || got && de.Field != tt.field {
				t.Errorf("%s: Define error %v: DefinitionError field = %+v, want %q", tt.name, err, de, tt.field)
			}
			if tt.field == FieldInputSchema && !errors.Is(err, ErrInvalidSchema) {
				t.Errorf("%s: Define error %v does not wrap ErrInvalidSchema", tt.name, err)
			}
		})
	}
}

// TestDefineAllMatchesDefine: the shared compiler of [DefineAll] gives every
// definition the result Define gives it alone.
func TestDefineAllMatchesDefine(t *testing.T) {
	defs := []Definition{
		{Name: "a", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","pattern":"^[a-z]+$"}}}`)},
		{Name: "b", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"minimum":"x"}}}`)},
		{Name: "c", InputSchema: json.RawMessage(`{"$ref":"urn:toolgate:input-schema:1"}`)},
		{Name: "d", InputSchema: json.RawMessage(`{"$id":"urn:x","type":"object"}`)},
		{Name: "e"},
	}
	ts, errs := DefineAll("ns", defs)
	if len(ts) != len(defs) || len(errs) != len(defs) {
		t.Fatalf("DefineAll returned %d tools, %d errors for %d definitions", len(ts), len(errs), len(defs))
	}
	for i, d := range defs {
		t.Run(d.Name, func(t *testing.T) {
			want, wantErr := Define("ns", d)
			if fmt.Sprint(errs[i]) != fmt.Sprint(wantErr) || !reflect.DeepEqual(ts[i], want) {
				t.Errorf("DefineAll[%d] = %+v, %v; Define = %+v, %v", i, ts[i], errs[i], want, wantErr)
			}
		})
	}
	if errs[0] != nil || errs[1] == nil || errs[2] == nil || errs[3] != nil || errs[4] != nil {
		t.Errorf("DefineAll errors = %v, want only b and c rejected", errs)
	}
}

// mixedDefs returns n definitions t0, t1, ... whose schemas cycle with
// period mod: i%mod == 0 one valid schema shared by all, 3 one invalid
// schema shared by all, mod-1 invalid(i), others a valid schema of their
// own.
func mixedDefs(n, mod int, invalid func(i int) string) []Definition {
	good := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
	bad := json.RawMessage(`{"type":"object","properties":{"n":{"minimum":"x"}}}`)
	defs := make([]Definition, n)
	for i := range defs {
		schema := json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"p%d":{"type":"string"}}}`, i))
		switch i % mod {
		case 0:
			schema = good
		case 3:
			schema = bad
		case mod - 1:
			schema = json.RawMessage(invalid(i))
		}
		defs[i] = Definition{Name: fmt.Sprintf("t%d", i), InputSchema: schema}
	}
	return defs
}

// TestDefineAllRepeatedSchemas: a schema seen before gets the result it
// got then, whether it passed or failed, and more schemas than one shared
// compiler takes (sharedSchemas) are each checked as Define checks them;
// the tools of one schema share one copy of it.
func TestDefineAllRepeatedSchemas(t *testing.T) {
	defs := mixedDefs(2*sharedSchemas+10, 7, func(i int) string {
		return fmt.Sprintf(`{"type":"object","properties":{"p%d":{"type":"strin"}}}`, i)
	})
	ts := defineAllLikeDefine(t, defs, 7)
	for i := range defs {
		// The tools of one schema share its compact form.
		if i%7 == 0 && i > 0 && &ts[i].InputSchema[0] != &ts[0].InputSchema[0] {
			t.Fatalf("DefineAll[%d] has its own copy of the schema DefineAll[0] has", i)
		}
	}
}

// defineAllLikeDefine calls [DefineAll] on defs from mixedDefs(_, mod, _)
// and fails t unless each result is Define's, and an error exactly where
// mixedDefs put an invalid schema.
func defineAllLikeDefine(t *testing.T, defs []Definition, mod int) []Tool {
	t.Helper()
	ts, errs := DefineAll("ns", defs)
	for i, d := range defs {
		want, wantErr := Define("ns", d)
		if fmt.Sprint(errs[i]) != fmt.Sprint(wantErr) || !reflect.DeepEqual(ts[i], want) {
			t.Fatalf("DefineAll[%d] (%s) = %v; Define = %v", i, d.InputSchema, errs[i], wantErr)
		}
		if wantOK := i%mod != 3 && i%mod != mod-1; (errs[i] == nil) != wantOK {
			t.Fatalf("DefineAll[%d] (%s) error = %v, want ok %v", i, d.InputSchema, errs[i], wantOK)
		}
	}
	return ts
}

// TestDefineAllParallel: a defs long enough to be cut into parts gives,
// definition by definition, what Define gives, whatever the CPUs.
func TestDefineAllParallel(t *testing.T) {
	defs := mixedDefs(3*defineAllPart+17, 5, func(i int) string {
		return fmt.Sprintf(`{"$id":"urn:t%d","type":"object","properties":{"q":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"strin"}}}`, i%3)
	})
	for _, procs := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			defineAllLikeDefine(t, defs, 5)
		})
	}
}

// TestDefineAllSchemaAddresses: a schema that starts where one already
// checked starts, but is longer, is checked on its own.
func TestDefineAllSchemaAddresses(t *testing.T) {
	buf := []byte(`{"type":"object"}}`)
	defs := []Definition{{Name: "a", InputSchema: buf[:17]}, {Name: "b", InputSchema: buf[:17]}, {Name: "c", InputSchema: buf}}
	ts, errs := DefineAll("ns", defs)
	if errs[0] != nil || errs[1] != nil || &ts[0].InputSchema[0] != &ts[1].InputSchema[0] {
		t.Fatalf("a and b: %v, %v (one compact copy: %v)", errs[0], errs[1], errs[0] == nil && errs[1] == nil && &ts[0].InputSchema[0] == &ts[1].InputSchema[0])
	}
	if errs[2] == nil {
		t.Errorf("c's schema %s is not JSON, DefineAll accepted it as %s", buf, ts[2].InputSchema)
	}
}

// TestDefineAllSharesBlocks: the tools of one [DefineAll] part have their
// strings and compact schemas cut from shared blocks, one after the other,
// and a card's name is the tail of the ID: a big catalog is a few big
// allocations rather than a million small ones among the garbage of the
// schema checks (chunks).
func TestDefineAllSharesBlocks(t *testing.T) {
	defs := make([]Definition, 4)
	for i := range defs {
		defs[i] = Definition{
			Name:        fmt.Sprintf("tool_%d", i),
			Description: fmt.Sprintf("Does thing number %d for you.", i),
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type": "object", "properties": {"p%d": {"type": "string"}}}`, i)),
		}
	}
	ts, errs := DefineAll("ns", defs)
	end := func(s string) *byte { return unsafe.StringData(s[len(s)-1:]) }
	for i, tl := range ts {
		if errs[i] != nil {
			t.Fatalf("DefineAll[%d]: %v", i, errs[i])
		}
		if unsafe.StringData(tl.Card.Name) != unsafe.StringData(tl.ID[len("ns/"):]) {
			t.Errorf("DefineAll[%d].Card.Name %q is a copy, want the tail of the ID %q", i, tl.Card.Name, tl.ID)
		}
		if unsafe.StringData(tl.Card.Summary) != unsafe.StringData(tl.Description) {
			t.Errorf("DefineAll[%d].Card.Summary %q is a copy, want the description's %q", i, tl.Card.Summary, tl.Description)
		}
		if i == 0 {
			continue
		}
		prev := ts[i-1]
		if got := unsafe.StringData(tl.ID); uintptr(unsafe.Pointer(got)) != uintptr(unsafe.Pointer(end(prev.Description)))+1 {
			t.Errorf("DefineAll[%d].ID %q is not next to DefineAll[%d].Description %q", i, tl.ID, i-1, prev.Description)
		}
		if got := &tl.InputSchema[0]; uintptr(unsafe.Pointer(got)) != uintptr(unsafe.Pointer(&prev.InputSchema[len(prev.InputSchema)-1]))+1 {
			t.Errorf("DefineAll[%d].InputSchema %s is not next to DefineAll[%d]'s %s", i, tl.InputSchema, i-1, prev.InputSchema)
		}
		if cap(prev.InputSchema) != len(prev.InputSchema) {
			t.Errorf("DefineAll[%d].InputSchema has room to grow over its neighbour: cap %d, len %d", i-1, cap(prev.InputSchema), len(prev.InputSchema))
		}
	}
}

// TestDefineRelativeIDs: a subschema's relative $id (draft-04's id), as
// real schemas write them, is accepted alone and in [DefineAll]; it was
// resolved onto the root's own name and refused as a "duplicate id".
func TestDefineRelativeIDs(t *testing.T) {
	tests := []struct{ name, schema string }{
		{"sibling ids", `{"type":"object","properties":{"a":{"$id":"a","type":"string"},"b":{"$id":"b","type":"integer"}}}`},
		{"ref by id", `{"type":"object","definitions":{"n":{"$id":"n","type":"integer"}},"properties":{"x":{"$ref":"n"}}}`},
		{"draft-04 id", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"a":{"id":"a","type":"string"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := Definition{Name: "t", InputSchema: json.RawMessage(tt.schema)}
			if _, err := Define("ns", def); err != nil {
				t.Errorf("Define(%s) = %v, want accepted", tt.schema, err)
			}
			if _, errs := DefineAll("ns", []Definition{def}); errs[0] != nil {
				t.Errorf("DefineAll(%s) = %v, want accepted", tt.schema, errs[0])
			}
		})
	}
	_, err := Define("ns", Definition{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$id":"a"},"b":{"$id":"a"}}}`)})
	if !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "duplicate id") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Define with two subschemas of $id a = %v, want one line: duplicate id", err)
	}
}
