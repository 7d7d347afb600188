package mcpserver_test

import (
	"testing"

	"github.com/toolgate/toolgate/tools"
)

// TestCallToolGoneToolReplays: a call_tool re-sent with the same step
// after its tool left the catalog gets the call's outcome ("cached":
// true), by the name the session listed (bound to the tool's ID for the
// session) or by the ID, not UNKNOWN_TOOL, which says that nothing ran;
// another step of it is a new call, and UNKNOWN_TOOL.
func TestCallToolGoneToolReplays(t *testing.T) {
	reg := tools.NewRegistry()
	if err := reg.Add(namedTool("github/delete_repository", "repo:admin")); err != nil {
		t.Fatal(err)
	}
	cs := namesStack(t, reg, deleter, 0)
	selectTools(t, cs, "github/delete_repository") // listed as delete_repository
	first, isErr := callTool(t, cs, map[string]any{"name": "delete_repository", "step": 1})
	if isErr || first["cached"] != false {
		t.Fatalf("call_tool delete_repository = %v, want a fresh result", first)
	}
	if err := reg.ReplaceNamespace("github", nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"delete_repository", "github/delete_repository"} {
		t.Run(name, func(t *testing.T) {
			out, isErr := callTool(t, cs, map[string]any{"name": name, "step": 1})
			res, _ := out["result"].(map[string]any)
			if isErr || out["cached"] != true || res["ran"] != "github/delete_repository" {
				t.Errorf("call_tool %s at step 1 after its tool left = %v, want the first result, cached", name, out)
			}
		})
	}
	if out, isErr := callTool(t, cs, map[string]any{"name": "delete_repository", "step": 2}); !isErr || out["error_type"] != "UNKNOWN_TOOL" {
		t.Errorf("call_tool delete_repository at step 2 = %v, want UNKNOWN_TOOL", out)
	}
}
