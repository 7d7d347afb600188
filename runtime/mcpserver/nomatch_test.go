package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/runtime/mcpserver"
	"github.com/toolgate/toolgate/tools/discovery/findtools"
)

// TestFindToolsMatchingNothing: a find_tools search whose words match no
// tool answers an empty list (not an error) with the note that tells the
// model to rephrase.
func TestFindToolsMatchingNothing(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs := serveStdio(t, ctx, f.reg, f.disc, f.gw, &mcpserver.Options{Principal: tokens["teller-token"], Logger: quiet})
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "😀😀 the of and"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	var got struct {
		Tools []json.RawMessage `json:"tools"`
		Note  string            `json:"note"`
	}
	if res.IsError || json.Unmarshal([]byte(text), &got) != nil || got.Tools == nil || len(got.Tools) != 0 || got.Note != findtools.NoMatchNote {
		t.Errorf("find_tools = %s (error %v), want {\"tools\":[],\"note\":%q}", text, res.IsError, findtools.NoMatchNote)
	}
}
