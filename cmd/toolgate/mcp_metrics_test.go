package main

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testenv"
)

// TestMCPServeMetrics: "mcp serve --http" serves GET /metrics on its
// listener without a token, and it counts what the server did: the open
// sessions and the one refused past --max-sessions-per-principal, a
// find_tools query, a call through the gateway, and the Go collectors.
// The refusal is logged with the principal, never the token.
func TestMCPServeMetrics(t *testing.T) {
	// Sessions are of the revisions before 2026-07-28.
	sessionRevision := &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	memory := memoryServer(t)
	tokens := aliceTokens(t, t.TempDir(), "tok-alice")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	base, stderr := mcpServeHTTP(t, ctx, "-v", "--mcp", "memory=node "+memory, "--tokens", tokens, "--max-sessions-per-principal", "2")

	hc := bearerClient("tok-alice")
	var sessions []*sdk.ClientSession
	for range 2 {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "metrics-test", Version: "1"}, nil).
			Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/", HTTPClient: hc}, sessionRevision)
		if err != nil {
			t.Fatalf("connect: %v\n%s", err, stderr)
		}
		sessions = append(sessions, cs)
	}
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	if _, err := sdk.NewClient(&sdk.Implementation{Name: "metrics-test", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/", HTTPClient: hc}, sessionRevision); err == nil {
		t.Fatal("a 3rd session with --max-sessions-per-principal 2 connected, want 429")
	}
	cs := sessions[0]
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "remember a new entity in the knowledge graph"}}); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{
		"name": "memory/create_entities", "arguments": map[string]any{"entities": []any{
			map[string]any{"name": "Ada", "entityType": "person", "observations": []string{"first programmer"}}}}}})
	if err != nil || res.IsError {
		t.Fatalf("call_tool memory/create_entities = %v, %v", res, err)
	}

	resp, body := testenv.Get(t, base+"/metrics") // no token
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d %q, want 200", resp.StatusCode, body)
	}
	for _, c := range []struct {
		series string
		want   float64
	}{
		{`toolgate_mcp_sessions`, 2},
		{`toolgate_mcp_session_refusals_total{reason="per_principal"}`, 1},
		{`toolgate_mcp_session_refusals_total{reason="total"}`, 0},
		{`toolgate_discovery_queries_total`, 1},
		{`toolgate_gateway_calls_total{outcome="ok",tool="memory/create_entities"}`, 1},
		{`go_goroutines`, -1}, // present, any value
	} {
		t.Run(c.series, func(t *testing.T) {
			got, ok := seriesValue(string(body), c.series)
			switch {
			case !ok:
				t.Errorf("GET /metrics has no %s", c.series)
			case c.want >= 0 && got != c.want:
				t.Errorf("GET /metrics: %s = %v, want %v", c.series, got, c.want)
			}
		})
	}
	if logs := stderr.String(); !strings.Contains(logs, "mcpserver: session refused") || !strings.Contains(logs, "principal=alice") {
		t.Errorf("log = %q, want the refusal with principal=alice", logs)
	} else if strings.Contains(logs, "tok-alice") {
		t.Errorf("the log holds the bearer token")
	}
}

// seriesValue finds series (its name and labels as the text exposition
// writes them) in body and returns its value.
func seriesValue(body, series string) (float64, bool) {
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}
