package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/mcp"
)

// outputServerEnv makes the test binary, run by [TestResultBreaksOutputSchema],
// a stdio MCP server of [outputServer]'s tools.
const outputServerEnv = "TOOLGATE_TEST_OUTPUT_SERVER"

// outputServer is a server whose tools all declare the outputSchema
// {"count": integer, required} and answer: conforms with {"count": 3};
// wrong_type with {"count": "three"}; unstructured with text content
// only; failed with a tool error (isError), which no schema governs. The
// outputSchema of bad_schema is no valid JSON Schema.
func outputServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "output", Version: "1"}, nil)
	results := map[string]*sdk.CallToolResult{
		"conforms":     {StructuredContent: map[string]any{"count": 3}},
		"wrong_type":   {StructuredContent: map[string]any{"count": "three"}},
		"unstructured": {Content: []sdk.Content{&sdk.TextContent{Text: "3"}}},
		"failed":       {IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "no count today"}}},
	}
	for name, res := range results {
		srv.AddTool(&sdk.Tool{
			Name:         name,
			Description:  "Count things. Used by tests.",
			InputSchema:  json.RawMessage(`{"type":"object"}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`),
		}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return res, nil })
	}
	srv.AddTool(&sdk.Tool{Name: "bad_schema", InputSchema: json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"integer","minimum":"none"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return results["conforms"], nil
		})
	return srv
}

// TestResultBreaksOutputSchema: a result (not a tool error) whose
// structuredContent breaks the outputSchema its tool declares, or that has
// none, is no success: the handler returns a *tools.DomainError with Code
// [mcp.CodeInvalidOutput] naming the tool and the violation's JSON
// pointer (the gateway records it, and replays it on retry, as any domain
// error), not the content; a conforming result and a tool error are
// passed on as before. Over streamable HTTP and stdio. Before, every
// result was handed on as a success.
func TestResultBreaksOutputSchema(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv := outputServer()
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()
	transports := []struct {
		name string
		cfg  mcp.Server
	}{
		{"streamable HTTP", mcp.Server{Name: "out", URL: ts.URL}},
		{"stdio", mcp.Server{Name: "out", Command: []string{exe}, Env: map[string]string{outputServerEnv: "1"}}},
	}
	calls := []struct {
		name, tool string
		result     string // the result passed on, when it is
		code       string // the domain error's code, when it is one
		message    string // in the domain error's message
	}{
		{"conforms", "conforms", `{"count":3}`, "", ""},
		{"breaks the schema", "wrong_type", "", mcp.CodeInvalidOutput,
			"mcp: out/wrong_type ran, but its result breaks the tool's outputSchema at /count: "},
		{"no structuredContent", "unstructured", "", mcp.CodeInvalidOutput,
			"mcp: out/unstructured ran, but its result has no structuredContent although the tool declares an outputSchema"},
		{"tool error", "failed", "", "TOOL_ERROR", "no count today"},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx := testContext(t)
			reg := tools.NewRegistry()
			up := connect(t, ctx, reg, tr.cfg)
			const left = `mcp: out: tool left out: "bad_schema": outputSchema: `
			if rej := up.Status().Rejected; len(rej) != 1 || !strings.HasPrefix(rej[0].Error(), left) {
				t.Errorf("Status().Rejected = %v, want [%s...]: a schema no result can be checked against", rej, left)
			}
			for _, tc := range calls {
				t.Run(tc.name, func(t *testing.T) {
					got, err := call(t, ctx, reg, "out/"+tc.tool, map[string]any{})
					if tc.code == "" {
						if err != nil || string(got) != tc.result {
							t.Fatalf("call %s = %s, %v; want %s", tc.tool, got, err, tc.result)
						}
						return
					}
					var de *tools.DomainError
					if !errors.As(err, &de) || de.Code != tc.code || !strings.Contains(de.Message, tc.message) {
						t.Fatalf("call %s = %s, %v; want a domain error %s saying %q", tc.tool, got, err, tc.code, tc.message)
					}
					if strings.Contains(de.Message, "three") {
						t.Errorf("message %q quotes the result's content", de.Message)
					}
				})
			}
		})
	}
}
