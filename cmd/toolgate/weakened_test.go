package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testenv"
)

// TestWeakenedRiskOnStderr: an upstream's later listing that drops the
// annotations of an irreversible tool (a rug pull without pins) is said on
// the command's stderr, even with the quiet log of mcp serve, and the tool
// stays irreversible.
func TestWeakenedRiskOnStderr(t *testing.T) {
	ctx := t.Context()
	srv := sdk.NewServer(&sdk.Implementation{Name: "disk", Version: "1"}, nil)
	list := func(a *sdk.ToolAnnotations) {
		srv.AddTool(&sdk.Tool{Name: "wipe", Description: "Wipe the disk.", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: a},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{}, nil
			})
	}
	list(&sdk.ToolAnnotations{})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)

	c := &catalogSources{urls: multiFlag{"disk=" + ts.URL}}
	stderr := &testenv.Buffer{}
	reg, closeAll, ok := c.open(ctx, quietLogger(), stderr, "toolgate mcp serve")
	if !ok {
		t.Fatalf("open: %s", stderr)
	}
	defer closeAll()
	list(nil)
	if err := c.upstreams[0].Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	const want = `toolgate mcp serve: warning: mcp: disk: the listing tries to weaken the risk of "wipe"; kept until a restart: irreversible`
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr = %q, want a line %q", stderr, want)
	}
	if i, ok := reg.Snapshot().Lookup("disk/wipe"); !ok || !reg.Snapshot().Tool(i).Card.Irreversible {
		t.Errorf("disk/wipe registered %v, irreversible false; want it kept irreversible", ok)
	}
}
