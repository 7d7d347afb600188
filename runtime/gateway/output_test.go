package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools/mcp"
)

// TestUpstreamResultBreaksOutputSchema: an MCP tool that ran and answered
// a result breaking its own outputSchema is no success: the caller gets a
// DOMAIN_ERROR, not retryable, Code INVALID_OUTPUT, naming the tool and the
// violation's pointer; it is recorded, so a retry with the same key gets
// the same refusal (Cached) and the tool does not run again; and it is
// audited as the domain error it is. Before, the gateway recorded and
// returned the broken result as a success.
func TestUpstreamResultBreaksOutputSchema(t *testing.T) {
	var runs atomic.Int32
	srv := sdk.NewServer(&sdk.Implementation{Name: "count", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "count_things", Description: "Count things. Used by tests.",
		InputSchema:  json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`),
	}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		runs.Add(1)
		return &sdk.CallToolResult{StructuredContent: map[string]any{"count": "three"}}, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()

	e := newEnv(t, nil)
	up, err := mcp.Connect(ctx, e.Registry, mcp.Server{Name: "count", URL: ts.URL}, &mcp.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	call := gateway.Call{Principal: alice, SessionID: "s", Step: 1, Tool: "count/count_things", Arguments: json.RawMessage(`{}`)}
	check := func(what string, cached bool) {
		t.Helper()
		_, err := e.Gateway.Execute(ctx, call)
		ge := wantType(t, what, err, gateway.DomainErrorType)
		if ge.Code != mcp.CodeInvalidOutput || ge.Retryable || ge.Cached != cached ||
			!strings.Contains(ge.Message, "count/count_things") || !strings.Contains(ge.Message, "at /count") ||
			strings.Contains(ge.Message, "three") {
			t.Errorf("%s = %+v; want DOMAIN_ERROR %s, not retryable, cached %v, naming the tool and /count, not the content",
				what, ge, mcp.CodeInvalidOutput, cached)
		}
	}
	check("the call", false)
	check("its retry", true)
	if n := runs.Load(); n != 1 {
		t.Errorf("the upstream tool ran %d times, want once: the retry replays the recorded refusal", n)
	}
	entries, err := e.Store.QueryAudit(ctx, store.AuditQuery{Tool: "count/count_things"})
	if err != nil || len(entries) != 2 || entries[0].Outcome != store.OutcomeDomainError || entries[1].Outcome != store.OutcomeReplayed {
		t.Errorf("audit = %+v, %v; want a domain_error entry, then a replayed one", entries, err)
	}
}
