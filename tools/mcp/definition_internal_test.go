package mcp

import (
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/tools"
)

// TestDefinitionAnnotations: a server's tool read as a catalog file's is
// (tools/catalog's TestAnnotationDefaults): an annotations object without
// destructiveHint makes a tool that is not read-only irreversible, MCP's
// default; no annotations, no hints. An override's flag then replaces the
// annotations', and a tool the operator makes irreversible is not
// read-only, whatever the server says.
func TestDefinitionAnnotations(t *testing.T) {
	no, yes := false, true
	for _, tc := range []struct {
		name                   string
		ann                    *sdk.ToolAnnotations
		o                      ToolOverride
		readOnly, irreversible bool
	}{
		{"none", nil, ToolOverride{}, false, false},
		{"readOnlyHint false alone", &sdk.ToolAnnotations{}, ToolOverride{}, false, true},
		{"title only", &sdk.ToolAnnotations{Title: "Reset"}, ToolOverride{}, false, true},
		{"destructiveHint false", &sdk.ToolAnnotations{DestructiveHint: &no}, ToolOverride{}, false, false},
		{"destructiveHint true", &sdk.ToolAnnotations{DestructiveHint: &yes}, ToolOverride{}, false, true},
		{"read-only", &sdk.ToolAnnotations{ReadOnlyHint: true}, ToolOverride{}, true, false},
		{"override: irreversible over readOnlyHint", &sdk.ToolAnnotations{ReadOnlyHint: true}, ToolOverride{Irreversible: &yes}, false, true},
		{"override: both set, irreversible wins", &sdk.ToolAnnotations{}, ToolOverride{ReadOnly: &yes, Irreversible: &yes}, false, true},
		{"override: not irreversible keeps readOnlyHint", &sdk.ToolAnnotations{ReadOnlyHint: true}, ToolOverride{Irreversible: &no}, true, false},
		{"override: not read-only keeps destructiveHint", &sdk.ToolAnnotations{DestructiveHint: &yes}, ToolOverride{ReadOnly: &no}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def, err := definition(&sdk.Tool{Name: "git_reset", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: tc.ann})
			if err != nil {
				t.Fatal(err)
			}
			tool, err := tools.Define("git", def)
			if err != nil {
				t.Fatal(err)
			}
			tc.o.apply(&tool.Card)
			if tool.Card.ReadOnly != tc.readOnly || tool.Card.Irreversible != tc.irreversible {
				t.Errorf("annotations %+v, override %+v: read-only %v, irreversible %v; want %v, %v",
					tc.ann, tc.o, tool.Card.ReadOnly, tool.Card.Irreversible, tc.readOnly, tc.irreversible)
			}
		})
	}
}
