package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeUnconnected runs `toolgate serve` over a catalog file alone:
// its tools have no server, so /v1/discover does not offer them unless
// --offer-unconnected says the file is for discovery, and a call of one
// by ID is refused UNKNOWN_TOOL with the stable code SERVER_NOT_CONNECTED.
func TestServeUnconnected(t *testing.T) {
	github := githubCatalog(t)
	dir := t.TempDir()
	tokens := aliceTokens(t, dir, "tok-alice")
	bin := buildToolgate(t)
	const query = `{"query":"list the open issues of a github repository","k":5}`
	const call = `{"session_id":"s1","step":1,"tool":"github/list_issues","arguments":{"owner":"acme","repo":"app"}}`
	for _, tc := range []struct {
		name  string
		offer bool
	}{{"default", false}, {"offer-unconnected", true}} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--tokens", tokens, "--data", filepath.Join(dir, tc.name), "--tools", github}
			if tc.offer {
				args = append(args, "--offer-unconnected")
			}
			p := startServe(t, bin, args...)
			code, body := p.post(t, "tok-alice", "/v1/discover", query)
			cands, _ := body["candidates"].([]any)
			switch {
			case code != 200:
				t.Errorf("discover = %d %v, want 200", code, body)
			case tc.offer && len(cands) == 0:
				t.Errorf("discover with --offer-unconnected = %v, want the catalog's tools", body)
			case !tc.offer && (len(cands) != 0 || body["authorized"] != 0.0):
				t.Errorf("discover = %v, want no candidates: no catalog tool can run", body)
			}
			code, refused := p.post(t, "tok-alice", "/v1/tools/call", call)
			if code != 404 || refused["error_type"] != "UNKNOWN_TOOL" || refused["code"] != "SERVER_NOT_CONNECTED" ||
				refused["retryable"] != false || !strings.Contains(refused["message"].(string), "no server") {
				t.Errorf("a call of a catalog-only tool = %d %v, want 404 UNKNOWN_TOOL code SERVER_NOT_CONNECTED, not retryable", code, refused)
			}
			if code := p.stop(t); code != 0 {
				t.Errorf("serve exited %d after SIGTERM, want 0", code)
			}
		})
	}
}

// TestMCPServeUnconnected drives "toolgate mcp serve" over a catalog file
// alone with the Go SDK client: find_tools neither returns nor lists
// first-class a tool no server can run, unless --offer-unconnected; a
// call_tool of one by ID says SERVER_NOT_CONNECTED.
func TestMCPServeUnconnected(t *testing.T) {
	github := githubCatalog(t)
	for _, tc := range []struct {
		name  string
		offer bool
	}{{"default", false}, {"offer-unconnected", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			args := []string{"--tools", github, "--principal", "u1", "--tenant", "acme"}
			if tc.offer {
				args = append(args, "--offer-unconnected")
			}
			srv := startStdioServe(ctx, args...)
			client := sdk.NewClient(&sdk.Implementation{Name: "go-test", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: srv.out, Writer: srv.in}, nil)
			if err != nil {
				t.Fatalf("connect: %v (stderr %q)", err, srv.stderr.String())
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "list the open issues of a github repository"}})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*sdk.TextContent).Text
			if found := strings.Contains(text, "github/list_issues"); found != tc.offer {
				t.Errorf("find_tools = %s; github/list_issues offered = %v, want %v", text, found, tc.offer)
			}
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if firstClass := len(list.Tools) > 2; firstClass != tc.offer {
				t.Errorf("the client lists %d tools; catalog tools listed first-class = %v, want %v", len(list.Tools), firstClass, tc.offer)
			}
			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "github/list_issues", "arguments": map[string]any{"owner": "acme", "repo": "app"}}})
			if err != nil {
				t.Fatal(err)
			}
			if text := res.Content[0].(*sdk.TextContent).Text; !res.IsError || !strings.Contains(text, `"code":"SERVER_NOT_CONNECTED"`) {
				t.Errorf("call_tool of a catalog-only tool = %s, want an error with code SERVER_NOT_CONNECTED", text)
			}
			cs.Close()
			srv.close(ctx, t)
		})
	}
}
