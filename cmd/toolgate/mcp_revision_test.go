package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/runtime/mcpserver"
	"github.com/toolgate/toolgate/tools"
)

// TestMCPServeRevisionsApprove runs the real `toolgate mcp serve --http`
// process over a real upstream MCP server (server-memory, whose
// delete_entities the --mcp-config marks irreversible) with a token file
// of a requester and an approver, on --data. A client of each revision
// (the Go SDK's, 2026-07-28 stateless and 2025-11-25 with sessions, then
// 2025-06-18) lists, searches, calls, and has the irreversible call
// approved in-band by the approver's own request: the call completes
// once, and the request-state key persists in --data.
func TestMCPServeRevisionsApprove(t *testing.T) {
	memory := memoryServer(t)
	dir := t.TempDir()
	write := func(name, text string) string { return testenv.WriteFile(t, dir, name, text) }
	config := write("mcp.json", `{"servers":{"memory":{"command":["node",`+jsonString(memory)+`],`+
		`"env":{"MEMORY_FILE_PATH":`+jsonString(filepath.Join(dir, "memory.jsonl"))+`},`+
		`"tools":{"delete_entities":{"irreversible":true}}}}}`)
	tokens := write("tokens.json", `{"tokens":{"tok-alice":{"principal":"alice","tenant":"acme","scopes":[]},`+
		`"tok-ops":{"principal":"ops","tenant":"acme","scopes":["approvals:grant"]}}}`)
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	base, logs := startMCPHTTP(t, ctx, buildToolgate(t), "--mcp-config", config, "--tokens", tokens, "--data", data)

	grant := func(id, token string) int {
		resp, _ := testenv.Post(t, ctx, base+mcpserver.ApprovalsPath+id, token, "")
		return resp.StatusCode
	}
	approvalID := regexp.MustCompile(`apr_[A-Za-z0-9_-]+`)
	for i, rev := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		t.Run(rev, func(t *testing.T) {
			hc := bearerClient("tok-alice")
			var self, ops int
			client := sdk.NewClient(&sdk.Implementation{Name: "revision-test", Version: "1"}, &sdk.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					id := approvalID.FindString(req.Params.Message)
					self, ops = grant(id, "tok-alice"), grant(id, "tok-ops")
					return &sdk.ElicitResult{Action: "accept"}, nil
				},
			})
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/", HTTPClient: hc}, &sdk.ClientSessionOptions{ProtocolVersion: rev})
			if err != nil {
				t.Fatalf("connect: %v\n%s", err, logs.String())
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != rev {
				t.Errorf("negotiated %s, want %s", got, rev)
			}
			call := func(name string, args map[string]any) map[string]any {
				t.Helper()
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				var out map[string]any
				text := res.Content[0].(*sdk.TextContent).Text
				if json.Unmarshal([]byte(text), &out) != nil {
					t.Fatalf("%s answered %q", name, text)
				}
				return out
			}
			if tl, err := cs.ListTools(ctx, nil); err != nil || len(tl.Tools) < 2 {
				t.Fatalf("tools/list = %v, %v", tl, err)
			}
			found := call("find_tools", map[string]any{"query": "delete entities from the knowledge graph"})
			if b, _ := json.Marshal(found); !strings.Contains(string(b), "memory/delete_entities") {
				t.Errorf("find_tools = %s, want memory/delete_entities", b)
			}
			entity := "e" + string(rune('0'+i))
			if out := call("call_tool", map[string]any{"name": "memory/create_entities", "arguments": map[string]any{
				"entities": []any{map[string]any{"name": entity, "entityType": "t", "observations": []any{}}}}}); out["success"] != true {
				t.Fatalf("create_entities = %v", out)
			}
			out := call("call_tool", map[string]any{"name": "memory/delete_entities", "arguments": map[string]any{"entityNames": []any{entity}}})
			if out["success"] != true || self != http.StatusForbidden || ops != http.StatusOK {
				t.Errorf("approved delete_entities = %v (grant by the requester %d, by ops %d), want success, 403, 200\n%s", out, self, ops, logs.String())
			}
		})
	}
	if key, err := os.ReadFile(filepath.Join(data, stateKeyFile)); err != nil || len(key) != 32 {
		t.Errorf("request-state key in --data: %d bytes, %v; want 32", len(key), err)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestMCPApprovers: who can grant a held call, by how mcp serve runs: an
// operator with --data; over HTTP with --tokens, another principal of the
// requester's tenant holding approvals:grant; with OAuth, the issuer's
// approvers; over stdio without --data, no one.
func TestMCPApprovers(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	if err := os.WriteFile(tokens, []byte(`{"tokens":{"a":{"principal":"alice","tenant":"acme"},`+
		`"o":{"principal":"ops","tenant":"acme","scopes":["approvals:grant"]},"b":{"principal":"bob","tenant":"beta"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	alice, ops, bob := tools.Principal{ID: "alice", Tenant: "acme"}, tools.Principal{ID: "ops", Tenant: "acme"}, tools.Principal{ID: "bob", Tenant: "beta"}
	for _, tc := range []struct {
		name              string
		http, data, oauth bool
		tokens            string
		requester         tools.Principal
		want              bool
	}{
		{"stdio without --data", false, false, false, "", alice, false},
		{"stdio with --data", false, true, false, "", alice, true},
		{"tokens: another principal approves", true, false, false, tokens, alice, true},
		{"tokens: the approver's own call", true, false, false, tokens, ops, false},
		{"tokens: no approver in the tenant", true, false, false, tokens, bob, false},
		{"tokens with --data", true, true, false, tokens, bob, true},
		{"oauth", true, false, true, "", bob, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			has, err := approvers(tc.http, tc.data, tc.tokens, tc.oauth)
			if err != nil {
				t.Fatal(err)
			}
			if got := has(t.Context(), tc.requester); got != tc.want {
				t.Errorf("approver for %s = %v, want %v", tc.requester.ID, got, tc.want)
			}
		})
	}
}

// TestMCPServeStdioNoApprover: over stdio without --data no one can grant
// a held call (the store is in memory, so toolgate mcp approve cannot
// reach it): the irreversible call is refused at once, saying so, and
// names no approval; with --data it is held for an approval.
func TestMCPServeStdioNoApprover(t *testing.T) {
	memory := memoryServer(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(config, []byte(`{"servers":{"memory":{"command":["node",`+jsonString(memory)+`],`+
		`"env":{"MEMORY_FILE_PATH":`+jsonString(filepath.Join(dir, "memory.jsonl"))+`},`+
		`"tools":{"delete_entities":{"irreversible":true}}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []string
		want string // in the refusal
	}{
		{"in memory", nil, `"code":"NO_APPROVER"`},
		{"with --data", []string{"--data", filepath.Join(dir, "data")}, `"approval_id":"apr_`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			srv := startStdioServe(ctx, append([]string{"--mcp-config", config, "--principal", "u1", "--tenant", "acme"}, tc.data...)...)
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "go-test", Version: "1"}, nil).Connect(ctx, &sdk.IOTransport{Reader: srv.out, Writer: srv.in}, nil)
			if err != nil {
				t.Fatalf("connect: %v (stderr %q)", err, srv.stderr.String())
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{
				"name": "memory/delete_entities", "arguments": map[string]any{"entityNames": []any{"x"}}}})
			if err != nil {
				t.Fatal(err)
			}
			if text := res.Content[0].(*sdk.TextContent).Text; !res.IsError || !strings.Contains(text, "CONFIRMATION_REQUIRED") || !strings.Contains(text, tc.want) {
				t.Errorf("held call = %s, want CONFIRMATION_REQUIRED with %s", text, tc.want)
			}
			cs.Close()
			srv.close(ctx, t)
		})
	}
}
