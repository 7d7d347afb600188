package mcpserver_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/internal/runtimetest"
	"github.com/toolgate/toolgate/runtime/mcpserver"
	"github.com/toolgate/toolgate/tools"
)

// namedTool is a tool whose handler answers {"ran": its ID}, so a call
// shows which tool it reached.
func namedTool(id string, scopes ...string) tools.Tool {
	_, name, _ := strings.Cut(id, "/")
	return tools.Tool{ID: id, Card: tools.Card{Name: name, Summary: "Delete a repository", Scopes: scopes},
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.Marshal(map[string]string{"ran": id})
		}}
}

// namesStack serves reg over stdio as p and returns the client.
func namesStack(t *testing.T, reg *tools.Registry, p tools.Principal, maxFirstClass int) *sdk.ClientSession {
	t.Helper()
	gw, disc := runtimetest.Stack(t, reg, &gateway.Options{Logger: quiet})
	return serveStdio(t, t.Context(), reg, disc, gw, &mcpserver.Options{Principal: p, Logger: quiet, MaxFirstClass: maxFirstClass})
}

// TestBareNamesResolveForEveryoneAlike: a bare name that several tools of
// the tenant share is refused for every caller, in call_tool and in
// find_tools' select:, even for a caller who may use only one of them;
// the refusal (select:'s "ambiguous") names only tools the caller may use,
// and a caller who may use none gets UNKNOWN_TOOL (select:'s "missing")
// (docs/design.md invariant 8).
func TestBareNamesResolveForEveryoneAlike(t *testing.T) {
	reg := tools.NewRegistry()
	if err := reg.Add(namedTool("github/delete_repository", "github:admin"), namedTool("gitlab/delete_repository", "gitlab:admin"),
		namedTool("github/list_issues", "github:read")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		scopes     []string
		call       string
		typ        string // "" for a call that runs
		candidates []string
	}{
		{"may use both", []string{"github:admin", "gitlab:admin"}, "delete_repository", "VALIDATION_ERROR", []string{"github/delete_repository", "gitlab/delete_repository"}},
		{"may use one", []string{"github:admin"}, "delete_repository", "VALIDATION_ERROR", []string{"github/delete_repository"}},
		{"may use the other", []string{"gitlab:admin"}, "delete_repository", "VALIDATION_ERROR", []string{"gitlab/delete_repository"}},
		{"may use none", []string{"github:read"}, "delete_repository", "UNKNOWN_TOOL", nil},
		{"an ID", []string{"github:admin"}, "github/delete_repository", "", nil},
		{"a bare name one tool has", []string{"github:read"}, "list_issues", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := namesStack(t, reg, tools.Principal{ID: "dev", Tenant: "acme", Scopes: tc.scopes}, 0)
			out, isErr := callTool(t, cs, map[string]any{"name": tc.call})
			if tc.typ == "" {
				if isErr || out["success"] != true {
					t.Errorf("call_tool %s = %v, want success", tc.call, out)
				}
				return
			}
			var got []string
			for _, c := range asAnySlice(out["candidates"]) {
				got = append(got, c.(string))
			}
			if !isErr || out["error_type"] != tc.typ || !slices.Equal(got, tc.candidates) {
				t.Errorf("call_tool %s = %v, want %s with candidates %v", tc.call, out, tc.typ, tc.candidates)
			}
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "select:" + tc.call}})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*sdk.TextContent).Text
			if strings.Contains(text, `"name":"`) {
				t.Errorf("find_tools select:%s = %s, want no tool loaded", tc.call, text)
			}
			// The answer names the caller's candidates, as call_tool's refusal does.
			var answer struct{ Ambiguous map[string][]string }
			if err := json.Unmarshal([]byte(text), &answer); err != nil || !slices.Equal(answer.Ambiguous[tc.call], tc.candidates) {
				t.Errorf("find_tools select:%s = %s, want %v named as ambiguous", tc.call, text, tc.candidates)
			}
		})
	}
}

func asAnySlice(v any) []any {
	s, _ := v.([]any)
	return s
}
