package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPServeGoneToolReplays: through "toolgate mcp serve" over a real
// upstream, a call re-sent with its step after the upstream dropped the
// tool from its listing (list_changed) gets the call's recorded outcome,
// "cached": true, where it got UNKNOWN_TOOL, which tells the client that
// nothing ran although the tool had.
func TestMCPServeGoneToolReplays(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	up := newEchoUpstream(t, "dropped", "other")
	srv := startStdioServe(ctx, "--mcp-url", "web="+up.url, "--principal", "u1", "--tenant", "acme")
	client := sdk.NewClient(&sdk.Implementation{Name: "go-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: srv.out, Writer: srv.in}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr %q)", err, srv.stderr.String())
	}
	call := func(step int) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool",
			Arguments: map[string]any{"name": "web/dropped", "step": step, "arguments": map[string]any{"text": "hi"}}})
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if first := call(1); first["success"] != true || first["cached"] != false {
		t.Fatalf("call_tool web/dropped = %v, want a fresh result", first)
	}
	up.srv.RemoveTools("dropped") // the upstream sends notifications/tools/list_changed
	// Each new step is a new call: it runs until mcp serve has re-listed.
	for step := 2; call(step)["error_type"] != "UNKNOWN_TOOL"; step++ {
		if ctx.Err() != nil {
			t.Fatal("web/dropped still callable after the upstream dropped it")
		}
	}
	if again := call(1); again["success"] != true || again["cached"] != true {
		t.Errorf("call_tool web/dropped re-sent at step 1 after the tool went = %v, want its result, cached", again)
	}
	srv.close(ctx, t)
}
