package mcpserver_test

import (
	"slices"
	"testing"

	"github.com/toolgate/toolgate/tools"
)

// TestCallToolTakesListedNames: call_tool takes the names this session
// listed (mapped through its bindings, so a listed name reaches the tool
// it was listed for, even once its bare name is shared), besides IDs and
// bare names only one tool has; a qualified name the session has not
// listed is unknown, and so is a listed name whose tool left the catalog,
// even when another tool is now the only one with that bare name. On main
// call_tool refused the listed names (UNKNOWN_TOOL for
// gitlab__delete_repository, ambiguous for delete_repository) and ran
// bitbucket's tool for delete_repository once GitHub's had left.
func TestCallToolTakesListedNames(t *testing.T) {
	reg := tools.NewRegistry()
	if err := reg.Add(namedTool("github/delete_repository", "repo:admin"), namedTool("github/list_issues", "repo:admin")); err != nil {
		t.Fatal(err)
	}
	cs := namesStack(t, reg, deleter, 0)
	selectTools(t, cs, "github/delete_repository") // listed as delete_repository
	if err := reg.Add(namedTool("gitlab/delete_repository", "repo:admin"), namedTool("bitbucket/delete_repository", "repo:admin")); err != nil {
		t.Fatal(err)
	}
	selectTools(t, cs, "gitlab/delete_repository") // listed as gitlab__delete_repository
	if got := firstClass(t, cs); !slices.Equal(got, []string{"delete_repository", "gitlab__delete_repository"}) {
		t.Fatalf("first-class tools = %v, want [delete_repository gitlab__delete_repository]", got)
	}
	check := func(t *testing.T, call, ran, typ string) {
		t.Helper()
		out, isErr := callTool(t, cs, map[string]any{"name": call})
		if typ != "" {
			if !isErr || out["error_type"] != typ {
				t.Errorf("call_tool %s = %v, want %s", call, out, typ)
			}
			return
		}
		res, _ := out["result"].(map[string]any)
		if isErr || res["ran"] != ran {
			t.Errorf("call_tool %s = %v, want %s run", call, out, ran)
		}
	}
	tests := []struct {
		name, call string
		ran        string // the tool run
		typ        string // the refusal, when it is refused
	}{
		{"listed bare name, shared since", "delete_repository", "github/delete_repository", ""},
		{"listed qualified name", "gitlab__delete_repository", "gitlab/delete_repository", ""},
		{"ID", "bitbucket/delete_repository", "bitbucket/delete_repository", ""},
		{"bare name one tool has", "list_issues", "github/list_issues", ""},
		{"qualified name not listed", "bitbucket__delete_repository", "", "UNKNOWN_TOOL"},
		{"qualified name of a tool listed bare", "github__delete_repository", "", "UNKNOWN_TOOL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.call, tc.ran, tc.typ) })
	}
	t.Run("listed name whose tool left", func(t *testing.T) {
		// GitHub's and GitLab's servers go: bitbucket's tool is now the only
		// delete_repository of the catalog.
		if err := reg.ReplaceNamespace("github", nil); err != nil {
			t.Fatal(err)
		}
		if err := reg.ReplaceNamespace("gitlab", nil); err != nil {
			t.Fatal(err)
		}
		check(t, "delete_repository", "", "UNKNOWN_TOOL")
		check(t, "gitlab__delete_repository", "", "UNKNOWN_TOOL")
	})
}
