package mcp_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/mcp"
)

// badResultServerEnv makes the test binary, run by
// [TestUndecodableResultRan], a stdio MCP server written by hand that
// lists resultListing and answers every tools/call with the result the
// variable holds.
const badResultServerEnv = "TOOLGATE_TEST_BAD_RESULT_SERVER"

// resultListing is the listing of the servers of [TestUndecodableResultRan].
const resultListing = `{"tools":[{"name":"act","inputSchema":{"type":"object"}}]}`

// serveBadResult is the server of [badResultServerEnv].
func serveBadResult() error {
	result := os.Getenv(badResultServerEnv)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req rpcRequest
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return err
		}
		if len(req.ID) > 0 {
			fmt.Println(req.answer(resultListing, result))
		}
	}
	return in.Err()
}

// TestUndecodableResultRan: a server that answers a tools/call with a
// result that is no valid MCP CallToolResult (content not an array, a
// content block of an unknown type, a number) has run the tool: it
// answered. The call is a domain error with code [mcp.CodeInvalidOutput]
// that says what is wrong in MCP's terms, so the gateway records it and a
// retry gets it again; before, the SDK's decoding error made the outcome
// unknown and every retry ran the tool again under the default policy.
func TestUndecodableResultRan(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	results := []struct {
		name, result, says string
	}{
		{"content not an array", `{"content":"three"}`, "content: a JSON string, where MCP wants an array"},
		{"unknown content type", `{"content":[{"type":"bogus","text":"three"}]}`, `unrecognized content type "bogus"`},
		{"not an object", `42`, "a JSON number, where MCP wants an object"},
		{"isError not a boolean", `{"content":[],"isError":"yes"}`, "isError: a JSON string, where MCP wants true or false"},
	}
	for _, tc := range results {
		transports := []struct {
			name string
			cfg  mcp.Server
		}{
			{"stdio", mcp.Server{Name: "odd", Command: []string{exe}, Env: map[string]string{badResultServerEnv: tc.result}}},
			{"streamable HTTP", mcp.Server{Name: "odd", URL: wireServer(t, false, resultListing, tc.result)}},
			{"streamable HTTP events", mcp.Server{Name: "odd", URL: wireServer(t, true, resultListing, tc.result)}},
		}
		for _, tr := range transports {
			t.Run(tc.name+"/"+tr.name, func(t *testing.T) {
				ctx := testContext(t)
				reg := tools.NewRegistry()
				up := connect(t, ctx, reg, tr.cfg)
				got, err := call(t, ctx, reg, "odd/act", map[string]any{})
				var de *tools.DomainError
				if !errors.As(err, &de) || de.Code != mcp.CodeInvalidOutput {
					t.Fatalf("call of a tool whose result is no valid MCP = %s, %v; want a domain error %s", got, err, mcp.CodeInvalidOutput)
				}
				want := "mcp: odd/act ran, but its result is no valid MCP tool result (" + tc.says + "), so it is not passed on"
				if de.Message != want {
					t.Errorf("message = %q, want %q", de.Message, want)
				}
				if strings.Contains(de.Message, "Go ") || strings.Contains(de.Message, "three") {
					t.Errorf("message %q names the decoder's Go types or quotes the result", de.Message)
				}
				if !up.Status().Connected {
					t.Error("the upstream is no longer connected after answering a result it could not decode")
				}
			})
		}
	}
}
