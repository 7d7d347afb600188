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
// default; no annotations, no hints.
func TestDefinitionAnnotations(t *testing.T) {
	no, yes := false, true
	for _, tc := range []struct {
		name         string
		ann          *sdk.ToolAnnotations
		irreversible bool
	}{
		{"none", nil, false},
		{"readOnlyHint false alone", &sdk.ToolAnnotations{}, true},
		{"title only", &sdk.ToolAnnotations{Title: "Reset"}, true},
		{"destructiveHint false", &sdk.ToolAnnotations{DestructiveHint: &no}, false},
		{"destructiveHint true", &sdk.ToolAnnotations{DestructiveHint: &yes}, true},
		{"read-only", &sdk.ToolAnnotations{ReadOnlyHint: true}, false},
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
			if tool.Card.Irreversible != tc.irreversible {
				t.Errorf("annotations %+v: irreversible %v, want %v", tc.ann, tool.Card.Irreversible, tc.irreversible)
			}
		})
	}
}
